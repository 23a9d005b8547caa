package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agenthost/agenthost/host/settings"
)

// TestConfigBadValueRefusesStartup sets, one at a time, a value of every
// typed variable serve and worker read that does not parse, and requires
// start-up to be refused naming the variable before the data directory is
// made (the value fell back to its default before: AGENTHOST_COOKIE_SECURE=yes
// ran without Secure cookies).
func TestConfigBadValueRefusesStartup(t *testing.T) {
	bad := map[settings.Kind]string{settings.Bool: "yes", settings.Int: "ten", settings.Duration: "10",
		settings.Size: "1 gigabyte", settings.Money: "0,10"}
	n := 0
	for _, s := range settings.All() {
		v, ok := bad[s.Kind]
		if !ok || s.Env == "" {
			continue
		}
		for _, cmd := range []string{"serve", "worker"} {
			if !readBy(s, cmd) {
				continue
			}
			n++
			t.Run(cmd+"/"+s.Env, func(t *testing.T) {
				t.Setenv(s.Env, v)
				data := filepath.Join(t.TempDir(), "data")
				var out, errOut bytes.Buffer
				err := run(context.Background(), []string{cmd, "-data", data}, &out, &errOut)
				if err == nil || !strings.Contains(err.Error(), s.Env+"=") || !strings.Contains(err.Error(), "refusing to start") {
					t.Fatalf("%s=%q: got %v, want start-up refused naming it", s.Env, v, err)
				}
				if _, err := os.Stat(data); !os.IsNotExist(err) {
					t.Fatalf("the data directory was made (%v)", err)
				}
			})
		}
	}
	if n < 20 {
		t.Fatalf("only %d cases", n)
	}
}

func TestConfigMisspeltSectionRefusesStartup(t *testing.T) {
	path := filepath.Join(t.TempDir(), "agenthost.yaml")
	if err := os.WriteFile(path, []byte("llm: {}\nobjectstorage:\n  bucket: b\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	data := filepath.Join(t.TempDir(), "data")
	err := run(context.Background(), []string{"serve", "-data", data, "-config", path}, &bytes.Buffer{}, &bytes.Buffer{})
	if err == nil || !strings.Contains(err.Error(), "objectstorage (line 2): unknown key") {
		t.Fatalf("got %v, want the misspelt section refused with its line", err)
	}
}

// TestConfigCommand runs agenthost config with a value from each source and
// a secret, and reads its table.
func TestConfigCommand(t *testing.T) {
	path := filepath.Join(t.TempDir(), "agenthost.yaml")
	if err := os.WriteFile(path, []byte("objectStorage:\n  bucket: from-file\n  region: eu\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("AGENTHOST_CONFIG", path)
	t.Setenv("AGENTHOST_S3_REGION", "from-env")
	t.Setenv("AGENTHOST_SECRET_KEY", "c2VjcmV0LXZhbHVlLXRoYXQtbXVzdC1ub3Qtc2hvdw==")
	t.Setenv("AGENTHOST_METRICS_TOKEN", "tok-must-not-show")
	var out, errOut bytes.Buffer
	if err := run(context.Background(), []string{"config", "-addr", "127.0.0.1:9999"}, &out, &errOut); err != nil {
		t.Fatalf("%v\n%s", err, errOut.String())
	}
	rows := map[string][]string{}
	for _, line := range strings.Split(out.String(), "\n") {
		if f := strings.Fields(line); len(f) >= 5 {
			rows[f[1]] = f
		}
	}
	for env, want := range map[string][2]string{
		"AGENTHOST_ADDR":             {"127.0.0.1:9999", "flag"},
		"AGENTHOST_S3_BUCKET":        {"from-file", "file"},
		"AGENTHOST_S3_REGION":        {"from-env", "env"},
		"AGENTHOST_SECRET_KEY":       {"********", "env"},
		"AGENTHOST_METRICS_TOKEN":    {"********", "env"},
		"AGENTHOST_SHUTDOWN_TIMEOUT": {"10s", "default"},
	} {
		r := rows[env]
		if len(r) < 5 || r[3] != want[0] || r[4] != want[1] {
			t.Errorf("%s: row %q, want value %s from %s", env, r, want[0], want[1])
		}
	}
	if s := out.String(); strings.Contains(s, "must-not-show") || strings.Contains(s, "c2VjcmV0") {
		t.Fatalf("a secret was printed:\n%s", s)
	}

	t.Setenv("AGENTHOST_COOKIE_SECURE", "yes")
	err := run(context.Background(), []string{"config"}, &bytes.Buffer{}, &bytes.Buffer{})
	if err == nil || !strings.Contains(err.Error(), `AGENTHOST_COOKIE_SECURE="yes"`) {
		t.Fatalf("config with a bad value: got %v", err)
	}
}

func TestConfigMaxUploadUnits(t *testing.T) {
	for in, want := range map[string]int64{"1GiB": 1 << 30, "1073741824": 1 << 30, "512MB": 512e6} {
		t.Setenv("AGENTHOST_MAX_UPLOAD", in)
		if got := envSize("AGENTHOST_MAX_UPLOAD", 1); got != want {
			t.Errorf("AGENTHOST_MAX_UPLOAD=%s: %d, want %d", in, got, want)
		}
	}
}
