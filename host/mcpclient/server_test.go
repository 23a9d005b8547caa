package mcpclient_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/agenthost/agenthost/host/mcpclient"
	"github.com/agenthost/agenthost/host/tenancy"
)

func TestValidate(t *testing.T) {
	stdio := func(cmd ...string) mcpclient.Config {
		return mcpclient.Config{Transport: mcpclient.Stdio, Command: cmd}
	}
	web := func(u string) mcpclient.Config { return mcpclient.Config{Transport: mcpclient.HTTP, URL: u} }
	for _, c := range []struct {
		name string
		cfg  mcpclient.Config
		sec  mcpclient.Secrets
		err  string
	}{
		{"memory", stdio("node", "/srv/memory/index.js"), mcpclient.Secrets{}, ""},
		{"jira", web("https://mcp.example.com/mcp"), mcpclient.Secrets{Headers: map[string]string{"Authorization": "Bearer x"}}, ""},
		{"Bad_Name", stdio("node"), mcpclient.Secrets{}, "name"},
		{"averyveryverylongservername", stdio("node"), mcpclient.Secrets{}, "name"},
		{"x", stdio(), mcpclient.Secrets{}, "command"},
		{"x", stdio("node\x00"), mcpclient.Secrets{}, "NUL"},
		{"x", mcpclient.Config{Transport: mcpclient.Stdio, Command: []string{"node"}, Env: map[string]string{"PATH": "/tmp"}}, mcpclient.Secrets{}, "PATH"},
		{"x", mcpclient.Config{Transport: mcpclient.Stdio, Command: []string{"node"}, Env: map[string]string{"A": "1"}}, mcpclient.Secrets{Env: map[string]string{"A": "2"}}, "not also in env"},
		{"x", stdio("node"), mcpclient.Secrets{Headers: map[string]string{"X": "y"}}, "for http"},
		{"x", web("ftp://host/x"), mcpclient.Secrets{}, "url"},
		{"x", web("https://user:pw@host/x"), mcpclient.Secrets{}, "url"},
		{"x", web("https://host/x"), mcpclient.Secrets{Headers: map[string]string{"Mcp-Session-Id": "1"}}, "transport's own"},
		{"x", web("https://host/x"), mcpclient.Secrets{Headers: map[string]string{"X-Key": "a\r\nInjected: 1"}}, "line breaks"},
		{"x", mcpclient.Config{Transport: "ws"}, mcpclient.Secrets{}, "transport"},
		{"x", stdio("bin/server"), mcpclient.Secrets{}, "absolute path"},
		{"x", mcpclient.Config{Transport: mcpclient.Stdio, Command: []string{"node"}, Env: map[string]string{"NODE_OPTIONS": "--require /tmp/x.js"}}, mcpclient.Secrets{}, "load code"},
		{"x", stdio("node"), mcpclient.Secrets{Env: map[string]string{"LD_PRELOAD": "/tmp/x.so"}}, "load code"},
		{"x", mcpclient.Config{Transport: mcpclient.Stdio, Command: []string{"node"}, TimeoutMs: 3_600_000}, mcpclient.Secrets{}, "timeoutMs"},
		{"x", mcpclient.Config{Transport: mcpclient.Stdio, Command: []string{"node"}, MaxResultBytes: 1 << 30}, mcpclient.Secrets{}, "maxResultBytes"},
	} {
		err := mcpclient.Validate(mcpclient.Server{Name: c.name, Config: c.cfg}, c.sec)
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
