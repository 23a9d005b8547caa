package api_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/agenthost/agenthost/host/api"
	"github.com/agenthost/agenthost/host/audit"
	"github.com/agenthost/agenthost/host/passkey/passkeytest"
	"github.com/agenthost/agenthost/host/tenancy"
	"github.com/agenthost/agenthost/host/webui"
)

// sfBrowser is a browser signed in by API token, with the CSRF token the
// page would keep.
type sfBrowser struct {
	*sessionClient
	base string
}

func (b *sfBrowser) call(method, path, body string) (int, string) {
	b.t.Helper()
	hdr := map[string]string{"Origin": b.origin}
	if b.csrf != "" {
		hdr[webui.CSRFHeader] = b.csrf
	}
	resp, out := b.do(method, b.base+path, body, hdr)
	return resp.StatusCode, out
}

func signInByToken(t *testing.T, base, token string) (*sfBrowser, int, string) {
	t.Helper()
	b := &sfBrowser{sessionClient: &sessionClient{t: t, origin: strings.TrimSuffix(base, "/api/v1")}, base: base}
	resp, body := b.do("POST", base+"/session", `{"token":"`+token+`"}`, map[string]string{"Origin": b.origin})
	for _, c := range resp.Cookies() {
		if c.Name == webui.CookieName {
			b.cookie = c
		}
	}
	var r struct {
		CSRF string `json:"csrf"`
	}
	_ = json.Unmarshal([]byte(body), &r)
	b.csrf = r.CSRF
	return b, resp.StatusCode, body
}

// start is a ceremony's start as the API answers it.
type start struct {
	CeremonyID string `json:"ceremonyId"`
	Options    struct {
		Challenge string `json:"challenge"`
		User      struct {
			ID string `json:"id"`
		} `json:"user"`
	} `json:"options"`
}

func (b *sfBrowser) ceremony(path string) start {
	b.t.Helper()
	status, body := b.call("POST", path, "")
	var s start
	if status != 200 || json.Unmarshal([]byte(body), &s) != nil || s.CeremonyID == "" {
		b.t.Fatalf("POST %s: %d %s", path, status, body)
	}
	return s
}

func finish(ceremonyID, name string, credential []byte) string {
	raw, _ := json.Marshal(map[string]any{"ceremonyId": ceremonyID, "name": name, "credential": json.RawMessage(credential)})
	return string(raw)
}

// register makes the pending browser's person a first passkey on the soft
// authenticator.
func (b *sfBrowser) register(auth *passkeytest.Authenticator) *passkeytest.Credential {
	b.t.Helper()
	s := b.ceremony("/session/second-factor/passkeys/options")
	handle, err := base64.RawURLEncoding.DecodeString(s.Options.User.ID)
	if err != nil {
		b.t.Fatal(err)
	}
	resp, c := auth.Create(b.t, s.Options.Challenge, handle)
	if status, body := b.call("POST", "/session/second-factor/passkeys", finish(s.CeremonyID, "laptop", resp)); status != 201 {
		b.t.Fatalf("register on the pending session: %d %s", status, body)
	}
	return c
}

// TestSecondFactorAPI: under a tenant that requires a passkey as second
// factor a token sign-in in the browser is pending: every other route
// answers 401 "second factor required", a person without a passkey
// registers one (only then), their own passkey's assertion completes the
// session, another person's assertion, a replayed answer and a finished
// session are refused; bearer tokens and other tenants are unaffected.
func TestSecondFactorAPI(t *testing.T) {
	ctx := context.Background()
	ts := server(t)
	auth := &passkeytest.Authenticator{Origin: "http://localhost", RPID: "localhost"}
	alice, err := ts.db.Authenticate(ctx, ts.alice)
	if err != nil {
		t.Fatal(err)
	}
	// Tenant B requires the second factor: tenant A's sign-ins are not
	// affected.
	tb, _ := ts.db.CreateTenant(ctx, "Beta")
	root, _ := ts.db.CreateUser(ctx, tenancy.User{TenantID: tb.ID, Email: "root@beta", Admin: true})
	if err := ts.db.SetPasskeySecondFactor(ctx, tenancy.Principal{TenantID: tb.ID, UserID: root.ID, Admin: true}, true); err != nil {
		t.Fatal(err)
	}
	if _, status, body := signInByToken(t, ts.base, ts.alice); status != 201 || !strings.Contains(body, `"workspaces"`) {
		t.Fatalf("tenant A sign-in while tenant B requires a second factor: %d %s", status, body)
	}

	// Only tenant admins change the setting.
	b0, _, _ := signInByToken(t, ts.base, ts.alice)
	if status, body := b0.call("PUT", "/tenant/second-factor", `{"passkeyRequired":true}`); status != 403 {
		t.Fatalf("a member sets the second factor: %d %s", status, body)
	}
	if status, body := b0.call("GET", "/tenant/second-factor", ""); status != 200 || !strings.Contains(body, `"passkeyRequired":false`) {
		t.Fatalf("setting: %d %s", status, body)
	}
	if err := ts.db.SetPasskeySecondFactor(ctx, tenancy.Principal{TenantID: alice.TenantID, UserID: alice.UserID, Admin: true}, true); err != nil {
		t.Fatal(err)
	}

	b, status, body := signInByToken(t, ts.base, ts.alice)
	if status != 201 || !strings.Contains(body, `"secondFactor":"required"`) || strings.Contains(body, "workspaces") {
		t.Fatalf("pending sign-in answers: %d %s", status, body)
	}
	for _, r := range []struct{ method, path string }{
		{"GET", "/session"}, {"GET", "/workspaces"}, {"GET", "/me/passkeys"}, {"POST", "/me/passkeys/options"},
		{"GET", "/me/sessions"}, {"POST", "/session/switch"}, {"GET", "/tenant/second-factor"},
	} {
		if status, body := b.call(r.method, r.path, "{}"); status != 401 || !strings.Contains(body, "second factor is required") {
			t.Errorf("%s %s on a pending session: %d %s", r.method, r.path, status, body)
		}
	}
	// An identity provider's session is pending too; a passkey sign-in's
	// is not.
	_, oidcCookie, err := ts.db.OpenUserSession(ctx, alice.UserID, 3600e9, tenancy.SessionOrigin{Provider: "oidc:corp", Subject: "s"})
	if err != nil {
		t.Fatal(err)
	}
	_, pkCookie, err := ts.db.OpenUserSession(ctx, alice.UserID, 3600e9, tenancy.SessionOrigin{Provider: tenancy.MethodPasskey, Subject: "k"})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, cookie string
		want         int
	}{{"identity provider", oidcCookie, 401}, {"passkey", pkCookie, 200}} {
		o := &sfBrowser{sessionClient: &sessionClient{t: t, origin: b.origin, cookie: &http.Cookie{Name: webui.CookieName, Value: c.cookie}}, base: ts.base}
		if status, body := o.call("GET", "/workspaces", ""); status != c.want {
			t.Errorf("%s session: %d %s", c.name, status, body)
		}
	}
	// A program's bearer token is not a browser sign-in.
	req, _ := http.NewRequest("GET", ts.base+"/workspaces", nil)
	req.Header.Set("Authorization", "Bearer "+ts.alice)
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != 200 {
		t.Fatalf("bearer token under the setting: %v %v", resp, err)
	}

	if status, body := b.call("GET", "/session/second-factor", ""); status != 200 || !strings.Contains(body, `"next":"register"`) {
		t.Fatalf("state without a passkey: %d %s", status, body)
	}
	if status, body := b.call("POST", "/session/second-factor/options", ""); status != 400 {
		t.Fatalf("assertion without a passkey: %d %s", status, body)
	}
	aliceKey := b.register(auth)
	if status, body := b.call("POST", "/session/second-factor/passkeys/options", ""); status != 403 {
		t.Fatalf("a second passkey on a pending session: %d %s", status, body)
	}
	if status, _ := b.call("GET", "/workspaces", ""); status != 401 {
		t.Fatalf("registering is not the second factor: %d", status)
	}

	// Bob, pending too, registers his own passkey.
	bob, _, _ := signInByToken(t, ts.base, ts.bob)
	bobKey := bob.register(auth)

	// Bob's passkey answering Alice's ceremony is refused, and uses the
	// ceremony up.
	s := b.ceremony("/session/second-factor/options")
	if status, body := b.call("POST", "/session/second-factor", finish(s.CeremonyID, "", auth.Get(t, bobKey, s.Options.Challenge))); status != 401 {
		t.Fatalf("another person's passkey: %d %s", status, body)
	}
	// Bob's own ceremony, answered by him, is refused on Alice's session.
	sb := bob.ceremony("/session/second-factor/options")
	if status, body := b.call("POST", "/session/second-factor", finish(sb.CeremonyID, "", auth.Get(t, bobKey, sb.Options.Challenge))); status != 401 {
		t.Fatalf("another person's ceremony: %d %s", status, body)
	}

	s = b.ceremony("/session/second-factor/options")
	answer := finish(s.CeremonyID, "", auth.Get(t, aliceKey, s.Options.Challenge))
	if status, body := b.call("POST", "/session/second-factor", answer); status != 200 || !strings.Contains(body, `"workspaces"`) {
		t.Fatalf("second factor: %d %s", status, body)
	}
	if status, body := b.call("GET", "/workspaces", ""); status != 200 {
		t.Fatalf("after the second factor: %d %s", status, body)
	}
	if status, _ := b.call("POST", "/session/second-factor", answer); status != 401 {
		t.Fatalf("completing a finished session again: %d", status)
	}
	// Switching to a kept pending session shows nothing of its tenant.
	b2, _, _ := signInByToken(t, ts.base, ts.alice)
	var kept *http.Cookie
	if b2.cookie != nil {
		kept = &http.Cookie{Name: webui.KeptCookie, Value: b2.cookie.Value}
	}
	req, _ = http.NewRequest("GET", ts.base+"/session", nil)
	req.AddCookie(b.cookie)
	req.AddCookie(kept)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var info struct {
		Accounts []struct {
			SessionID string `json:"sessionId"`
		} `json:"accounts"`
	}
	_ = json.NewDecoder(resp.Body).Decode(&info)
	resp.Body.Close()
	if len(info.Accounts) != 2 {
		t.Fatalf("accounts with a kept pending session: %+v", info)
	}
	sw, _ := json.Marshal(map[string]string{"sessionId": info.Accounts[1].SessionID})
	req, _ = http.NewRequest("POST", ts.base+"/session/switch", strings.NewReader(string(sw)))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Origin", b.origin)
	req.Header.Set(webui.CSRFHeader, b.csrf)
	req.AddCookie(b.cookie)
	req.AddCookie(kept)
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(raw), `"secondFactor":"required"`) || strings.Contains(string(raw), "workspaces") {
		t.Fatalf("switch to a pending session: %d %s", resp.StatusCode, raw)
	}
	// The same answer replayed on a new pending session is refused.
	if status, body := b2.call("POST", "/session/second-factor", answer); status != 401 {
		t.Fatalf("replayed answer: %d %s", status, body)
	}
	if status, _ := b2.call("GET", "/workspaces", ""); status != 401 {
		t.Fatalf("after a replay the session is still pending: %d", status)
	}
	// Giving up ends the pending session.
	if status, body := b2.call("DELETE", "/session/second-factor", ""); status != 204 {
		t.Fatalf("cancel: %d %s", status, body)
	}
	if status, _ := b2.call("GET", "/session/second-factor", ""); status != 401 {
		t.Fatalf("after cancel: %d", status)
	}

	// The audit log has the step's events.
	page, err := ts.db.SearchAudit(ctx, audit.Query{TenantID: alice.TenantID, Action: "second_factor."})
	if err != nil {
		t.Fatal(err)
	}
	count := map[string]int{}
	for _, e := range page.Entries {
		count[e.Action]++
	}
	if count[api.AuditSecondFactorPassed] != 1 || count[api.AuditSecondFactorFailed] != 3 || count[api.AuditSecondFactorCancelled] != 1 {
		t.Fatalf("audit: %v", count)
	}
}
