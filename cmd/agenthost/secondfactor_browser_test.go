package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestBrowserSecondFactor drives a passkey as second factor in headless
// Chromium with a virtual authenticator (host/webui/e2e/secondfactor.test.mjs)
// against serve: the setting in People, a token sign-in that registers and
// proves a passkey before the workspace, the next one proving it, cancel.
func TestBrowserSecondFactor(t *testing.T) {
	e2e := browserPrereqs(t)
	data := filepath.Join(t.TempDir(), "data")
	out, _, err := run0(t, "admin", "bootstrap", "-data", data, "-tenant", "Acme", "-email", "ada@acme.example")
	if err != nil {
		t.Fatal(err)
	}
	tok := regexp.MustCompile(`\(shown once, keep it\): (\S+)`).FindStringSubmatch(out)
	if tok == nil {
		t.Fatalf("bootstrap printed %s", out)
	}
	logs := &syncBuffer{}
	// WebAuthn refuses IP addresses as the RP ID: the loopback address is
	// served as localhost.
	base := strings.Replace(serveInProcess(t, logs, "-data", data), "127.0.0.1", "localhost", 1)
	artefacts, _ := filepath.Abs(filepath.Join("..", "..", "bin", "ui-artefacts"))
	if err := os.MkdirAll(artefacts, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("node", filepath.Join(e2e, "secondfactor.test.mjs"))
	cmd.Dir = e2e
	cmd.Env = append(os.Environ(), "UI_BASE="+base, "UI_TOKEN="+tok[1], "UI_EMAIL=ada@acme.example",
		"UI_ARTEFACTS="+artefacts, "UI_CHROMIUM="+chromium)
	b, err := cmd.CombinedOutput()
	t.Logf("secondfactor.test.mjs:\n%s", b)
	if err != nil {
		t.Fatalf("secondfactor.test.mjs: %v\nserver log tail:\n%s", err, tail(logs.String(), 30))
	}
}
