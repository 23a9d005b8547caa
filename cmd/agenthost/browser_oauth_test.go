package main

import (
	"fmt"
	"html"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/agenthost/agenthost/host/connections/fakes/oauth"
)

// TestBrowserOAuthReturn makes an OAuth connection in headless Chromium
// against serve (host/webui/e2e/connect.test.mjs): the consent page is
// another site (localhost, the UI being 127.0.0.1), so the return to the
// callback carries no SameSite=Strict cookie; the callback's same-site
// reload completes the grant and the UI shows the outcome, for a consent
// given and one refused.
func TestBrowserOAuthReturn(t *testing.T) {
	e2e := browserPrereqs(t)
	addr, err := freeLoopbackAddr()
	if err != nil {
		t.Fatal(err)
	}
	root := "http://" + addr
	as := oauth.New("ui-client", "ui-client-secret", root+"/api/v1/connections/callback")
	t.Cleanup(as.Close)
	// The provider's consent page: links back to the redirect URI with a
	// code (allow) or access_denied (deny), as a provider's buttons do.
	consent := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		code := as.Consent("/authorize?" + r.URL.RawQuery)
		if r.URL.Path != "/authorize" || code == "" {
			http.Error(w, "invalid_request", http.StatusBadRequest)
			return
		}
		allow := q.Get("redirect_uri") + "?" + url.Values{"code": {code}, "state": {q.Get("state")}}.Encode()
		deny := q.Get("redirect_uri") + "?" + url.Values{"error": {"access_denied"}, "state": {q.Get("state")}}.Encode()
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, `<!doctype html><title>acme consent</title><p>agenthost asks to read your files.</p><a id="allow" href="%s">Allow</a> <a id="deny" href="%s">Deny</a>`,
			html.EscapeString(allow), html.EscapeString(deny))
	}))
	t.Cleanup(consent.Close)
	cu, _ := url.Parse(consent.URL)
	t.Setenv("AGENTHOST_SECRET_KEY", e2eSecretKey)
	for k, v := range map[string]string{
		"AGENTHOST_OAUTH_PROVIDERS":          "acme",
		"AGENTHOST_OAUTH_ACME_CLIENT_ID":     as.ClientID,
		"AGENTHOST_OAUTH_ACME_CLIENT_SECRET": as.ClientSecret,
		"AGENTHOST_OAUTH_ACME_AUTH_URL":      "http://localhost:" + cu.Port() + "/authorize",
		"AGENTHOST_OAUTH_ACME_TOKEN_URL":     as.TokenURL(),
		"AGENTHOST_OAUTH_ACME_REDIRECT_URL":  as.RedirectURI,
		"AGENTHOST_OAUTH_ACME_SCOPES":        "read",
		"AGENTHOST_OAUTH_ACME_HOSTS":         "api.acme.test",
	} {
		t.Setenv(k, v)
	}
	data := t.TempDir()
	plugins := t.TempDir()
	tc := bootstrapTenant(t, data, plugins, "acme", nil)
	logs := &syncBuffer{}
	if base := hostileServer(t, data, logs, plugins, "-addr", addr); base != root {
		t.Fatalf("serve at %s, want %s", base, root)
	}
	artefacts, _ := filepath.Abs(filepath.Join("..", "..", "bin", "ui-artefacts"))
	if err := os.MkdirAll(artefacts, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("node", filepath.Join(e2e, "connect.test.mjs"))
	cmd.Dir = e2e
	cmd.Env = append(os.Environ(), "UI_BASE="+root, "UI_TOKEN="+tc.token, "UI_ARTEFACTS="+artefacts, "UI_CHROMIUM="+chromium)
	out, err := cmd.CombinedOutput()
	t.Logf("connect.test.mjs:\n%s", out)
	if err != nil {
		t.Fatalf("connect.test.mjs: %v", err)
	}
}
