package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// run0 runs the CLI with args and returns stdout, stderr and the error.
func run0(t *testing.T, args ...string) (string, string, error) {
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
