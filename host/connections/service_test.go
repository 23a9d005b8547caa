package connections_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agenthost/agenthost/host/connections"
	"github.com/agenthost/agenthost/host/connections/connectionstest"
	"github.com/agenthost/agenthost/host/connections/fakes/oauth"
	"github.com/agenthost/agenthost/host/egress"
	"github.com/agenthost/agenthost/host/secrets"
	"github.com/agenthost/agenthost/host/store"
	"github.com/agenthost/agenthost/host/tenancy"
)

// env is one SQLite store with two users of one tenant, a fake OAuth
// provider ("acme") and a resource server that accepts its tokens.
type env struct {
	db         *store.DB
	svc        *connections.Service
	alice, bob tenancy.Principal
	as         *oauth.Server
	api        *httptest.Server
	apiHost    string
	clock      *connectionstest.Clock

	mu   sync.Mutex
	seen []string          // Authorization headers the resource server saw
	mail []json.RawMessage // messages sent to the acme API
	// script answers the next requests before the token check (429s).
	script []func(w http.ResponseWriter) bool
}

const redirect = "https://agenthost.example/api/connections/callback"

func newEnv(t testing.TB, with ...func(*connections.Options)) *env {
	t.Helper()
	us := connectionstest.NewUsers(t)
	e := &env{db: us.DB, alice: us.Alice, bob: us.Bob, clock: connectionstest.NewClock(time.Now())}
	e.as = oauth.New("client-1", "client-secret-1", redirect)
	t.Cleanup(e.as.Close)
	e.api = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		e.mu.Lock()
		e.seen = append(e.seen, r.Header.Get("Authorization"))
		var step func(http.ResponseWriter) bool
		if len(e.script) > 0 {
			step, e.script = e.script[0], e.script[1:]
		}
		e.mu.Unlock()
		if step != nil && step(w) {
			return
		}
		auth := r.Header.Get("Authorization")
		ok := auth == "Basic "+basic("alice@acme.example", "jira-api-token-1") || auth == "Bearer static-token-1" ||
			(strings.HasPrefix(auth, "Bearer ") && e.as.Valid(strings.TrimPrefix(auth, "Bearer ")))
		if !ok {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = io.WriteString(w, `{"errorMessages":["Client must be authenticated to access this resource."],"errors":{}}`)
			return
		}
		if strings.HasPrefix(r.URL.Path, "/v1/") { // the acme API of the third-party connector
			e.acme(w, r)
			return
		}
		if r.URL.Path == "/echo" { // a hostile page echoing the credential back
			w.Header().Set("X-Echo", auth)
			_, _ = io.WriteString(w, "you sent: "+auth)
			return
		}
		_, _ = io.WriteString(w, `{"ok":true}`)
	}))
	t.Cleanup(e.api.Close)
	u, _ := url.Parse(e.api.URL)
	e.apiHost = u.Host
	var err error
	o := connections.Options{
		Store:  e.db,
		Sealer: connectionstest.Sealer(t),
		Providers: []connections.Provider{
			{Name: "acme", Hosts: []string{e.apiHost}, BaseURL: "http://api.acme.test:" + u.Port(), OAuth: &connections.OAuth{ClientID: "client-1", ClientSecret: "client-secret-1",
				AuthURL: e.as.AuthURL(), TokenURL: e.as.TokenURL(), RedirectURL: redirect, Scopes: []string{"read", "write"}}},
			{Name: "jira"},
			{Name: "other", Hosts: []string{e.apiHost}},
		},
		TokenClient: e.as.Client(),
		Now:         e.clock.Now,
		Sleep:       e.clock.Sleep,
		// Connections are tried when made: by default through a resolver
		// that knows no host, so no test reaches a real site.
		Check: connections.CheckOptions{Resolver: connectionstest.DNS{}},
	}
	for _, f := range with {
		f(&o)
	}
	e.svc, err = connections.New(o)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func basic(user, pass string) string {
	r, _ := http.NewRequest("GET", "http://x", nil)
	r.SetBasicAuth(user, pass)
	return strings.TrimPrefix(r.Header.Get("Authorization"), "Basic ")
}

// send is the connector's egress client, allowing the loopback test server.
func (e *env) send() connections.Sender {
	c := egress.NewClient(egress.NewPolicy().WithAllowedHosts(e.apiHost).WithPrivateHostsAllowed(e.apiHost))
	return c.Do
}

func (e *env) requests() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return len(e.seen)
}

// connectOAuth runs the whole authorisation code grant for p.
func (e *env) connectOAuth(t testing.TB, p tenancy.Principal) connections.Connection {
	t.Helper()
	ctx := context.Background()
	authURL, err := e.svc.StartAuthorization(ctx, p, "acme", "work")
	if err != nil {
		t.Fatal(err)
	}
	code := e.as.Consent(authURL)
	if code == "" {
		t.Fatalf("the provider refused the authorisation request %s", authURL)
	}
	state := mustQuery(t, authURL).Get("state")
	c, err := e.svc.CompleteAuthorization(ctx, p, state, code)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func mustQuery(t testing.TB, s string) url.Values {
	t.Helper()
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u.Query()
}

func TestNoKeyNoService(t *testing.T) {
	if _, err := connections.New(connections.Options{Store: &store.DB{}}); !errors.Is(err, secrets.ErrNoKey) {
		t.Fatalf("service without a sealer: %v", err)
	}
}

func TestOAuthPKCEAndUse(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	authURL, err := e.svc.StartAuthorization(ctx, e.alice, "acme", "work")
	if err != nil {
		t.Fatal(err)
	}
	q := mustQuery(t, authURL)
	if q.Get("code_challenge_method") != "S256" || q.Get("code_challenge") == "" || q.Get("code_verifier") != "" || q.Get("state") == "" {
		t.Fatalf("authorisation URL %s", authURL)
	}
	code := e.as.Consent(authURL)
	// Another user cannot complete alice's authorisation.
	if _, err := e.svc.CompleteAuthorization(ctx, e.bob, q.Get("state"), code); !errors.Is(err, tenancy.ErrNotFound) {
		t.Fatalf("bob completes alice's grant: %v", err)
	}
	c, err := e.svc.CompleteAuthorization(ctx, e.alice, q.Get("state"), code)
	if err != nil {
		t.Fatal(err)
	}
	if c.Auth != "oauth2" || c.Provider != "acme" || c.ExpiresAt.IsZero() || strings.Join(c.Scopes, " ") != "read write" {
		t.Fatalf("connection %+v", c)
	}
	// The state is used up.
	if _, err := e.svc.CompleteAuthorization(ctx, e.alice, q.Get("state"), code); !errors.Is(err, tenancy.ErrNotFound) {
		t.Fatalf("state reused: %v", err)
	}
	// The database holds no token in clear.
	for _, tok := range e.as.Issued() {
		var n int
		if err := e.db.SQL().QueryRowContext(ctx, `SELECT COUNT(*) FROM connections WHERE instr(CAST(secret AS TEXT), ?) > 0 OR instr(account, ?) > 0`, tok, tok).Scan(&n); err != nil || n != 0 {
			t.Fatalf("token stored in clear: %d %v", n, err)
		}
	}
	resp, err := e.svc.Do(ctx, e.alice, c.ID, "acme", []string{e.apiHost}, egress.Request{URL: e.api.URL + "/rest"}, e.send())
	if err != nil || resp.Status != 200 {
		t.Fatalf("use: %+v %v", resp, err)
	}
	// Bob cannot use it; nor can a connector of another provider.
	if _, err := e.svc.Do(ctx, e.bob, c.ID, "acme", []string{e.apiHost}, egress.Request{URL: e.api.URL}, e.send()); !errors.Is(err, tenancy.ErrNotFound) {
		t.Fatalf("bob uses alice's connection: %v", err)
	}
	if _, err := e.svc.Do(ctx, e.alice, c.ID, "other", []string{e.apiHost}, egress.Request{URL: e.api.URL}, e.send()); !errors.Is(err, connections.ErrWrongProvider) {
		t.Fatalf("another provider's connector: %v", err)
	}
}

func TestBadCodeStoresNothing(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	authURL, err := e.svc.StartAuthorization(ctx, e.alice, "acme", "work")
	if err != nil {
		t.Fatal(err)
	}
	_, err = e.svc.CompleteAuthorization(ctx, e.alice, mustQuery(t, authURL).Get("state"), "forged-code")
	if err == nil || !strings.Contains(err.Error(), "invalid_grant") {
		t.Fatalf("forged code: %v", err)
	}
	if l, _ := e.svc.List(ctx, e.alice); len(l) != 0 {
		t.Fatalf("a refused grant left %d connections", len(l))
	}
	if _, err := e.svc.StartAuthorization(ctx, e.alice, "nope", ""); !errors.Is(err, connections.ErrUnknownProvider) {
		t.Fatalf("unknown provider: %v", err)
	}
	if _, err := e.svc.StartAuthorization(ctx, e.alice, "jira", ""); !errors.Is(err, tenancy.ErrInvalid) {
		t.Fatalf("a token-only provider started OAuth: %v", err)
	}
}

func TestRefreshBeforeExpiry(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	c := e.connectOAuth(t, e.alice)
	e.clock.Add(59*time.Minute + 30*time.Second) // within the minute of leeway
	if _, err := e.svc.Do(ctx, e.alice, c.ID, "acme", []string{e.apiHost}, egress.Request{URL: e.api.URL}, e.send()); err != nil {
		t.Fatal(err)
	}
	if n := e.as.Refreshes(); n != 1 {
		t.Fatalf("%d refreshes, want 1 before the request", n)
	}
	if e.requests() != 1 {
		t.Fatalf("%d requests, want 1 (refreshed before, not after a 401)", e.requests())
	}
	got, _ := e.svc.Get(ctx, e.alice, c.ID)
	if !got.ExpiresAt.After(c.ExpiresAt) {
		t.Fatalf("expiry not moved: %v then %v", c.ExpiresAt, got.ExpiresAt)
	}
}

func TestUnauthorizedRefreshesOnce(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	c := e.connectOAuth(t, e.alice)
	e.as.RevokeAccess() // the provider no longer takes the access token
	resp, err := e.svc.Do(ctx, e.alice, c.ID, "acme", []string{e.apiHost}, egress.Request{URL: e.api.URL}, e.send())
	if err != nil || resp.Status != 200 {
		t.Fatalf("after a 401: %+v %v", resp, err)
	}
	if e.as.Refreshes() != 1 || e.requests() != 2 {
		t.Fatalf("%d refreshes, %d requests; want 1 and 2", e.as.Refreshes(), e.requests())
	}
	// The provider refuses the refreshed token too: one refresh, then a clear error.
	e.mu.Lock()
	e.script = []func(http.ResponseWriter) bool{
		func(w http.ResponseWriter) bool { w.WriteHeader(401); return true },
		func(w http.ResponseWriter) bool { w.WriteHeader(401); return true },
		func(w http.ResponseWriter) bool { w.WriteHeader(401); return true },
	}
	e.mu.Unlock()
	_, err = e.svc.Do(ctx, e.alice, c.ID, "acme", []string{e.apiHost}, egress.Request{URL: e.api.URL}, e.send())
	if !errors.Is(err, connections.ErrRejected) {
		t.Fatalf("still 401: %v", err)
	}
	if e.as.Refreshes() != 2 || e.requests() != 4 {
		t.Fatalf("%d refreshes, %d requests; want 2 and 4", e.as.Refreshes(), e.requests())
	}
	// The grant revoked at the provider: the connection is expired, clearly.
	e.as.RevokeAccess()
	e.as.RevokeRefresh()
	_, err = e.svc.Do(ctx, e.alice, c.ID, "acme", []string{e.apiHost}, egress.Request{URL: e.api.URL}, e.send())
	if !errors.Is(err, connections.ErrExpired) || !strings.Contains(err.Error(), "invalid_grant") {
		t.Fatalf("revoked grant: %v", err)
	}
}

func TestTokenConnections(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	host := "http://" + e.apiHost
	c, err := e.svc.AddToken(ctx, e.alice, connections.NewToken{Provider: "jira", Label: "jira", Auth: "basic", BaseURL: host,
		Account: "alice@acme.example", Token: "jira-api-token-1"})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := e.svc.Do(ctx, e.alice, c.ID, "jira", []string{e.apiHost}, egress.Request{URL: host + "/rest/api/3/myself",
		Headers: map[string]string{"authorization": "Bearer the-plugin-tries-its-own"}}, e.send())
	if err != nil || resp.Status != 200 {
		t.Fatalf("basic: %+v %v", resp, err)
	}
	if got := e.seen[len(e.seen)-1]; got != "Basic "+basic("alice@acme.example", "jira-api-token-1") {
		t.Fatalf("the provider saw %q", got)
	}
	// A page echoing the basic credential back gets it redacted.
	echo, err := e.svc.Do(ctx, e.alice, c.ID, "jira", []string{e.apiHost}, egress.Request{URL: host + "/echo"}, e.send())
	if err != nil || bytes.Contains(echo.Body, []byte(basic("alice@acme.example", "jira-api-token-1"))) || bytes.Contains(echo.Body, []byte("jira-api-token-1")) ||
		!bytes.Contains(echo.Body, []byte("[redacted]")) {
		t.Fatalf("echoed basic credential: %q %v", echo.Body, err)
	}
	// A wrong token: no refresh, a clear error.
	bad, err := e.svc.AddToken(ctx, e.alice, connections.NewToken{Provider: "jira", Label: "stale", Auth: "basic", BaseURL: host,
		Account: "alice@acme.example", Token: "revoked-token"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = e.svc.Do(ctx, e.alice, bad.ID, "jira", []string{e.apiHost}, egress.Request{URL: host}, e.send())
	if !errors.Is(err, connections.ErrRejected) || !strings.Contains(err.Error(), "stale") || strings.Contains(err.Error(), "revoked-token") {
		t.Fatalf("rejected token: %v", err)
	}
	// Bad input stores nothing.
	for name, n := range map[string]connections.NewToken{
		"empty token":     {Provider: "jira", Label: "a", Auth: "token"},
		"unknown":         {Provider: "nope", Label: "a", Auth: "token", Token: "t"},
		"basic no user":   {Provider: "jira", Label: "a", Auth: "basic", Token: "t"},
		"base with creds": {Provider: "jira", Label: "a", Auth: "token", Token: "t", BaseURL: "https://u:p@x.atlassian.net"},
		"ftp base":        {Provider: "jira", Label: "a", Auth: "token", Token: "t", BaseURL: "ftp://x"},
		"oauth by hand":   {Provider: "jira", Label: "a", Auth: "oauth2", Token: "t"},
	} {
		if _, err := e.svc.AddToken(ctx, e.alice, n); !errors.Is(err, tenancy.ErrInvalid) {
			t.Errorf("%s: %v", name, err)
		}
	}
	if l, _ := e.svc.List(ctx, e.alice); len(l) != 2 {
		t.Fatalf("%d connections after bad input, want 2", len(l))
	}
	// Revoked: a clear error, nothing sent.
	if err := e.svc.Revoke(ctx, e.alice, c.ID); err != nil {
		t.Fatal(err)
	}
	before := e.requests()
	if _, err := e.svc.Do(ctx, e.alice, c.ID, "jira", []string{e.apiHost}, egress.Request{URL: host}, e.send()); !errors.Is(err, connections.ErrRevoked) {
		t.Fatalf("revoked: %v", err)
	}
	if e.requests() != before {
		t.Fatal("a revoked connection's request was sent")
	}
}

func TestHostsRefused(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	c, err := e.svc.AddToken(ctx, e.alice, connections.NewToken{Provider: "jira", Label: "jira", Auth: "token",
		BaseURL: "https://acme.atlassian.net", Token: "static-token-1"})
	if err != nil {
		t.Fatal(err)
	}
	for name, tc := range map[string]struct {
		url   string
		hosts []string
	}{
		"not a connector host":       {e.api.URL, []string{"*.atlassian.net"}},
		"connector host, not conn's": {e.api.URL, []string{"*.atlassian.net", e.apiHost}},
		"another tenant's site":      {"https://evil.atlassian.net/rest", []string{"*.atlassian.net"}},
	} {
		_, err := e.svc.Do(ctx, e.alice, c.ID, "jira", tc.hosts, egress.Request{URL: tc.url}, e.send())
		if !errors.Is(err, connections.ErrHostRefused) {
			t.Errorf("%s: %v", name, err)
		}
	}
	if e.requests() != 0 {
		t.Fatalf("%d requests reached a refused host", e.requests())
	}
}

func TestRetryAfter(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	c, err := e.svc.AddToken(ctx, e.alice, connections.NewToken{Provider: "other", Label: "o", Auth: "token", Token: "static-token-1"})
	if err != nil {
		t.Fatal(err)
	}
	throttle := func(after string) func(http.ResponseWriter) bool {
		return func(w http.ResponseWriter) bool {
			w.Header().Set("Retry-After", after)
			w.WriteHeader(http.StatusTooManyRequests)
			return true
		}
	}
	e.script = []func(http.ResponseWriter) bool{throttle("7")}
	resp, err := e.svc.Do(ctx, e.alice, c.ID, "other", []string{e.apiHost}, egress.Request{URL: e.api.URL}, e.send())
	if err != nil || resp.Status != 200 {
		t.Fatalf("after 429: %+v %v", resp, err)
	}
	if slept := e.clock.Slept(); len(slept) != 1 || slept[0] != 7*time.Second || e.requests() != 2 {
		t.Fatalf("slept %v over %d requests; want [7s] and 2", slept, e.requests())
	}
	// An HTTP date works too; a wait beyond the bound is returned, not slept.
	e.script = []func(http.ResponseWriter) bool{throttle(e.clock.Now().Add(3 * time.Second).UTC().Format(http.TimeFormat)), throttle("3600")}
	resp, err = e.svc.Do(ctx, e.alice, c.ID, "other", []string{e.apiHost}, egress.Request{URL: e.api.URL}, e.send())
	if err != nil || resp.Status != http.StatusTooManyRequests || resp.Headers.Get("Retry-After") != "3600" {
		t.Fatalf("long Retry-After: %+v %v", resp, err)
	}
	if slept := e.clock.Slept(); len(slept) != 2 || slept[1] > 3*time.Second || slept[1] < time.Second {
		t.Fatalf("slept %v", slept)
	}
}

func TestResponsesScrubbed(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	c := e.connectOAuth(t, e.alice)
	resp, err := e.svc.Do(ctx, e.alice, c.ID, "acme", []string{e.apiHost}, egress.Request{URL: e.api.URL + "/echo"}, e.send())
	if err != nil || resp.Status != 200 {
		t.Fatalf("%+v %v", resp, err)
	}
	for _, tok := range e.as.Issued() {
		if bytes.Contains(resp.Body, []byte(tok)) || strings.Contains(resp.Headers.Get("X-Echo"), tok) {
			t.Fatalf("the echoed token reached the caller: %q / %q", resp.Body, resp.Headers.Get("X-Echo"))
		}
	}
	if !bytes.Contains(resp.Body, []byte("[redacted]")) {
		t.Fatalf("body %q", resp.Body)
	}
}

// acme serves the acme API: files and mail, as JSON.
func (e *env) acme(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	switch {
	case r.Method == "GET" && r.URL.Path == "/v1/files":
		_, _ = io.WriteString(w, `[{"id":"q3","name":"Quarterly report"},{"id":"plan","name":"Plan"}]`)
	case r.Method == "GET" && r.URL.Path == "/v1/files/q3":
		w.Header().Set("Content-Type", "text/plain")
		_, _ = io.WriteString(w, "Q3 revenue rose.")
	case r.Method == "POST" && r.URL.Path == "/v1/mail":
		b, _ := io.ReadAll(r.Body)
		var m map[string]any
		if json.Unmarshal(b, &m) != nil {
			w.WriteHeader(400)
			return
		}
		m["id"] = "m1"
		out, _ := json.Marshal(m)
		e.mu.Lock()
		e.mail = append(e.mail, out)
		e.mu.Unlock()
		_, _ = w.Write(out)
	case r.Method == "GET" && r.URL.Path == "/v1/mail":
		e.mu.Lock()
		msgs := append([]json.RawMessage{}, e.mail...)
		e.mu.Unlock()
		out, _ := json.Marshal(map[string]any{"messages": msgs})
		_, _ = w.Write(out)
	default:
		w.WriteHeader(404)
		_, _ = io.WriteString(w, `{"error":"no such route"}`)
	}
}

// TestConcurrentRefresh: requests racing on an expired token refresh it
// once; the provider rotates refresh tokens, so a second refresh with the
// old one would fail and lose the connection.
func TestConcurrentRefresh(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	c := e.connectOAuth(t, e.alice)
	e.clock.Add(2 * time.Hour)
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp, err := e.svc.Do(ctx, e.alice, c.ID, "acme", []string{e.apiHost}, egress.Request{URL: e.api.URL}, e.send())
			if err == nil && resp.Status != 200 {
				err = errors.New(resp.Headers.Get("Status"))
			}
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if n := e.as.Refreshes(); n != 1 {
		t.Fatalf("%d refreshes, want 1", n)
	}
}

// TestServerBusyRetried: 503 and 504 are retried like 429, after
// Retry-After or, without one, an exponential backoff (Microsoft Graph
// throttling guidance, learn.microsoft.com/graph/throttling: "503 Service
// Unavailable ... 504 Gateway Timeout ... use the Retry-After header"),
// and no more than three times.
func TestServerBusyRetried(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	c, err := e.svc.AddToken(ctx, e.alice, connections.NewToken{Provider: "other", Label: "o", Auth: "token", Token: "static-token-1"})
	if err != nil {
		t.Fatal(err)
	}
	busy := func(status int, after string) func(http.ResponseWriter) bool {
		return func(w http.ResponseWriter) bool {
			if after != "" {
				w.Header().Set("Retry-After", after)
			}
			w.WriteHeader(status)
			return true
		}
	}
	for name, tc := range map[string]struct {
		script     []func(http.ResponseWriter) bool
		wantStatus int
		wantSlept  []time.Duration
	}{
		"503 with Retry-After": {[]func(http.ResponseWriter) bool{busy(503, "5")}, 200, []time.Duration{5 * time.Second}},
		"504 with Retry-After": {[]func(http.ResponseWriter) bool{busy(504, "2")}, 200, []time.Duration{2 * time.Second}},
		"503 without, backoff": {[]func(http.ResponseWriter) bool{busy(503, ""), busy(503, "")}, 200, []time.Duration{time.Second, 2 * time.Second}},
		"gives up after three": {[]func(http.ResponseWriter) bool{busy(503, "1"), busy(503, "1"), busy(504, "1"), busy(503, "1")}, 503, []time.Duration{time.Second, time.Second, time.Second}},
		"500 is not retried":   {[]func(http.ResponseWriter) bool{busy(500, "1")}, 500, nil},
	} {
		before := len(e.clock.Slept())
		e.script = tc.script
		resp, err := e.svc.Do(ctx, e.alice, c.ID, "other", []string{e.apiHost}, egress.Request{URL: e.api.URL}, e.send())
		if err != nil || resp.Status != tc.wantStatus {
			t.Errorf("%s: %+v %v; want %d", name, resp, err, tc.wantStatus)
			continue
		}
		if slept := e.clock.Slept()[before:]; !slices.Equal(slept, tc.wantSlept) {
			t.Errorf("%s: slept %v; want %v", name, slept, tc.wantSlept)
		}
	}
}
