package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/agenthost/agenthost/host/wasm/wasmtest"
)

// adminIn returns a function that runs `agenthost admin ARGS` on the
// embedded database in data and returns its output, failing t on an error.
func adminIn(t *testing.T, data string) func(args ...string) string {
	return func(args ...string) string {
		t.Helper()
		out, stderr, err := run0(t, append(append([]string{"admin"}, args...), "-data", data, "-database=")...)
		if err != nil {
			t.Fatalf("admin %v: %v\n%s", args, err, stderr)
		}
		return out
	}
}

// TestAdminTokens: tokens expire after 90 days unless -ttl says otherwise
// (-ttl 0 never), are listed with their state, and are revoked by id.
func TestAdminTokens(t *testing.T) {
	data := filepath.Join(t.TempDir(), "data")
	admin := adminIn(t, data)
	out := admin("bootstrap", "-tenant", "Acme", "-email", "ada@acme.example")
	user := regexp.MustCompile(`user (\S+)`).FindStringSubmatch(out)
	first := regexp.MustCompile(`token (\S+) \(shown once`).FindStringSubmatch(out)
	exp := regexp.MustCompile(`expires (\S+)`).FindStringSubmatch(out)
	if user == nil || first == nil || exp == nil {
		t.Fatalf("bootstrap printed %s", out)
	}
	// The default lifetime: 90 days from now.
	if at, err := time.Parse(time.RFC3339, exp[1]); err != nil || time.Until(at) < 89*24*time.Hour || time.Until(at) > 91*24*time.Hour {
		t.Fatalf("default expiry %q: %v", exp[1], err)
	}
	out = admin("token", "-user", user[1], "-name", "forever", "-ttl", "0")
	forever := regexp.MustCompile(`token (\S+) \(shown once`).FindStringSubmatch(out)
	if forever == nil || !strings.Contains(out, "never expires") {
		t.Fatalf("-ttl 0 printed %s", out)
	}
	admin("token", "-revoke", first[1])
	list := admin("token", "-list", "-user", user[1])
	lines := map[string]string{}
	for _, l := range strings.Split(strings.TrimSpace(list), "\n")[1:] {
		lines[strings.Fields(l)[0]] = l
	}
	if len(lines) != 2 || !strings.Contains(lines[first[1]], "revoked") || !strings.Contains(lines[forever[1]], "active") ||
		!strings.Contains(lines[forever[1]], "never") {
		t.Fatalf("listing:\n%s", list)
	}
	if _, _, err := run0(t, "admin", "token", "-revoke", first[1], "-data", data, "-database="); err == nil || !strings.Contains(err.Error(), "already revoked") {
		t.Fatalf("revoking twice: %v", err)
	}
}

// TestAdminToolsValidated: a tool set the server does not define and extra
// tools no plugin declares are refused when written, with what is known.
func TestAdminToolsValidated(t *testing.T) {
	dir := t.TempDir()
	data, plugins := filepath.Join(dir, "data"), filepath.Join(dir, "plugins")
	if err := os.MkdirAll(plugins, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(plugins, "echo.wasm"), wasmtest.Module(t, "echo"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, stderr, err := run0(t, "admin", "bootstrap", "-data", data, "-database=", "-tenant", "Acme", "-email", "ada@acme.example")
	if err != nil {
		t.Fatalf("bootstrap: %v\n%s", err, stderr)
	}
	ws := regexp.MustCompile(`workspace (\S+)`).FindStringSubmatch(out)[1]
	for _, c := range []struct {
		args []string
		want string // "" for success
	}{
		{[]string{"-set", "bogus"}, `unknown tool set "bogus"`},
		{[]string{"-set", "core", "-extra", "nosuch,echo", "-plugins", plugins}, "no plugin provides the extra tools nosuch"},
		{[]string{"-set", "core", "-extra", "echo"}, "no plugin provides the extra tools echo"},
		{[]string{"-set", "documentAnalysis", "-extra", "echo", "-plugins", plugins}, ""},
	} {
		args := append([]string{"admin", "tools", "-workspace", ws, "-data", data, "-database="}, c.args...)
		_, _, err := run0(t, args...)
		if (c.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), c.want)) {
			t.Errorf("%v: %v, want %q", c.args, err, c.want)
		}
	}
}

// TestAdminBillingLimits: the operator sets, shows and removes a tenant's
// limits and reads its usage report; malformed amounts and unknown
// dimensions are refused before a data directory is made.
func TestAdminBillingLimits(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	for _, args := range [][]string{
		{"limits", "-tenant", "x", "-credit", "1,50"},
		{"limits", "-tenant", "x", "-monthly", "-3"},
		{"usage", "-tenant", "x", "-by", "colour"},
		{"usage", "-tenant", "x", "-from", "yesterday"},
	} {
		if _, _, err := run0(t, append(append([]string{"admin"}, args...), "-data", data, "-database=")...); err == nil {
			t.Errorf("admin %v accepted", args)
		}
		if _, err := os.Stat(data); err == nil {
			t.Fatalf("admin %v made the data directory before refusing", args)
		}
	}
	admin := adminIn(t, data)
	out := admin("bootstrap", "-tenant", "Acme", "-email", "ada@acme.example")
	tenant := regexp.MustCompile(`tenant (\S+)`).FindStringSubmatch(out)
	if tenant == nil {
		t.Fatalf("bootstrap printed %s", out)
	}
	out = admin("limits", "-tenant", tenant[1], "-credit", "100", "-monthly", "12.5")
	if !strings.Contains(out, "credit   CHF 100.00 (spent CHF 0.00 in total)") || !strings.Contains(out, "monthly  CHF 12.50") {
		t.Fatalf("limits set:\n%s", out)
	}
	out = admin("limits", "-tenant", tenant[1], "-monthly", "none")
	if !strings.Contains(out, "credit   CHF 100.00") || !strings.Contains(out, "monthly  none") {
		t.Fatalf("monthly removed, credit kept:\n%s", out)
	}
	out = admin("limits", "-tenant", tenant[1], "-credit", "0")
	if !strings.Contains(out, "refused  billing: the tenant is over its spending limit: credit exhausted") {
		t.Fatalf("a zero credit refuses calls:\n%s", out)
	}
	if out = admin("usage", "-tenant", tenant[1], "-by", "model", "-csv"); out != "model,calls,promptTokens,completionTokens,cachedTokens,costCHF\n" {
		t.Fatalf("empty usage report:\n%q", out)
	}
	if _, _, err := run0(t, "admin", "limits", "-tenant", "no-such-tenant", "-data", data, "-database="); err == nil || !strings.Contains(err.Error(), "no tenant") {
		t.Fatalf("unknown tenant: %v", err)
	}
}
