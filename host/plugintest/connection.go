package plugintest

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/agenthost/agenthost/host/connections"
	"github.com/agenthost/agenthost/host/connections/connrecord"
	"github.com/agenthost/agenthost/host/egress"
	"github.com/agenthost/agenthost/host/secrets"
	"github.com/agenthost/agenthost/host/tenancy"
	"github.com/agenthost/agenthost/host/toolcall"
	"github.com/agenthost/agenthost/host/wasm"
)

// connection: the fixture's connection, held by the host's own
// connections.Service (sealed in an in-memory store) and served by the
// host's own connections.Capability, whose requests are answered from the
// fixture's recordings instead of the network. The checks (connector
// kind, the user's connection, provider, auth scheme, hosts, methods) and
// the credential's handling (attached by the host, dropped from the
// plugin's headers, scrubbed from answers) are the server's code.

// fixtureUser is whom a fixture's call runs for.
func fixtureUser() tenancy.Principal {
	return tenancy.Principal{TenantID: "plugin-test", UserID: "plugin-test-user"}
}

// connectionWorld is one fixture's connection capability.
type connectionWorld struct {
	fns map[string]func(context.Context, *wasm.Call, []uint64)
	// forms are the credential as the plugin must never see it.
	forms []string
}

// newConnectionWorld stores the fixture's connection through the
// service's own entry points (a token or basic connection as the API
// adds it, an OAuth one through the code grant against an in-memory token
// endpoint) and returns the capability answering from w's recordings.
func newConnectionWorld(ctx context.Context, w *world, c *Connection) (*connectionWorld, error) {
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		return nil, err
	}
	sealer, err := secrets.NewSealer(key)
	if err != nil {
		return nil, err
	}
	st := &connStore{alias: c.ID}
	pr := connections.Provider{Name: c.Provider, Hosts: c.Hosts}
	if c.Auth == connections.AuthOAuth2 {
		pr.BaseURL = c.BaseURL
		pr.OAuth = &connections.OAuth{ClientID: "plugin-test", AuthURL: "https://oauth.plugin-test.invalid/authorize",
			TokenURL: "https://oauth.plugin-test.invalid/token", RedirectURL: "https://agenthost.plugin-test.invalid/callback"}
	}
	svc, err := connections.New(connections.Options{Store: st, Sealer: sealer, Providers: []connections.Provider{pr},
		TokenClient: &http.Client{Transport: tokenEndpoint(c.Token)},
		// The fixture's site is made up: nothing is sent to it but what the plugin sends.
		Check: connections.CheckOptions{Off: true}})
	if err != nil {
		return nil, fmt.Errorf("plugin test: connection: %w", err)
	}
	if c.Auth == connections.AuthOAuth2 {
		authURL, err := svc.StartAuthorization(ctx, fixtureUser(), c.Provider, c.Label)
		if err != nil {
			return nil, fmt.Errorf("plugin test: connection: %w", err)
		}
		u, err := url.Parse(authURL)
		if err != nil {
			return nil, err
		}
		if _, err := svc.CompleteAuthorization(ctx, fixtureUser(), u.Query().Get("state"), "plugin-test-code"); err != nil {
			return nil, fmt.Errorf("plugin test: connection: %w", err)
		}
	} else if _, err := svc.AddToken(ctx, fixtureUser(), connections.NewToken{Provider: c.Provider, Label: c.Label, Auth: c.Auth,
		BaseURL: c.BaseURL, Account: c.Account, Token: c.Token}); err != nil {
		return nil, fmt.Errorf("plugin test: connection: %w", err)
	}
	capab := &connections.Capability{Service: svc, Send: w.sendConnection}
	cw := &connectionWorld{fns: map[string]func(context.Context, *wasm.Call, []uint64){}}
	for _, f := range capab.Wasm().Functions {
		cw.fns[f.Name] = f.Func
	}
	cw.forms = []string{c.Token, base64.StdEncoding.EncodeToString([]byte(c.Token))}
	if c.Auth == connections.AuthBasic {
		cw.forms = append(cw.forms, base64.StdEncoding.EncodeToString([]byte(c.Account+":"+c.Token)))
	}
	return cw, nil
}

// connectionFunction serves connection.NAME with the fixture's connection.
func connectionFunction(f wasm.HostFunction) func(context.Context, *wasm.Call, []uint64) {
	return func(ctx context.Context, c *wasm.Call, s []uint64) {
		w, err := worldFrom(ctx)
		if err == nil && w.conn == nil {
			err = &wasm.CapabilityError{Code: "unavailable", Message: "plugin test: the fixture has no connection (add \"connection\": {\"provider\", \"token\", \"baseUrl\"})"}
		}
		if err != nil {
			wasm.JSONFunction(f.Module, f.Name, f.Write, func(context.Context, *wasm.Call, json.RawMessage) (any, error) {
				return nil, err
			}).Func(ctx, c, s)
			return
		}
		w.conn.fns[f.Name](ctx, c, s)
	}
}

// sendConnection answers a connection request the host checked and
// credentialed, after the connector's egress rules (its hosts, GET and
// HEAD only for a read-only tool), from the fixture's recordings.
func (w *world) sendConnection(_ context.Context, client *egress.Client, r egress.Request) (*egress.Response, error) {
	method := strings.ToUpper(r.Method)
	if method == "" {
		method = http.MethodGet
	}
	if err := client.CheckURL(method, r.URL); err != nil {
		return nil, err
	}
	rec := w.recorded(method, r.URL)
	if rec == nil {
		return nil, fmt.Errorf("plugin test: no recorded response for %s %s (add one to the fixture's \"http\")", method, r.URL)
	}
	if why := rec.missingHeaders(r.Headers); why != "" {
		w.fail(fmt.Sprintf("%s %s: %s", method, r.URL, why))
		return &egress.Response{Status: http.StatusUnauthorized, Headers: http.Header{}, URL: r.URL}, nil
	}
	status, h, body := rec.response()
	return &egress.Response{Status: status, Headers: h, Body: body, URL: r.URL}, nil
}

// leaked names the credential's forms found in what the plugin returned.
func (cw *connectionWorld) leaked(texts ...string) string {
	for _, t := range texts {
		for _, f := range cw.forms {
			if strings.Contains(t, f) {
				return "the connection's credential reached the plugin's answer"
			}
		}
	}
	return ""
}

// tokenEndpoint is a provider's OAuth token endpoint granting token (and
// a refresh token, no expiry) to any code or refresh token: a provider
// answering 401 sees a refresh and the retry, as on a server.
func tokenEndpoint(token string) http.RoundTripper {
	return roundTripper(func(r *http.Request) (*http.Response, error) {
		body, _ := json.Marshal(map[string]string{"access_token": token, "token_type": "Bearer", "refresh_token": "plugin-test-refresh-token"})
		return &http.Response{StatusCode: http.StatusOK, Header: http.Header{"Content-Type": {"application/json"}},
			Body: io.NopCloser(strings.NewReader(string(body))), Request: r}, nil
	})
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// connStore keeps one fixture's connection in memory (connections.Store).
// The call names it by the fixture's id (alias), the host's code by the
// id it gave it.
type connStore struct {
	mu     sync.Mutex
	alias  string
	conns  map[string]connrecord.ConnectionRecord
	states map[string]connrecord.ConnectionAuthState
}

func (s *connStore) key(p tenancy.Principal, id string) (string, error) {
	if p != fixtureUser() {
		return "", tenancy.ErrNotFound
	}
	if id == s.alias {
		for k := range s.conns {
			return k, nil
		}
	}
	if _, ok := s.conns[id]; !ok {
		return "", fmt.Errorf("connection %q: %w", id, tenancy.ErrNotFound)
	}
	return id, nil
}

func (s *connStore) CreateConnection(_ context.Context, p tenancy.Principal, r connrecord.ConnectionRecord) (connrecord.ConnectionRecord, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.conns == nil {
		s.conns = map[string]connrecord.ConnectionRecord{}
	}
	r.TenantID, r.UserID, r.Version, r.CreatedAt, r.UpdatedAt = p.TenantID, p.UserID, 1, time.Now(), time.Now()
	s.conns[r.ID] = r
	return r, nil
}

func (s *connStore) Connection(_ context.Context, p tenancy.Principal, id string) (connrecord.ConnectionRecord, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	k, err := s.key(p, id)
	if err != nil {
		return connrecord.ConnectionRecord{}, err
	}
	return s.conns[k], nil
}

func (s *connStore) Connections(_ context.Context, p tenancy.Principal) ([]connrecord.ConnectionRecord, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []connrecord.ConnectionRecord
	for _, r := range s.conns {
		if p == fixtureUser() {
			out = append(out, r)
		}
	}
	return out, nil
}

func (s *connStore) UpdateConnectionSecret(_ context.Context, p tenancy.Principal, id string, version int64, secret []byte, expiresAt time.Time) (int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	k, err := s.key(p, id)
	if err != nil {
		return 0, err
	}
	r := s.conns[k]
	if r.Version != version {
		return 0, tenancy.ErrConflict
	}
	r.Secret, r.ExpiresAt, r.Version = secret, expiresAt, r.Version+1
	s.conns[k] = r
	return r.Version, nil
}

func (s *connStore) SetConnectionCheck(_ context.Context, p tenancy.Principal, id string, at time.Time, lastError string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	k, err := s.key(p, id)
	if err != nil {
		return err
	}
	r := s.conns[k]
	r.CheckedAt, r.LastError = at, lastError
	s.conns[k] = r
	return nil
}

func (s *connStore) RevokeConnection(_ context.Context, p tenancy.Principal, id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	k, err := s.key(p, id)
	if err != nil {
		return err
	}
	r := s.conns[k]
	r.RevokedAt, r.Secret = time.Now(), nil
	s.conns[k] = r
	return nil
}

func (s *connStore) SaveConnectionAuthState(_ context.Context, p tenancy.Principal, st connrecord.ConnectionAuthState) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.states == nil {
		s.states = map[string]connrecord.ConnectionAuthState{}
	}
	s.states[p.UserID+" "+st.State] = st
	return nil
}

func (s *connStore) TakeConnectionAuthState(_ context.Context, p tenancy.Principal, state string) (connrecord.ConnectionAuthState, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st, ok := s.states[p.UserID+" "+state]
	if !ok {
		return st, tenancy.ErrNotFound
	}
	delete(s.states, p.UserID+" "+state)
	return st, nil
}

// withUser makes ctx a tool call of the fixture's user, as the connection
// tools' resolver calls a connector.
func withUser(ctx context.Context) context.Context {
	return toolcall.With(ctx, toolcall.Caller{Principal: fixtureUser()})
}
