package api_test

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestConnectionsAPI: a Jira connection made with an e-mail and API token
// is listed without its secret, is its owner's alone, refuses bad input
// with 400 and nothing stored, and is revoked; an OAuth start for a
// provider without a client registration and a forged callback are refused.
func TestConnectionsAPI(t *testing.T) {
	ts := server(t)
	const token = "ATATT3xFfGF0-secret-api-token"
	body := `{"provider":"jira","label":"work","auth":"basic","baseUrl":"https://acme.atlassian.net","account":"alice@acme.example","token":"` + token + `"}`
	status, _, raw := do(t, ts.base, call{"POST", "/connections", ts.alice, "application/json", strings.NewReader(body)})
	if status != 201 || strings.Contains(string(raw), token) {
		t.Fatalf("create: %d %s", status, raw)
	}
	var c struct{ ID, Provider, Auth, BaseURL string }
	if err := json.Unmarshal(raw, &c); err != nil || c.ID == "" || c.Auth != "basic" {
		t.Fatalf("created %s", raw)
	}
	status, _, raw = do(t, ts.base, call{"GET", "/connections", ts.alice, "", nil})
	if status != 200 || !strings.Contains(string(raw), c.ID) || strings.Contains(string(raw), token) {
		t.Fatalf("list: %d %s", status, raw)
	}
	if status, _, raw = do(t, ts.base, call{"GET", "/connections", ts.bob, "", nil}); status != 200 || string(raw) != "[]" {
		t.Fatalf("bob lists: %d %s", status, raw)
	}
	for name, b := range map[string]string{
		"no base URL":   `{"provider":"jira","label":"x","auth":"basic","account":"a@b","token":"t"}`,
		"unknown field": `{"provider":"jira","label":"x","auth":"basic","account":"a@b","token":"t","password":"p"}`,
		"duplicate":     body,
		"oauth by hand": `{"provider":"jira","label":"y","auth":"oauth2","token":"t"}`,
	} {
		if status, _, raw := do(t, ts.base, call{"POST", "/connections", ts.alice, "application/json", strings.NewReader(b)}); status != 400 && status != 409 {
			t.Errorf("%s: %d %s", name, status, raw)
		}
	}
	if status, _, raw = do(t, ts.base, call{"GET", "/connections/providers", ts.alice, "", nil}); status != 200 ||
		string(raw) != `[{"name":"ftp","auth":["basic"],"needsBaseUrl":true,"fileServer":true},{"name":"jira","auth":["token","basic"],"needsBaseUrl":true}]` {
		t.Fatalf("providers: %d %s", status, raw)
	}
	if status, _, raw = do(t, ts.base, call{"POST", "/connections/authorize", ts.alice, "application/json", strings.NewReader(`{"provider":"jira"}`)}); status != 400 {
		t.Fatalf("OAuth for a token provider: %d %s", status, raw)
	}
	if status, _, raw = do(t, ts.base, call{"GET", "/connections/callback?state=forged&code=x", ts.alice, "", nil}); status != 404 {
		t.Fatalf("forged callback: %d %s", status, raw)
	}
	if status, _, _ = do(t, ts.base, call{"DELETE", "/connections/" + c.ID, ts.bob, "", nil}); status != 404 {
		t.Fatalf("bob revokes alice's connection: %d", status)
	}
	if status, _, _ = do(t, ts.base, call{"DELETE", "/connections/" + c.ID, ts.alice, "", nil}); status != 204 {
		t.Fatalf("revoke: %d", status)
	}
	_, _, raw = do(t, ts.base, call{"GET", "/connections", ts.alice, "", nil})
	var l []struct{ Revoked bool }
	if err := json.Unmarshal(raw, &l); err != nil || len(l) != 1 || !l[0].Revoked {
		t.Fatalf("after revoke: %s", raw)
	}
}

// TestFileServerConnectionAPI: an SFTP connection needs its server's host
// key fingerprint (400 without, nothing stored); with it, it is created
// and listed with its URL, never the password.
func TestFileServerConnectionAPI(t *testing.T) {
	ts := server(t)
	const password = "sftp-Passw0rd-secret"
	const pin = "SHA256:uNiVztksCsDhcc0u9e8BujQXVUpKZIDTMczCvj3tD2s"
	base := `{"provider":"ftp","label":"nas","auth":"basic","baseUrl":"sftp://files.example.org:22/srv/shared","account":"alice","token":"` + password + `"`
	if status, _, raw := do(t, ts.base, call{"POST", "/connections", ts.alice, "application/json", strings.NewReader(base + `}`)}); status != 400 || !strings.Contains(string(raw), "hostKey") {
		t.Fatalf("without a host key: %d %s", status, raw)
	}
	status, _, raw := do(t, ts.base, call{"POST", "/connections", ts.alice, "application/json", strings.NewReader(base + `,"hostKey":"` + pin + `"}`)})
	if status != 201 || strings.Contains(string(raw), password) || !strings.Contains(string(raw), "sftp://files.example.org:22/srv/shared") {
		t.Fatalf("create: %d %s", status, raw)
	}
	if _, _, raw = do(t, ts.base, call{"GET", "/connections", ts.alice, "", nil}); strings.Count(string(raw), `"provider":"ftp"`) != 1 || strings.Contains(string(raw), password) {
		t.Fatalf("list: %s", raw)
	}
}
