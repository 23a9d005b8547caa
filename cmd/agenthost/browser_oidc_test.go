package main

import (
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/agenthost/agenthost/host/llm/llmtest"
	"github.com/agenthost/agenthost/host/signin/oidctest"
)

// TestBrowserOIDC is the whole path of single sign-on in headless Chromium
// (host/webui/e2e/oidc.test.mjs) against a real OpenID provider running in
// this process (zitadel's pkg/op, host/signin/oidctest) and a serve
// configured for it through its configuration file: an admin invites by
// e-mail through the API (no SMTP: the link is returned), the invited
// person follows the link through the provider's login page, holds a
// conversation with the scripted model, and signing out at the provider
// ends the session here.
func TestBrowserOIDC(t *testing.T) {
	e2e := browserPrereqs(t)
	model := llmtest.New(t, llmtest.WithDefault(llmtest.Decide(script)), llmtest.WithChunkSize(4))
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
	idp := oidctest.New(t, []oidctest.User{{ID: "u-ivy", Username: "ivy", Password: "correct horse", Email: "ivy@acme.example",
		EmailVerified: true, FirstName: "Ivy", LastName: "Invited"}},
		[]oidctest.Client{{ID: "agenthost", Secret: "idp-client-secret", RedirectURIs: []string{base + "/auth/oidc/idp/callback"},
			PostLogoutRedirectURIs: []string{base + "/"}, BackChannelLogoutURI: base + "/auth/oidc/idp/backchannel-logout"}})
	cfg := filepath.Join(t.TempDir(), "agenthost.yaml")
	if err := os.WriteFile(cfg, []byte(`signIn:
  publicURL: `+base+`
  providers:
    - name: idp
      label: Test IdP
      issuer: `+idp.Issuer+`
      clientID: agenthost
      clientSecretEnv: AGENTHOST_TEST_IDP_SECRET
      tenant: Acme
      allowedDomains: [acme.example]
      provisioning: invitation
`), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("AGENTHOST_TEST_IDP_SECRET", "idp-client-secret")
	t.Setenv("AGENTHOST_OPENAI_BASE_URL", model.URL())
	t.Setenv("AGENTHOST_OPENAI_API_KEY", "sk-test")
	t.Setenv("AGENTHOST_MODEL_AGENT", "scripted")
	logs := &syncBuffer{}
	serveInProcess(t, logs, "-data", data, "-addr", addr, "-config", cfg)
	if bytes.Contains([]byte(logs.String()), []byte("idp-client-secret")) {
		t.Fatal("the client secret is in the log")
	}

	body, _ := json.Marshal(map[string]any{"email": "ivy@acme.example", "workspaces": []map[string]string{{"workspaceId": ws[1], "role": "member"}}})
	req, _ := http.NewRequest("POST", base+"/api/v1/invitations", bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+tok[1])
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var invited struct {
		Link   string
		Mailed bool
	}
	json.NewDecoder(resp.Body).Decode(&invited)
	resp.Body.Close()
	if resp.StatusCode != 201 || invited.Link == "" || invited.Mailed {
		t.Fatalf("invitation: %d %+v", resp.StatusCode, invited)
	}

	artefacts, _ := filepath.Abs(filepath.Join("..", "..", "bin", "ui-artefacts"))
	if err := os.MkdirAll(artefacts, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("node", filepath.Join(e2e, "oidc.test.mjs"))
	cmd.Dir = e2e
	cmd.Env = append(os.Environ(), "UI_BASE="+base, "UI_INVITE_URL="+invited.Link, "UI_IDP="+idp.Issuer, "UI_IDP_USER=ivy",
		"UI_IDP_PASSWORD=correct horse", "UI_ARTEFACTS="+artefacts, "UI_CHROMIUM="+chromium)
	nodeOut, err := cmd.CombinedOutput()
	t.Logf("oidc.test.mjs:\n%s", nodeOut)
	if err != nil {
		t.Fatalf("oidc.test.mjs: %v\nserve log tail:\n%s", err, tail(logs.String(), 40))
	}
	if idp.LogoutsDelivered() < 2 {
		t.Fatalf("back-channel logouts delivered: %d", idp.LogoutsDelivered())
	}
}
