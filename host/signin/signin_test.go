package signin_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/agenthost/agenthost/host/audit"
	"github.com/agenthost/agenthost/host/signin"
	"github.com/agenthost/agenthost/host/signin/oidctest"
	"github.com/agenthost/agenthost/host/store"
	"github.com/agenthost/agenthost/host/tenancy"
	"github.com/agenthost/agenthost/host/testenv"
	"github.com/agenthost/agenthost/host/webui"
)

func TestMain(m *testing.M) { os.Exit(testenv.Main(m)) }

// env is one agenthost (store, UI sessions, sign-in) and one real OpenID
// provider in the test process.
type env struct {
	t      testing.TB
	db     *store.DB
	op     *oidctest.OP
	base   string
	svc    *signin.Service
	inv    *signin.Invitations
	tenant tenancy.Tenant
	wsA    tenancy.Workspace
	admin  tenancy.Principal
	audit  *events
}

// events is the audit log of the test: audit.Normalize (what the real Log
// stores) over what it is given, kept in memory.
type events struct{ got []audit.Entry }

func (e *events) Record(ctx context.Context, ev audit.Entry) error {
	n, err := audit.Normalize(ctx, ev)
	if err != nil {
		return err
	}
	e.got = append(e.got, n)
	return nil
}

func (e *events) has(action string) bool {
	for _, ev := range e.got {
		if ev.Action == action {
			return true
		}
	}
	return false
}

var users = []oidctest.User{
	{ID: "u-ann", Username: "ann", Password: "pw", Email: "ann@acme.test", EmailVerified: true, FirstName: "Ann", LastName: "A", Groups: []string{"ah-admins", "sales"}},
	{ID: "u-ben", Username: "ben", Password: "pw", Email: "ben@acme.test", EmailVerified: true, FirstName: "Ben", LastName: "B"},
	{ID: "u-eve", Username: "eve", Password: "pw", Email: "eve@evil.test", EmailVerified: true, FirstName: "Eve", LastName: "E"},
	{ID: "u-dan", Username: "dan", Password: "pw", Email: "dan@acme.test", EmailVerified: true, FirstName: "Dan", LastName: "D", Disabled: true},
	{ID: "u-uma", Username: "uma", Password: "pw", Email: "uma@acme.test", EmailVerified: false, FirstName: "Uma", LastName: "U"},
	{ID: "u-gus", Username: "gus", Password: "pw", Email: "gus@guest.test", EmailVerified: true, FirstName: "Gus", LastName: "G"},
}

func openSQLite(tb testing.TB) *store.DB {
	db, err := store.Open(context.Background(), store.Config{Dir: tb.TempDir()})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { db.Close() })
	return db
}

func openPostgres(tb testing.TB) *store.DB {
	db, err := store.Open(context.Background(), store.Config{URL: testenv.Postgres(tb)})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { db.Close() })
	return db
}

func newEnv(tb testing.TB, db *store.DB, provisioning signin.Provisioning) *env {
	tb.Helper()
	ctx := context.Background()
	if err := db.Migrate(ctx); err != nil {
		tb.Fatal(err)
	}
	e := &env{t: tb, db: db, audit: &events{}}
	var err error
	if e.tenant, err = db.CreateTenant(ctx, "Acme"); err != nil {
		tb.Fatal(err)
	}
	e.wsA, _ = db.CreateWorkspace(ctx, tenancy.Workspace{TenantID: e.tenant.ID, Name: "Sales"})
	adm, _ := db.CreateUser(ctx, tenancy.User{TenantID: e.tenant.ID, Email: "root@acme.test", Name: "Root", Admin: true})
	e.admin = tenancy.Principal{TenantID: e.tenant.ID, UserID: adm.ID, Admin: true}

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	e.base = "http://" + ln.Addr().String()
	e.op = oidctest.New(tb, users, []oidctest.Client{{ID: "agenthost", Secret: "s3cret",
		RedirectURIs:           []string{e.base + "/auth/oidc/idp/callback"},
		PostLogoutRedirectURIs: []string{e.base + "/"},
		BackChannelLogoutURI:   e.base + "/auth/oidc/idp/backchannel-logout"}})
	cfg := signin.Config{PublicURL: e.base, Providers: []signin.Provider{{
		Name: "idp", Label: "Test IdP", Issuer: e.op.Issuer, ClientID: "agenthost", ClientSecret: "s3cret",
		Tenant: "Acme", AllowedDomains: []string{"acme.test"}, Provisioning: provisioning,
		Roles: signin.RoleMapping{Claim: "groups", Admin: []string{"ah-admins"},
			Workspaces: []signin.WorkspaceRole{{Value: "sales", Workspace: "Sales", Role: tenancy.RoleMember}}},
	}}}
	ui, err := webui.New(db, webui.Config{})
	if err != nil {
		tb.Fatal(err)
	}
	e.svc, err = signin.New(cfg, signin.Deps{Store: db, Sessions: ui, Audit: e.audit})
	if err != nil {
		tb.Fatal(err)
	}
	ui, err = webui.New(db, webui.Config{LogoutURL: e.svc.LogoutURL})
	if err != nil {
		tb.Fatal(err)
	}
	e.svc, _ = signin.New(cfg, signin.Deps{Store: db, Sessions: ui, Audit: e.audit})
	e.inv = signin.NewInvitations(db, nil, e.svc, cfg)
	e.inv.Audit = e.audit
	// Errors answer as host/api's problem handler does.
	app := fiber.New(fiber.Config{DisableStartupMessage: true, ErrorHandler: func(c *fiber.Ctx, err error) error {
		status := fiber.StatusInternalServerError
		var fe *fiber.Error
		switch {
		case errors.As(err, &fe):
			status = fe.Code
		case errors.Is(err, tenancy.ErrUnauthenticated):
			status = fiber.StatusUnauthorized
		case errors.Is(err, tenancy.ErrForbidden):
			status = fiber.StatusForbidden
		}
		return c.Status(status).SendString(err.Error())
	}})
	app.Get("/", func(c *fiber.Ctx) error { return c.SendString("home") })
	app.Get("/api/v1/session", ui.HandleSession())
	app.Delete("/api/v1/session", ui.HandleSignOut())
	app.Get("/api/v1/auth/providers", e.svc.HandleProviders())
	app.Get("/auth/oidc/:provider", e.svc.HandleStart())
	app.Get("/auth/oidc/:provider/callback", e.svc.HandleCallback())
	app.Post("/auth/oidc/:provider/backchannel-logout", e.svc.HandleBackChannelLogout())
	app.Get("/invite/:secret", e.inv.HandleLanding())
	go app.Listener(ln)
	tb.Cleanup(func() { app.Shutdown() })
	return e
}

// browser is a user agent: cookies, redirects followed, except that it
// stops before the provider sends it back (to replay or change that).
type browser struct {
	t       testing.TB
	op      string
	c       *http.Client
	stopped *url.URL
}

func (e *env) browser() *browser {
	jar, _ := cookiejar.New(nil)
	b := &browser{t: e.t, op: e.op.Issuer}
	b.c = &http.Client{Jar: jar, Timeout: 20 * time.Second}
	return b
}

func (b *browser) get(u string) (int, string) {
	b.t.Helper()
	resp, err := b.c.Get(u)
	if err != nil {
		b.t.Fatalf("GET %s: %v", u, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

var authRequestID = regexp.MustCompile(`name="authRequestID" value="([^"]+)"`)

// toProvider starts a sign-in and signs in at the provider's login page;
// it returns the callback URL the provider sends the browser to (not
// followed), or the page the browser ended on when the provider did not
// send it back (status, body).
func (b *browser) toProvider(start, username, password string) (*url.URL, int, string) {
	b.t.Helper()
	b.stopped = nil
	b.c.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if strings.HasSuffix(req.URL.Path, "/callback") && !strings.HasPrefix(req.URL.Path, "/authorize") {
			b.stopped = req.URL
			return http.ErrUseLastResponse
		}
		return nil
	}
	defer func() { b.c.CheckRedirect = nil }()
	status, body := b.get(start)
	if status != 200 || !strings.Contains(body, "authRequestID") {
		return nil, status, body
	}
	m := authRequestID.FindStringSubmatch(body)
	if m == nil {
		b.t.Fatalf("no login form: %s", body)
	}
	resp, err := b.c.PostForm(b.op+"/login", url.Values{"authRequestID": {m[1]}, "username": {username}, "password": {password}})
	if err != nil {
		b.t.Fatal(err)
	}
	defer resp.Body.Close()
	page, _ := io.ReadAll(resp.Body)
	if b.stopped == nil {
		return nil, resp.StatusCode, string(page)
	}
	return b.stopped, 0, ""
}

// signIn goes the whole way and returns the page the callback answers.
func (b *browser) signIn(start, username, password string) (int, string) {
	b.t.Helper()
	cb, status, body := b.toProvider(start, username, password)
	if cb == nil {
		return status, body
	}
	return b.get(cb.String())
}

func (e *env) session(b *browser) (int, map[string]any) {
	e.t.Helper()
	status, body := b.get(e.base + "/api/v1/session")
	var m map[string]any
	json.Unmarshal([]byte(body), &m)
	return status, m
}

func (e *env) count(table string) int {
	e.t.Helper()
	var n int
	if err := e.db.SQL().QueryRowContext(context.Background(), "SELECT COUNT(*) FROM "+table).Scan(&n); err != nil {
		e.t.Fatal(err)
	}
	return n
}

// nothingMade checks a failed sign-in left no user, identity or session.
func (e *env) nothingMade(t *testing.T, before [3]int) {
	t.Helper()
	if got := [3]int{e.count("users"), e.count("identities"), e.count("sessions")}; got != before {
		t.Fatalf("a failed sign-in made something: users/identities/sessions %v, before %v", got, before)
	}
}

func (e *env) counts() [3]int {
	return [3]int{e.count("users"), e.count("identities"), e.count("sessions")}
}

func TestSignInSQLite(t *testing.T) { testSignIn(t, openSQLite) }

func TestSignInPostgres(t *testing.T) { testSignIn(t, openPostgres) }

func testSignIn(t *testing.T, open func(testing.TB) *store.DB) {
	e := newEnv(t, open(t), signin.JustInTime)
	start := e.base + "/auth/oidc/idp"

	t.Run("happy path: just in time, roles from groups, session", func(t *testing.T) {
		b := e.browser()
		status, body := b.signIn(start, "ann", "pw")
		if status != 200 || !strings.Contains(body, `http-equiv="refresh"`) {
			t.Fatalf("callback: %d %s", status, body)
		}
		st, s := e.session(b)
		if st != 200 {
			t.Fatalf("session: %d %v", st, s)
		}
		u := s["user"].(map[string]any)
		if u["email"] != "ann@acme.test" || u["admin"] != true || u["name"] != "Ann A" {
			t.Fatalf("user %v", u)
		}
		ws := s["workspaces"].([]any)
		if len(ws) != 1 {
			t.Fatalf("workspaces %v", ws)
		}
		if !e.audit.has(audit.SignInSucceeded) {
			t.Fatal("no audit record of the sign-in")
		}
		// Signing in again finds the same user.
		b2 := e.browser()
		if status, body := b2.signIn(start, "ann", "pw"); status != 200 {
			t.Fatalf("second sign-in: %d %s", status, body)
		}
		_, s2 := e.session(b2)
		if s2["user"].(map[string]any)["id"] != u["id"] {
			t.Fatalf("second sign-in is another user: %v vs %v", s2["user"], u)
		}
	})

	// Every hostile or broken answer: a clear page, nothing made.
	for _, c := range []struct {
		name, user string
		tamper     func(map[string]any)
		rogue      bool
		status     int
		want       string
	}{
		{"wrong audience", "ben", func(m map[string]any) { m["aud"] = []string{"another-app"}; m["azp"] = "another-app" }, false, 400, "audience"},
		{"expired", "ben", func(m map[string]any) {
			m["iat"] = time.Now().Add(-3 * time.Hour).Unix()
			m["exp"] = time.Now().Add(-2 * time.Hour).Unix()
		}, false, 400, "expired"},
		{"not yet valid (iat)", "ben", func(m map[string]any) {
			m["iat"] = time.Now().Add(time.Hour).Unix()
			m["exp"] = time.Now().Add(2 * time.Hour).Unix()
		}, false, 400, "not valid yet"},
		{"not yet valid (nbf)", "ben", func(m map[string]any) { m["nbf"] = time.Now().Add(time.Hour).Unix() }, false, 400, "nbf"},
		{"wrong nonce", "ben", func(m map[string]any) { m["nonce"] = "another-sign-in" }, false, 400, "nonce"},
		{"wrong issuer", "ben", func(m map[string]any) { m["iss"] = "https://evil.test" }, false, 400, "different provider"},
		{"unknown key", "ben", func(map[string]any) {}, true, 400, "not valid"},
		{"outside allowed domains", "eve", nil, false, 403, "not of a domain"},
		{"address not verified", "uma", nil, false, 403, "does not vouch"},
	} {
		t.Run(c.name, func(t *testing.T) {
			before := e.counts()
			if c.tamper != nil {
				e.op.TamperNext(c.tamper, c.rogue)
			}
			status, body := e.browser().signIn(start, c.user, "pw")
			if status != c.status || !strings.Contains(body, c.want) || strings.Contains(body, "refresh") {
				t.Fatalf("got %d %s, want %d with %q", status, body, c.status, c.want)
			}
			e.nothingMade(t, before)
		})
	}
	if !e.audit.has(audit.SignInFailed) {
		t.Fatal("no audit record of the failures")
	}

	t.Run("disabled user at the provider", func(t *testing.T) {
		before := e.counts()
		status, body := e.browser().signIn(start, "dan", "pw")
		if status != 403 || !strings.Contains(body, "disabled") || !strings.Contains(body, "access_denied") {
			t.Fatalf("got %d %s", status, body)
		}
		e.nothingMade(t, before)
	})

	t.Run("wrong state", func(t *testing.T) {
		before := e.counts()
		b := e.browser()
		cb, _, body := b.toProvider(start, "ben", "pw")
		if cb == nil {
			t.Fatalf("no callback: %s", body)
		}
		q := cb.Query()
		q.Set("state", q.Get("state")+"x")
		cb.RawQuery = q.Encode()
		if status, body := b.get(cb.String()); status != 401 && status != 400 || !strings.Contains(body, "state") {
			t.Fatalf("wrong state: %d %s", status, body)
		}
		// Another browser (no state cookie) cannot finish someone's sign-in.
		cb2, _, _ := e.browser().toProvider(start, "ben", "pw")
		if status, body := e.browser().get(cb2.String()); status != 400 || !strings.Contains(body, "state") {
			t.Fatalf("callback in another browser: %d %s", status, body)
		}
		e.nothingMade(t, before)
	})

	t.Run("replayed code", func(t *testing.T) {
		b := e.browser()
		cb, _, body := b.toProvider(start, "ben", "pw")
		if cb == nil {
			t.Fatalf("no callback: %s", body)
		}
		if status, body := b.get(cb.String()); status != 200 {
			t.Fatalf("first use: %d %s", status, body)
		}
		before := e.counts()
		// The same callback again: the flow is gone.
		if status, body := b.get(cb.String()); status != 400 || !strings.Contains(body, "state") && !strings.Contains(body, "finished") {
			t.Fatalf("replay: %d %s", status, body)
		}
		// The code in a fresh flow of the same browser: the provider refuses
		// it (used, and issued for another PKCE challenge).
		cb2, _, _ := b.toProvider(start, "ben", "pw")
		q := cb2.Query()
		q.Set("code", cb.Query().Get("code"))
		cb2.RawQuery = q.Encode()
		if status, body := b.get(cb2.String()); status != 400 || !strings.Contains(body, "did not accept") {
			t.Fatalf("code replayed in a new flow: %d %s", status, body)
		}
		e.nothingMade(t, before)
	})

	t.Run("rotated signing key", func(t *testing.T) {
		old := e.op.KeyID()
		if status, body := e.browser().signIn(start, "ben", "pw"); status != 200 {
			t.Fatalf("before rotation: %d %s", status, body)
		}
		kid := e.op.Rotate(false)
		if kid == old {
			t.Fatal("no new key")
		}
		b := e.browser()
		if status, body := b.signIn(start, "ben", "pw"); status != 200 {
			t.Fatalf("after rotation (new kid %s): %d %s", kid, status, body)
		}
		if st, _ := e.session(b); st != 200 {
			t.Fatalf("session after rotation: %d", st)
		}
	})

	t.Run("provider down", func(t *testing.T) {
		before := e.counts()
		// Down before the redirect: discovery was cached, the token
		// exchange fails at the callback.
		b := e.browser()
		cb, _, body := b.toProvider(start, "ben", "pw")
		if cb == nil {
			t.Fatalf("no callback: %s", body)
		}
		e.op.SetDown(true)
		defer e.op.SetDown(false)
		status, body := b.get(cb.String())
		if status != 502 || !strings.Contains(body, "cannot be reached") {
			t.Fatalf("down at the callback: %d %s", status, body)
		}
		e.nothingMade(t, before)
		// A provider never reached (discovery fails): a clear page too.
		svc, err := signin.New(signin.Config{PublicURL: e.base, Providers: []signin.Provider{{Name: "gone", Issuer: e.op.Issuer,
			ClientID: "x", Tenant: "Acme", AllowedDomains: []string{"acme.test"}}}}, signin.Deps{Store: e.db})
		if err != nil {
			t.Fatal(err)
		}
		app := fiber.New()
		app.Get("/auth/oidc/:provider", svc.HandleStart())
		resp, err := app.Test(httptestRequest("/auth/oidc/gone"), 20000)
		if err != nil {
			t.Fatal(err)
		}
		page, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != 502 || !strings.Contains(string(page), "cannot be reached") {
			t.Fatalf("discovery down: %d %s", resp.StatusCode, page)
		}
		e.nothingMade(t, before)
	})

	t.Run("back-channel logout ends the session", func(t *testing.T) {
		b := e.browser()
		if status, body := b.signIn(start, "ben", "pw"); status != 200 {
			t.Fatalf("sign-in: %d %s", status, body)
		}
		other := e.browser()
		if status, _ := other.signIn(start, "ann", "pw"); status != 200 {
			t.Fatal("ann")
		}
		uri := e.base + "/auth/oidc/idp/backchannel-logout"
		ctx := context.Background()
		good := func() map[string]any { return e.op.LogoutToken("agenthost", "u-ben", "") }
		for _, c := range []struct {
			name  string
			token string
		}{
			{"wrong audience", e.op.Sign(func() map[string]any { m := good(); m["aud"] = "another-app"; return m }(), "logout+jwt")},
			{"wrong issuer", e.op.Sign(func() map[string]any { m := good(); m["iss"] = "https://evil.test"; return m }(), "logout+jwt")},
			{"with a nonce (an ID token)", e.op.Sign(func() map[string]any { m := good(); m["nonce"] = "n"; return m }(), "logout+jwt")},
			{"no events", e.op.Sign(func() map[string]any { m := good(); delete(m, "events"); return m }(), "logout+jwt")},
			{"wrong event", e.op.Sign(func() map[string]any {
				m := good()
				m["events"] = map[string]any{"http://schemas.openid.net/event/other": map[string]any{}}
				return m
			}(), "logout+jwt")},
			{"neither sub nor sid", e.op.Sign(func() map[string]any { m := good(); delete(m, "sub"); return m }(), "logout+jwt")},
			{"no iat", e.op.Sign(func() map[string]any { m := good(); delete(m, "iat"); return m }(), "logout+jwt")},
			{"old", e.op.Sign(func() map[string]any { m := good(); m["iat"] = time.Now().Add(-time.Hour).Unix(); return m }(), "logout+jwt")},
			{"expired", e.op.Sign(func() map[string]any { m := good(); m["exp"] = time.Now().Add(-time.Hour).Unix(); return m }(), "logout+jwt")},
			{"not signed", strings.Join(strings.Split(e.op.Sign(good(), "logout+jwt"), ".")[:2], ".") + "."},
			{"empty", ""},
		} {
			status, body, err := oidctest.PostLogoutToken(ctx, uri, c.token)
			if err != nil || status != 400 {
				t.Errorf("%s: %d %s %v", c.name, status, body, err)
			}
		}
		if st, _ := e.session(b); st != 200 {
			t.Fatalf("a refused logout token ended the session: %d", st)
		}
		// The provider signs ben out: his sessions end, ann's stays.
		if err := e.op.SignOut(ctx, "u-ben"); err != nil {
			t.Fatal(err)
		}
		if st, _ := e.session(b); st != 401 {
			t.Fatalf("session after back-channel logout: %d", st)
		}
		if st, _ := e.session(other); st != 200 {
			t.Fatalf("another person's session ended: %d", st)
		}
		// The same token twice: refused the second time.
		tok := e.op.Sign(e.op.LogoutToken("agenthost", "u-ann", ""), "logout+jwt")
		if status, body, _ := oidctest.PostLogoutToken(ctx, uri, tok); status != 200 {
			t.Fatalf("logout: %d %s", status, body)
		}
		if status, _, _ := oidctest.PostLogoutToken(ctx, uri, tok); status != 400 {
			t.Fatalf("replayed logout token: %d", status)
		}
	})

	t.Run("sign-out here signs out at the provider", func(t *testing.T) {
		b := e.browser()
		if status, body := b.signIn(start, "ben", "pw"); status != 200 {
			t.Fatalf("sign-in: %d %s", status, body)
		}
		req, _ := http.NewRequest(http.MethodDelete, e.base+"/api/v1/session", nil)
		resp, err := b.c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var out struct{ Redirect string }
		json.NewDecoder(resp.Body).Decode(&out)
		resp.Body.Close()
		if resp.StatusCode != 200 || !strings.HasPrefix(out.Redirect, e.op.Issuer+"/end_session?") || !strings.Contains(out.Redirect, "id_token_hint=") {
			t.Fatalf("sign-out: %d %+v", resp.StatusCode, out)
		}
		sent := e.op.LogoutsDelivered()
		status, body := b.get(out.Redirect)
		if status != 200 || e.op.LogoutsDelivered() == sent {
			t.Fatalf("end session at the provider: %d %s (logouts %d)", status, body, e.op.LogoutsDelivered())
		}
		if st, _ := e.session(b); st != 401 {
			t.Fatalf("still signed in: %d", st)
		}
	})
}

func httptestRequest(path string) *http.Request {
	r, _ := http.NewRequest(http.MethodGet, "http://agenthost.test"+path, nil)
	return r
}

// TestInvitationOnly: with provisioning by invitation, an uninvited person
// is refused; the invitation's link leads through the provider and binds
// the new user to its roles, once; an invitation admits its own address
// outside the allowed domains.
func TestInvitationOnly(t *testing.T) {
	e := newEnv(t, openSQLite(t), signin.InvitedOnly)
	ctx := context.Background()
	start := e.base + "/auth/oidc/idp"
	before := e.counts()
	if status, body := e.browser().signIn(start, "ben", "pw"); status != 403 || !strings.Contains(body, "invitation") {
		t.Fatalf("uninvited: %d %s", status, body)
	}
	e.nothingMade(t, before)

	got, err := e.inv.Invite(ctx, e.admin, e.base, signin.InviteRequest{Email: "gus@guest.test",
		Workspaces: []store.Grant{{WorkspaceID: e.wsA.ID, Role: tenancy.RoleViewer}}})
	if err != nil || got.Mailed || !strings.HasPrefix(got.Link, e.base+"/invite/ahi_") {
		t.Fatalf("invite: %+v %v", got, err)
	}
	if !e.audit.has(signin.InvitationCreated) {
		t.Fatal("no audit record of the invitation")
	}
	// The wrong person following the link is refused and the link stays.
	b := e.browser()
	if status, body := b.signIn(got.Link, "ben", "pw"); status != 403 {
		t.Fatalf("someone else with the link: %d %s", status, body)
	}
	if status, body := b.signIn(got.Link, "gus", "pw"); status != 200 {
		t.Fatalf("invited: %d %s", status, body)
	}
	_, s := e.session(b)
	if s["user"].(map[string]any)["email"] != "gus@guest.test" || len(s["workspaces"].([]any)) != 1 {
		t.Fatalf("session %v", s)
	}
	if !e.audit.has(signin.InvitationAccepted) {
		t.Fatal("no audit record of the acceptance")
	}
	// Used once: the link now explains itself.
	if status, body := e.browser().get(got.Link); status != 410 || !strings.Contains(body, "used") {
		t.Fatalf("used link: %d %s", status, body)
	}
	// Revoked links are refused too.
	r, err := e.inv.Invite(ctx, e.admin, e.base, signin.InviteRequest{Email: "ben@acme.test"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.inv.Revoke(ctx, e.admin, r.Invitation.ID); err != nil {
		t.Fatal(err)
	}
	if status, _ := e.browser().get(r.Link); status != 410 {
		t.Fatalf("revoked link: %d", status)
	}
	if !e.audit.has(signin.InvitationRevoked) {
		t.Fatal("no audit record of the revocation")
	}
	if _, err := e.inv.Invite(ctx, tenancy.Principal{TenantID: e.tenant.ID, UserID: "x"}, e.base, signin.InviteRequest{Email: "x@acme.test"}); !errors.Is(err, tenancy.ErrForbidden) {
		t.Fatalf("non-admin invites: %v", err)
	}
}
