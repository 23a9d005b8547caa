package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agenthost/agenthost/host/procguard"
	"github.com/agenthost/agenthost/host/server"
)

// TestHideSecrets: serve's secrets are read from a copy of the environment
// and are then gone from the process's own (so that nothing it starts
// inherits them), the key may come from a file, variables the
// configuration file names as holding secrets go too, the rest stays, and
// the process is undumpable.
func TestHideSecrets(t *testing.T) {
	dir := t.TempDir()
	keyFile := filepath.Join(dir, "key")
	if err := os.WriteFile(keyFile, []byte("key-from-file\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	config := filepath.Join(dir, "agenthost.yaml")
	if err := os.WriteFile(config, []byte("sqlQuery:\n  databases:\n    sales:\n      driver: postgres\n      dsnEnv: SALES_DSN\nwebSearch:\n  provider: brave\n  apiKeyEnv: BRAVE_KEY\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	secret := map[string]string{
		"AGENTHOST_SECRET_KEY":                 "k",
		"AGENTHOST_OPENAI_API_KEY":             "sk-1",
		"AGENTHOST_WEBSEARCH_API_KEY":          "ws-1",
		"AGENTHOST_OAUTH_ACME_CLIENT_SECRET":   "cs-1",
		"AGENTHOST_DATABASE_URL":               "postgres://u:pw@db/agenthost",
		"AGENTHOST_METRICS_TOKEN":              "mt-1",
		"AGENTHOST_MISTRAL_API_KEY":            "mk-1",
		"SALES_DSN":                            "postgres://u:pw@sales/x",
		"BRAVE_KEY":                            "bk-1",
		"AGENTHOST_OAUTH_ACME_CLIENT_PASSWORD": "p",
	}
	plain := map[string]string{"AGENTHOST_ADDR": "127.0.0.1:1", "AGENTHOST_MODEL_AGENT": "gpt", "AGENTHOST_OAUTH_ACME_CLIENT_ID": "id", "HOME": "/root"}
	for _, c := range []struct {
		name, keyFile, keyEnv, wantKey, err string
	}{
		{"key in the environment", "", "", "k", ""},
		{"-secret-key-file", keyFile, "", "key-from-file", ""},
		{"AGENTHOST_SECRET_KEY_FILE", "", keyFile, "key-from-file", ""},
		{"both", keyFile, "", "", "not both"},
	} {
		t.Run(c.name, func(t *testing.T) {
			for k, v := range secret {
				t.Setenv(k, v)
			}
			for k, v := range plain {
				t.Setenv(k, v)
			}
			if c.keyFile != "" || c.keyEnv != "" {
				if c.err == "" {
					t.Setenv("AGENTHOST_SECRET_KEY", "")
				}
				t.Setenv(secretKeyFileEnv, c.keyEnv)
			}
			file, err := server.ReadFile(config)
			if err != nil {
				t.Fatal(err)
			}
			env, err := hideSecrets(c.keyFile, file)
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("%v, want %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := env("AGENTHOST_SECRET_KEY"); got != c.wantKey {
				t.Errorf("the key read: %q, want %q", got, c.wantKey)
			}
			for k, v := range secret {
				if got, ok := os.LookupEnv(k); ok && got != "" {
					t.Errorf("%s is still in the process's environment", k)
				}
				if k != "AGENTHOST_SECRET_KEY" && env(k) != v {
					t.Errorf("%s read as %q, want %q", k, env(k), v)
				}
			}
			for k, v := range plain {
				if os.Getenv(k) != v || env(k) != v {
					t.Errorf("%s: %q in the environment, %q read; want %q", k, os.Getenv(k), env(k), v)
				}
			}
			if d, err := procguard.Dumpable(); err != nil || d {
				t.Errorf("the process is still dumpable (%v)", err)
			}
		})
	}
}
