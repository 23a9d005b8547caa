package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/agenthost/agenthost/host/store"
)

// TestBrowserPasskeys drives passkeys in headless Chromium with a virtual
// authenticator (host/webui/e2e/passkeys.test.mjs) against serve: register,
// sign in, a second passkey, revoke one, an invitation's registration, and
// deactivation from the People view.
func TestBrowserPasskeys(t *testing.T) {
	e2e := browserPrereqs(t)
	ctx := context.Background()
	data := filepath.Join(t.TempDir(), "data")
	out, _, err := run0(t, "admin", "bootstrap", "-data", data, "-tenant", "Acme", "-email", "ada@acme.example")
	if err != nil {
		t.Fatal(err)
	}
	tok := regexp.MustCompile(`\(shown once, keep it\): (\S+)`).FindStringSubmatch(out)
	if tok == nil {
		t.Fatalf("bootstrap printed %s", out)
	}
	// The invitation, made in the database before the server starts (its
	// admin route is another change's).
	db, err := store.Open(ctx, store.Config{Dir: data})
	if err != nil {
		t.Fatal(err)
	}
	admin, err := db.Authenticate(ctx, tok[1])
	if err != nil {
		t.Fatal(err)
	}
	_, invitation, err := db.CreateInvitation(ctx, admin, store.NewInvitation{Email: "ivy@acme.example", TTL: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	logs := &syncBuffer{}
	// Passkeys need a host name (WebAuthn refuses IP addresses as the RP
	// ID): the loopback address is served as localhost.
	base := strings.Replace(serveInProcess(t, logs, "-data", data), "127.0.0.1", "localhost", 1)
	artefacts, _ := filepath.Abs(filepath.Join("..", "..", "bin", "ui-artefacts"))
	if err := os.MkdirAll(artefacts, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("node", filepath.Join(e2e, "passkeys.test.mjs"))
	cmd.Dir = e2e
	cmd.Env = append(os.Environ(), "UI_BASE="+base, "UI_TOKEN="+tok[1], "UI_INVITATION="+invitation, "UI_EMAIL=ada@acme.example",
		"UI_INVITED_EMAIL=ivy@acme.example", "UI_ARTEFACTS="+artefacts, "UI_CHROMIUM="+chromium)
	b, err := cmd.CombinedOutput()
	t.Logf("passkeys.test.mjs:\n%s", b)
	if err != nil {
		t.Fatalf("passkeys.test.mjs: %v\nserver log tail:\n%s", err, tail(logs.String(), 30))
	}
}
