package mcpclient_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/agenthost/agenthost/host/mcpclient/mcpconfig"
	"github.com/agenthost/agenthost/host/tenancy"
)

func TestValidate(t *testing.T) {
	stdio := func(cmd ...string) mcpconfig.Config {
		return mcpconfig.Config{Transport: mcpconfig.Stdio, Command: cmd}
	}
	web := func(u string) mcpconfig.Config { return mcpconfig.Config{Transport: mcpconfig.HTTP, URL: u} }
	for _, c := range []struct {
		name string
		cfg  mcpconfig.Config
		sec  mcpconfig.Secrets
		err  string
	}{
		{"memory", stdio("node", "/srv/memory/index.js"), mcpconfig.Secrets{}, ""},
		{"jira", web("https://mcp.example.com/mcp"), mcpconfig.Secrets{Headers: map[string]string{"Authorization": "Bearer x"}}, ""},
		{"Bad_Name", stdio("node"), mcpconfig.Secrets{}, "name"},
		{"averyveryverylongservername", stdio("node"), mcpconfig.Secrets{}, "name"},
		{"x", stdio(), mcpconfig.Secrets{}, "command"},
		{"x", stdio("node\x00"), mcpconfig.Secrets{}, "NUL"},
		{"x", mcpconfig.Config{Transport: mcpconfig.Stdio, Command: []string{"node"}, Env: map[string]string{"PATH": "/tmp"}}, mcpconfig.Secrets{}, "PATH"},
		{"x", mcpconfig.Config{Transport: mcpconfig.Stdio, Command: []string{"node"}, Env: map[string]string{"A": "1"}}, mcpconfig.Secrets{Env: map[string]string{"A": "2"}}, "not also in env"},
		{"x", stdio("node"), mcpconfig.Secrets{Headers: map[string]string{"X": "y"}}, "for http"},
		{"x", web("ftp://host/x"), mcpconfig.Secrets{}, "url"},
		{"x", web("https://user:pw@host/x"), mcpconfig.Secrets{}, "url"},
		{"x", web("https://host/x"), mcpconfig.Secrets{Headers: map[string]string{"Mcp-Session-Id": "1"}}, "transport's own"},
		{"x", web("https://host/x"), mcpconfig.Secrets{Headers: map[string]string{"X-Key": "a\r\nInjected: 1"}}, "line breaks"},
		{"x", mcpconfig.Config{Transport: "ws"}, mcpconfig.Secrets{}, "transport"},
		{"x", stdio("bin/server"), mcpconfig.Secrets{}, "absolute path"},
		{"x", mcpconfig.Config{Transport: mcpconfig.Stdio, Command: []string{"node"}, Env: map[string]string{"NODE_OPTIONS": "--require /tmp/x.js"}}, mcpconfig.Secrets{}, "load code"},
		{"x", stdio("node"), mcpconfig.Secrets{Env: map[string]string{"LD_PRELOAD": "/tmp/x.so"}}, "load code"},
		{"x", mcpconfig.Config{Transport: mcpconfig.Stdio, Command: []string{"node"}, TimeoutMs: 3_600_000}, mcpconfig.Secrets{}, "timeoutMs"},
		{"x", mcpconfig.Config{Transport: mcpconfig.Stdio, Command: []string{"node"}, MaxResultBytes: 1 << 30}, mcpconfig.Secrets{}, "maxResultBytes"},
	} {
		err := mcpconfig.Validate(mcpconfig.Server{Name: c.name, Config: c.cfg}, c.sec)
		if c.err == "" {
			if err != nil {
				t.Errorf("%s %+v: %v", c.name, c.cfg, err)
			}
			continue
		}
		if !errors.Is(err, tenancy.ErrInvalid) || !strings.Contains(err.Error(), c.err) {
			t.Errorf("%s %+v: %v, want ErrInvalid naming %q", c.name, c.cfg, err, c.err)
		}
	}
}
