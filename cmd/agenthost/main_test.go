package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// run0 runs the CLI with args and returns stdout, stderr and the error.
func run0(t testing.TB, args ...string) (string, string, error) {
	t.Helper()
	var out, errb bytes.Buffer
	err := run(context.Background(), args, &out, &errb)
	return out.String(), errb.String(), err
}

func TestPluginToolchain(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a plugin")
	}
	dir := t.TempDir()
	wasmFile := filepath.Join(dir, "echo.wasm")
	if _, stderr, err := run0(t, "plugin", "build", "../../host/wasm/testdata/plugins/echo", "-o", wasmFile); err != nil {
		t.Fatalf("build: %v\n%s", err, stderr)
	}

	out, _, err := run0(t, "plugin", "call", wasmFile, "echo", `{"text":"hello"}`)
	if err != nil {
		t.Fatalf("call: %v", err)
	}
	var res struct {
		OK   bool   `json:"ok"`
		Text string `json:"text"`
	}
	if json.Unmarshal([]byte(out), &res); !res.OK || res.Text != "hello" {
		t.Fatalf("call printed %s", out)
	}
	if _, _, err := run0(t, "plugin", "call", wasmFile, "echo", `{"text":1}`); err == nil || !strings.Contains(err.Error(), "invalid_arguments") {
		t.Fatalf("call with bad args: %v", err)
	}

	key := filepath.Join(dir, "dev")
	if _, _, err := run0(t, "plugin", "keygen", "-o", key); err != nil {
		t.Fatal(err)
	}
	if info, err := os.Stat(key + ".key"); err != nil || info.Mode().Perm() != 0o600 {
		t.Fatalf("private key file: %v %v", info.Mode(), err)
	}
	out, _, err = run0(t, "plugin", "inspect", wasmFile)
	if err != nil || !strings.Contains(out, "signature  unsigned") || !strings.Contains(out, "echoJSON") {
		t.Fatalf("inspect unsigned: %v\n%s", err, out)
	}
	if _, _, err := run0(t, "plugin", "verify", wasmFile, "-pub", key+".pub"); err == nil || !strings.Contains(err.Error(), "not signed") {
		t.Fatalf("verify unsigned: %v", err)
	}
	if _, _, err := run0(t, "plugin", "sign", wasmFile, "-key", key+".key"); err != nil {
		t.Fatal(err)
	}
	if out, _, err := run0(t, "plugin", "verify", wasmFile, "-pub", key+".pub"); err != nil || !strings.Contains(out, "valid signature") {
		t.Fatalf("verify signed: %v %s", err, out)
	}
	out, _, err = run0(t, "plugin", "inspect", wasmFile, "-trust", key+".pub", "-json")
	if err != nil || !strings.Contains(out, `"status": "valid"`) {
		t.Fatalf("inspect -json: %v\n%s", err, out)
	}
	// Tamper with the file: verification fails loudly.
	b, _ := os.ReadFile(wasmFile)
	b[200] ^= 1
	os.WriteFile(wasmFile, b, 0o644)
	if _, _, err := run0(t, "plugin", "verify", wasmFile, "-pub", key+".pub"); err == nil || !strings.Contains(err.Error(), "tampered") {
		t.Fatalf("verify tampered: %v", err)
	}
}

func TestCLIErrors(t *testing.T) {
	cases := [][]string{
		{"nosuchcommand"},
		{"plugin"},
		{"plugin", "nosuch"},
		{"plugin", "build"},
		{"plugin", "call", "missing.wasm"},
		{"plugin", "inspect", "missing.wasm"},
		{"plugin", "sign", "x.wasm"},
	}
	for _, args := range cases {
		if _, _, err := run0(t, args...); err == nil {
			t.Errorf("%v: no error", args)
		}
	}
}

// TestBadArgumentsOpenNothing: every command that opens storage checks its
// arguments first. A request for help, an unknown subcommand, a bad flag, a
// stray argument, a missing required flag or an unreadable model
// configuration is answered without creating (or migrating) a data
// directory in the working directory.
func TestBadArgumentsOpenNothing(t *testing.T) {
	for _, k := range []string{"AGENTHOST_DATA", "AGENTHOST_DATABASE_URL", "AGENTHOST_CONFIG"} {
		t.Setenv(k, "") // restored after the test
		os.Unsetenv(k)
	}
	for _, c := range []struct {
		args []string
		ok   bool   // true: help, no error
		want string // in the error or the help text
	}{
		{[]string{"admin"}, false, "want bootstrap"},
		{[]string{"admin", "-h"}, true, "usage: agenthost admin"},
		{[]string{"admin", "--help"}, true, "usage: agenthost admin"},
		{[]string{"admin", "help"}, true, "usage: agenthost admin"},
		{[]string{"admin", "bogus"}, false, `unknown subcommand "bogus"`},
		{[]string{"admin", "-data", "elsewhere"}, false, `unknown subcommand "-data"`},
		{[]string{"admin", "user", "-h"}, true, "-tenant"},
		{[]string{"admin", "user", "-nosuch"}, false, "-nosuch"},
		{[]string{"admin", "user", "-tenant", "t", "-email", "e", "stray"}, false, `unexpected argument "stray"`},
		{[]string{"admin", "bootstrap"}, false, "-tenant and -email required"},
		{[]string{"admin", "bootstrap", "-tenant", "Acme"}, false, "-email required"},
		{[]string{"admin", "user", "-email", "e"}, false, "-tenant required"},
		{[]string{"admin", "workspace", "-tenant", "t"}, false, "-name required"},
		{[]string{"admin", "member", "-workspace", "w"}, false, "-user required"},
		{[]string{"admin", "token"}, false, "-user required"},
		{[]string{"admin", "tools", "-set", "core"}, false, "-workspace required"},
		{[]string{"admin", "token", "-user", "u", "-ttl", "forever"}, false, "-ttl"},
		{[]string{"admin", "token", "-user", "u", "-ttl", "-1h"}, false, "negative"},
		{[]string{"admin", "token", "-list"}, false, "-user required"},
		{[]string{"admin", "token", "-revoke", "t", "-user", "u"}, false, "-revoke takes a token id alone"},
		{[]string{"migrate", "-h"}, true, "-database"},
		{[]string{"migrate", "-nosuch"}, false, "-nosuch"},
		{[]string{"migrate", "now"}, false, `unexpected argument "now"`},
		{[]string{"serve", "-h"}, true, "-addr"},
		{[]string{"serve", "-nosuch"}, false, "-nosuch"},
		{[]string{"serve", "8080"}, false, `unexpected argument "8080"`},
		{[]string{"serve", "-config", "missing.yaml"}, false, "missing.yaml"},
		{[]string{"worker", "-h"}, true, "-plugins"},
		{[]string{"worker", "-nosuch"}, false, "-nosuch"},
		{[]string{"worker", "now"}, false, `unexpected argument "now"`},
		{[]string{"worker", "-config", "missing.yaml"}, false, "missing.yaml"},
	} {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			dir := t.TempDir()
			t.Chdir(dir)
			// Cancelled: a command that went on despite its arguments
			// stops at once instead of serving.
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			var out, errb bytes.Buffer
			err := run(ctx, c.args, &out, &errb)
			switch {
			case c.ok && err != nil:
				t.Errorf("error %v, want the usage", err)
			case c.ok && !strings.Contains(out.String()+errb.String(), c.want):
				t.Errorf("usage lacks %q:\n%s%s", c.want, out.String(), errb.String())
			case !c.ok && (err == nil || !strings.Contains(err.Error()+errb.String(), c.want)):
				t.Errorf("error %v (stderr %q), want one naming %q", err, errb.String(), c.want)
			}
			if left, _ := os.ReadDir(dir); len(left) > 0 {
				t.Errorf("the command made %s in the working directory", left[0].Name())
			}
		})
	}
}

// TestUsageListsEveryCommand: the top-level usage names every command and
// every plugin subcommand, and `plugin -h` prints the plugin part.
func TestUsageListsEveryCommand(t *testing.T) {
	var top bytes.Buffer
	if err := run(context.Background(), []string{"-h"}, &top, io.Discard); err != nil {
		t.Fatal(err)
	}
	for name := range commands() {
		if !strings.Contains(top.String(), "\n  "+name+" ") {
			t.Errorf("usage does not list %q:\n%s", name, top.String())
		}
	}
	var plugin bytes.Buffer
	if err := run(context.Background(), []string{"plugin", "-h"}, &plugin, io.Discard); err != nil {
		t.Fatalf("plugin -h: %v", err)
	}
	for name := range pluginCommands() {
		if !regexp.MustCompile(`(?m)^  plugin (\S+\|)*` + name + `[ |]`).MatchString(plugin.String()) {
			t.Errorf("plugin -h does not list %q:\n%s", name, plugin.String())
		}
	}
	if !strings.Contains(top.String(), plugin.String()) {
		t.Error("the top-level usage lacks the plugin subcommands")
	}
}
