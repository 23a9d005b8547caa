package main

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/agenthost/agenthost/host/connections/fakes/oauth"
)

// TestBrowserConnections drives the Connections view in headless Chromium
// against a real serve with connections on (a secret key) and an OAuth
// provider ("acme", the fake authorisation server): a Jira connection
// added with an e-mail and API token is listed and the token is nowhere in
// the page (DOM, fields, storage), then revoked; connecting acme sends the
// browser to the provider and back through the server's callback, and the
// OAuth connection is listed without any token the provider issued; the
// callback's outcomes (?connection=ok, ?connection=error&reason=…) landing
// on the UI's paths show their message (a reason as text, never markup)
// and the list. Screenshots go to bin/ui-artefacts/connections.
func TestBrowserConnections(t *testing.T) {
	e2e := browserPrereqs(t)
	data := filepath.Join(t.TempDir(), "data")
	out, _, err := run0(t, "admin", "bootstrap", "-data", data, "-tenant", "Acme", "-email", "ada@acme.example")
	if err != nil {
		t.Fatal(err)
	}
	ws := regexp.MustCompile(`workspace (\S+)`).FindStringSubmatch(out)
	tok := regexp.MustCompile(`\(shown once, keep it\): (\S+)`).FindStringSubmatch(out)
	if ws == nil || tok == nil {
		t.Fatalf("bootstrap printed %s", out)
	}
	addr, err := freeLoopbackAddr()
	if err != nil {
		t.Fatal(err)
	}
	base := "http://" + addr
	as := oauth.New("ui-client", "ui-client-secret", base+"/api/v1/connections/callback")
	defer as.Close()
	key := make([]byte, 32)
	rand.Read(key)
	for k, v := range map[string]string{
		"AGENTHOST_SECRET_KEY":               base64.StdEncoding.EncodeToString(key),
		"AGENTHOST_OAUTH_PROVIDERS":          "acme,microsoft",
		"AGENTHOST_OAUTH_ACME_CLIENT_ID":     as.ClientID,
		"AGENTHOST_OAUTH_ACME_CLIENT_SECRET": as.ClientSecret,
		"AGENTHOST_OAUTH_ACME_AUTH_URL":      as.AuthURL(),
		"AGENTHOST_OAUTH_ACME_TOKEN_URL":     as.TokenURL(),
		"AGENTHOST_OAUTH_ACME_REDIRECT_URL":  as.RedirectURI,
		"AGENTHOST_OAUTH_ACME_SCOPES":        "read write",
		"AGENTHOST_OAUTH_ACME_BASE_URL":      "https://api.acme.example",
		// Microsoft's authorisation request is only looked at (the
		// service choice's scopes), never completed.
		"AGENTHOST_OAUTH_MICROSOFT_CLIENT_ID":    as.ClientID,
		"AGENTHOST_OAUTH_MICROSOFT_AUTH_URL":     as.AuthURL(),
		"AGENTHOST_OAUTH_MICROSOFT_TOKEN_URL":    as.TokenURL(),
		"AGENTHOST_OAUTH_MICROSOFT_REDIRECT_URL": as.RedirectURI,
	} {
		t.Setenv(k, v)
	}
	server := startChild(t, "serve", "-data", data, "-addr", addr)
	server.waitFor(t, "agenthost listening")
	for i := 0; ; i++ {
		if resp, err := http.Get(base + "/healthz"); err == nil && resp.StatusCode == 200 {
			resp.Body.Close()
			break
		}
		if i > 3000 {
			t.Fatalf("no health:\n%s", server.stderr())
		}
		time.Sleep(10 * time.Millisecond)
	}
	artefacts, _ := filepath.Abs(filepath.Join("..", "..", "bin", "ui-artefacts", "connections"))
	os.RemoveAll(artefacts)
	if err := os.MkdirAll(artefacts, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshots: %s", artefacts)
	secret := make([]byte, 18)
	rand.Read(secret)
	jiraToken := "ATATT-ui-" + base64.RawURLEncoding.EncodeToString(secret)
	w := &uiWorld{base: base, token: tok[1], ws: ws[1], server: server, otherWS: "-", otherWF: "-", otherToken: "-"}
	pages := runNode(t, e2e, "connections.test.mjs", w, artefacts, jiraToken)

	// What the page held at each step is in pages: no secret is in any.
	// (The dumps are there and hold the list: the search is not vacuous.)
	if strings.Count(pages, "\n=== ") < 9 || !strings.Contains(pages, "ada@acme.example") || !strings.Contains(pages, "acme-ui") {
		t.Fatalf("the script dumped no page states:\n%.2000s", pages)
	}
	leaks := append([]string{jiraToken, as.ClientSecret}, as.Issued()...)
	if len(as.Issued()) < 2 {
		t.Fatalf("the provider issued %d tokens: the OAuth round trip did not reach the token endpoint", len(as.Issued()))
	}
	for _, s := range leaks {
		if strings.Contains(pages, s) {
			t.Errorf("a secret (%.12s…) is in the page", s)
		}
	}
	// The server agrees with what the page showed.
	req, _ := http.NewRequest("GET", base+"/api/v1/connections", nil)
	req.Header.Set("Authorization", "Bearer "+tok[1])
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var list []struct {
		Provider, Label, Auth string
		Revoked               bool
	}
	if err := json.NewDecoder(resp.Body).Decode(&list); err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, c := range list {
		got[c.Provider+"/"+c.Label+"/"+c.Auth] = c.Revoked
	}
	if revoked, ok := got["jira/work/basic"]; !ok || !revoked || len(list) != 3 {
		t.Errorf("connections after the run: %+v", list)
	}
	if revoked, ok := got["ftp/files/basic"]; !ok || !revoked {
		t.Errorf("connections after the run: %+v", list)
	}
	if revoked, ok := got["acme/acme-ui/oauth2"]; !ok || revoked {
		t.Errorf("connections after the run: %+v", list)
	}
	noCrash(t, server)
}
