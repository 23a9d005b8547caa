// Package oidctest runs a real OpenID provider inside a test: the certified
// OP of github.com/zitadel/oidc (pkg/op) over the in-memory storage of its
// example server, with what a test needs around it: users (disabled ones
// too), a login page, signing keys that rotate, OpenID Connect
// Back-Channel Logout 1.0 (which the package leaves to its storage), a
// switch that takes the provider down, and a hostile mode that re-signs
// the ID token of the next token response with changed claims (the shape
// of a forged or misissued token, signed by the provider's real key).
package oidctest

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/google/uuid"
	"github.com/zitadel/oidc/v3/example/server/storage"
	"github.com/zitadel/oidc/v3/pkg/oidc"
	"github.com/zitadel/oidc/v3/pkg/op"
	"golang.org/x/text/language"
)

// User is a person at the provider.
type User struct {
	ID, Username, Password string
	Email                  string
	EmailVerified          bool
	FirstName, LastName    string
	Groups                 []string
	// Disabled users are refused at the login page: the provider answers
	// the client with access_denied, as Entra ID and Keycloak do.
	Disabled bool
}

// Client is a relying party registered at the provider.
type Client struct {
	ID, Secret             string
	RedirectURIs           []string
	PostLogoutRedirectURIs []string
	// BackChannelLogoutURI receives logout tokens when a user signs out
	// here ("" for none).
	BackChannelLogoutURI string
}

// OP is the running provider.
type OP struct {
	// Issuer is the provider's issuer URL (the test server's).
	Issuer string
	srv    *httptest.Server
	prov   *op.Provider
	st     *opStorage

	mu      sync.Mutex
	users   map[string]*User // by ID
	clients map[string]*Client
	keys    []*signingKey       // keys[0] signs; the rest are still published
	sids    map[string]string   // auth request id → session id
	logins  map[string][]string // user id → session ids
	tamper  func(map[string]any)
	rogue   bool
	down    atomic.Bool
	// Sent counts back-channel logout deliveries that the client accepted.
	sent atomic.Int64
}

type signingKey struct {
	id  string
	key *rsa.PrivateKey
}

func (k *signingKey) SignatureAlgorithm() jose.SignatureAlgorithm { return jose.RS256 }
func (k *signingKey) Key() any                                    { return k.key }
func (k *signingKey) ID() string                                  { return k.id }

type publicKey struct{ k *signingKey }

func (p publicKey) ID() string                         { return p.k.id }
func (p publicKey) Algorithm() jose.SignatureAlgorithm { return jose.RS256 }
func (p publicKey) Use() string                        { return "sig" }
func (p publicKey) Key() any                           { return &p.k.key.PublicKey }

func newKey() *signingKey {
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		panic(err)
	}
	return &signingKey{id: uuid.NewString(), key: k}
}

// New starts a provider with the given users and clients; it stops when
// the test ends.
func New(tb testing.TB, users []User, clients []Client) *OP {
	tb.Helper()
	o := &OP{users: map[string]*User{}, clients: map[string]*Client{}, keys: []*signingKey{newKey()},
		sids: map[string]string{}, logins: map[string][]string{}}
	for i := range users {
		u := users[i]
		o.users[u.ID] = &u
	}
	for i := range clients {
		c := clients[i]
		o.clients[c.ID] = &c
	}
	var handler atomic.Value
	o.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if o.down.Load() {
			// A provider that is down: the connection is dropped.
			if hj, ok := w.(http.Hijacker); ok {
				if c, _, err := hj.Hijack(); err == nil {
					c.Close()
					return
				}
			}
			http.Error(w, "down", http.StatusServiceUnavailable)
			return
		}
		handler.Load().(http.Handler).ServeHTTP(w, r)
	}))
	tb.Cleanup(o.srv.Close)
	o.Issuer = o.srv.URL
	o.st = &opStorage{Storage: storage.NewStorageWithClients(userStore{o}, map[string]*storage.Client{}), op: o}
	cfg := &op.Config{CryptoKey: sha256.Sum256([]byte(o.Issuer)), CodeMethodS256: true, AuthMethodPost: true,
		DefaultLogoutRedirectURI: "/logged-out", SupportedUILocales: []language.Tag{language.English}}
	prov, err := op.NewProvider(cfg, o.st, op.StaticIssuer(o.Issuer), op.WithAllowInsecure())
	if err != nil {
		tb.Fatal(err)
	}
	o.prov = prov
	mux := http.NewServeMux()
	mux.HandleFunc("/login", o.login)
	mux.HandleFunc("/logged-out", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "signed out") })
	mux.HandleFunc("/portal/signout", o.portalSignOut)
	mux.Handle("/", o.tampering(prov))
	handler.Store(http.Handler(mux))
	return o
}

// URL returns the issuer's address joined with path.
func (o *OP) URL(path string) string { return o.Issuer + path }

// SetDown takes the provider down (every connection dropped) or up.
func (o *OP) SetDown(down bool) { o.down.Store(down) }

// Rotate makes a new signing key; the old one stays published when keep
// is true (a rollover) and is withdrawn otherwise. It returns the new kid.
func (o *OP) Rotate(keep bool) string {
	o.mu.Lock()
	defer o.mu.Unlock()
	k := newKey()
	if keep {
		o.keys = append([]*signingKey{k}, o.keys...)
	} else {
		o.keys = []*signingKey{k}
	}
	return k.id
}

// KeyID is the kid of the current signing key.
func (o *OP) KeyID() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.keys[0].id
}

// TamperNext changes the claims of the ID token of the next token
// response and re-signs it with the provider's signing key (or, with
// rogue, with a key the provider never published).
func (o *OP) TamperNext(f func(claims map[string]any), rogue bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.tamper, o.rogue = f, rogue
}

// SetDisabled disables or enables a user.
func (o *OP) SetDisabled(userID string, disabled bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.users[userID].Disabled = disabled
}

// LogoutsDelivered counts back-channel logout tokens a client accepted.
func (o *OP) LogoutsDelivered() int64 { return o.sent.Load() }

// Sign signs claims as the provider would (its current key), with the JWT
// type typ ("JWT", "logout+jwt").
func (o *OP) Sign(claims map[string]any, typ string) string {
	o.mu.Lock()
	k := o.keys[0]
	o.mu.Unlock()
	return sign(k, claims, typ)
}

func sign(k *signingKey, claims map[string]any, typ string) string {
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.RS256, Key: jose.JSONWebKey{Key: k.key, KeyID: k.id}},
		(&jose.SignerOptions{}).WithType(jose.ContentType(typ)))
	if err != nil {
		panic(err)
	}
	payload, _ := json.Marshal(claims)
	jws, err := signer.Sign(payload)
	if err != nil {
		panic(err)
	}
	s, err := jws.CompactSerialize()
	if err != nil {
		panic(err)
	}
	return s
}

// LogoutToken builds the claims of a logout token for a client (section
// 2.4 of the specification).
func (o *OP) LogoutToken(clientID, subject, sid string) map[string]any {
	c := map[string]any{"iss": o.Issuer, "aud": clientID, "iat": time.Now().Unix(), "exp": time.Now().Add(2 * time.Minute).Unix(),
		"jti": uuid.NewString(), "events": map[string]any{"http://schemas.openid.net/event/backchannel-logout": map[string]any{}}}
	if subject != "" {
		c["sub"] = subject
	}
	if sid != "" {
		c["sid"] = sid
	}
	return c
}

// PostLogoutToken posts a logout token to a URI, as the provider does, and
// returns the answer's status.
func PostLogoutToken(ctx context.Context, uri, token string) (int, string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, uri, strings.NewReader(url.Values{"logout_token": {token}}.Encode()))
	if err != nil {
		return 0, "", err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), nil
}

// SignOut ends a user's sessions at the provider and tells every client
// with a back-channel logout URI, one logout token per session.
func (o *OP) SignOut(ctx context.Context, userID string) error {
	o.mu.Lock()
	sids := o.logins[userID]
	delete(o.logins, userID)
	var clients []*Client
	for _, c := range o.clients {
		if c.BackChannelLogoutURI != "" {
			clients = append(clients, c)
		}
	}
	o.mu.Unlock()
	if len(sids) == 0 {
		sids = []string{""}
	}
	for _, c := range clients {
		for _, sid := range sids {
			status, body, err := PostLogoutToken(ctx, c.BackChannelLogoutURI, o.Sign(o.LogoutToken(c.ID, userID, sid), "logout+jwt"))
			if err != nil {
				return err
			}
			if status != http.StatusOK {
				return fmt.Errorf("back-channel logout to %s: %d %s", c.BackChannelLogoutURI, status, body)
			}
			o.sent.Add(1)
		}
	}
	return nil
}

// tampering re-signs the next token response's ID token when asked.
func (o *OP) tampering(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		o.mu.Lock()
		f, rogue := o.tamper, o.rogue
		if r.URL.Path == "/oauth/token" {
			o.tamper = nil
		}
		o.mu.Unlock()
		if r.URL.Path != "/oauth/token" || f == nil {
			next.ServeHTTP(w, r)
			return
		}
		rec := httptest.NewRecorder()
		next.ServeHTTP(rec, r)
		var body map[string]any
		if rec.Code != http.StatusOK || json.Unmarshal(rec.Body.Bytes(), &body) != nil {
			copyResponse(w, rec)
			return
		}
		raw, _ := body["id_token"].(string)
		parts := strings.Split(raw, ".")
		if len(parts) != 3 {
			copyResponse(w, rec)
			return
		}
		payload, _ := base64.RawURLEncoding.DecodeString(parts[1])
		var claims map[string]any
		if json.Unmarshal(payload, &claims) != nil {
			copyResponse(w, rec)
			return
		}
		f(claims)
		o.mu.Lock()
		k := o.keys[0]
		o.mu.Unlock()
		if rogue {
			k = newKey()
		}
		body["id_token"] = sign(k, claims, "JWT")
		out, _ := json.Marshal(body)
		for h, v := range rec.Header() {
			if h != "Content-Length" {
				w.Header()[h] = v
			}
		}
		w.WriteHeader(rec.Code)
		w.Write(out)
	})
}

func copyResponse(w http.ResponseWriter, rec *httptest.ResponseRecorder) {
	for h, v := range rec.Header() {
		w.Header()[h] = v
	}
	w.WriteHeader(rec.Code)
	w.Write(rec.Body.Bytes())
}

// login is the provider's login page: a form for username and password.
func (o *OP) login(w http.ResponseWriter, r *http.Request) {
	id := r.FormValue("authRequestID")
	if r.Method == http.MethodGet {
		renderLogin(w, id, "")
		return
	}
	if err := r.ParseForm(); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	username, password := r.FormValue("username"), r.FormValue("password")
	o.mu.Lock()
	var user *User
	for _, u := range o.users {
		if u.Username == username {
			user = u
		}
	}
	disabled := user != nil && user.Disabled && user.Password == password
	o.mu.Unlock()
	if disabled {
		req, err := o.st.AuthRequestByID(r.Context(), id)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		op.AuthRequestError(w, r, req, oidc.ErrAccessDenied().WithDescription("the user account is disabled"), o.prov)
		return
	}
	if err := o.st.CheckUsernamePassword(username, password, id); err != nil {
		renderLogin(w, id, err.Error())
		return
	}
	sid := uuid.NewString()
	o.mu.Lock()
	o.sids[id] = sid
	o.logins[user.ID] = append(o.logins[user.ID], sid)
	o.mu.Unlock()
	http.Redirect(w, r, op.AuthCallbackURL(o.prov)(r.Context(), id), http.StatusFound)
}

// portalSignOut is the provider's own "sign out" (a person signing out at
// the provider's portal, not through a client): GET shows a form, POST
// with username ends that person's sessions here and at every client.
func (o *OP) portalSignOut(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	if r.Method != http.MethodPost {
		io.WriteString(w, `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Test IdP portal</title></head><body>`+
			`<form method="post"><label>Username <input name="username" id="username"></label> <button type="submit">Sign out everywhere</button></form></body></html>`)
		return
	}
	name := r.FormValue("username")
	o.mu.Lock()
	id := ""
	for _, u := range o.users {
		if u.Username == name {
			id = u.ID
		}
	}
	o.mu.Unlock()
	if id == "" {
		http.Error(w, "unknown user", http.StatusNotFound)
		return
	}
	if err := o.SignOut(r.Context(), id); err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	io.WriteString(w, `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Test IdP portal</title></head><body><p id="done">Signed out everywhere.</p></body></html>`)
}

func renderLogin(w http.ResponseWriter, id, errMsg string) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	var b bytes.Buffer
	b.WriteString(`<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Test IdP sign-in</title></head><body><h1>Test IdP</h1>`)
	if errMsg != "" {
		b.WriteString(`<p role="alert">` + html.EscapeString(errMsg) + `</p>`)
	}
	b.WriteString(`<form method="post" action="/login"><input type="hidden" name="authRequestID" value="` + html.EscapeString(id) + `">` +
		`<label>Username <input name="username" id="username"></label> <label>Password <input type="password" name="password" id="password"></label>` +
		` <button type="submit" id="submit">Sign in</button></form></body></html>`)
	w.Write(b.Bytes())
}

// opStorage is the example storage with this provider's keys, clients,
// users' groups and session ids, and back-channel logout.
type opStorage struct {
	*storage.Storage
	op *OP
}

func (s *opStorage) SigningKey(context.Context) (op.SigningKey, error) {
	s.op.mu.Lock()
	defer s.op.mu.Unlock()
	return s.op.keys[0], nil
}

func (s *opStorage) SignatureAlgorithms(context.Context) ([]jose.SignatureAlgorithm, error) {
	return []jose.SignatureAlgorithm{jose.RS256}, nil
}

func (s *opStorage) KeySet(context.Context) ([]op.Key, error) {
	s.op.mu.Lock()
	defer s.op.mu.Unlock()
	var out []op.Key
	for _, k := range s.op.keys {
		out = append(out, publicKey{k})
	}
	return out, nil
}

func (s *opStorage) GetClientByClientID(_ context.Context, id string) (op.Client, error) {
	s.op.mu.Lock()
	defer s.op.mu.Unlock()
	c, ok := s.op.clients[id]
	if !ok {
		return nil, fmt.Errorf("client %q not found", id)
	}
	return client{c}, nil
}

func (s *opStorage) AuthorizeClientIDSecret(_ context.Context, id, secret string) error {
	s.op.mu.Lock()
	defer s.op.mu.Unlock()
	c, ok := s.op.clients[id]
	if !ok || c.Secret != secret {
		return fmt.Errorf("invalid client")
	}
	return nil
}

// SetUserinfoFromRequest adds the groups and the session id (sid) to the
// ID token's claims.
func (s *opStorage) SetUserinfoFromRequest(ctx context.Context, ui *oidc.UserInfo, req op.IDTokenRequest, scopes []string) error {
	if err := s.Storage.SetUserinfoFromRequest(ctx, ui, req, scopes); err != nil {
		return err
	}
	s.op.mu.Lock()
	defer s.op.mu.Unlock()
	if u := s.op.users[req.GetSubject()]; u != nil && len(u.Groups) > 0 {
		ui.AppendClaims("groups", u.Groups)
	}
	if ar, ok := req.(interface{ GetID() string }); ok {
		if sid := s.op.sids[ar.GetID()]; sid != "" {
			ui.AppendClaims("sid", sid)
		}
	}
	return nil
}

// TerminateSession is the end-session endpoint's work: the user's
// sessions end here and at every client with a back-channel logout URI.
func (s *opStorage) TerminateSession(ctx context.Context, userID, clientID string) error {
	if userID == "" {
		return nil
	}
	return s.op.SignOut(ctx, userID)
}

// client is a registered relying party as pkg/op sees it.
type client struct{ c *Client }

func (c client) GetID() string                    { return c.c.ID }
func (c client) RedirectURIs() []string           { return c.c.RedirectURIs }
func (c client) PostLogoutRedirectURIs() []string { return c.c.PostLogoutRedirectURIs }
func (c client) ApplicationType() op.ApplicationType {
	return op.ApplicationTypeWeb
}
func (c client) AuthMethod() oidc.AuthMethod {
	if c.c.Secret == "" {
		return oidc.AuthMethodNone
	}
	return oidc.AuthMethodBasic
}
func (c client) ResponseTypes() []oidc.ResponseType {
	return []oidc.ResponseType{oidc.ResponseTypeCode}
}
func (c client) GrantTypes() []oidc.GrantType { return []oidc.GrantType{oidc.GrantTypeCode} }
func (c client) LoginURL(id string) string    { return "/login?authRequestID=" + url.QueryEscape(id) }
func (c client) AccessTokenType() op.AccessTokenType {
	return op.AccessTokenTypeBearer
}
func (c client) IDTokenLifetime() time.Duration { return time.Hour }
func (c client) DevMode() bool                  { return true }
func (c client) RestrictAdditionalIdTokenScopes() func([]string) []string {
	return func(s []string) []string { return s }
}
func (c client) RestrictAdditionalAccessTokenScopes() func([]string) []string {
	return func(s []string) []string { return s }
}
func (c client) IsScopeAllowed(string) bool { return false }

// IDTokenUserinfoClaimsAssertion puts the e-mail address and name in the
// ID token, as Entra ID, Google and Keycloak do.
func (c client) IDTokenUserinfoClaimsAssertion() bool { return true }
func (c client) ClockSkew() time.Duration             { return 0 }

// userStore gives the example storage this provider's users.
type userStore struct{ o *OP }

func (u userStore) GetUserByID(id string) *storage.User {
	u.o.mu.Lock()
	defer u.o.mu.Unlock()
	return toStorage(u.o.users[id])
}

func (u userStore) GetUserByUsername(name string) *storage.User {
	u.o.mu.Lock()
	defer u.o.mu.Unlock()
	for _, x := range u.o.users {
		if x.Username == name {
			return toStorage(x)
		}
	}
	return nil
}

func (u userStore) ExampleClientID() string { return "service" }

func toStorage(x *User) *storage.User {
	if x == nil {
		return nil
	}
	return &storage.User{ID: x.ID, Username: x.Username, Password: x.Password, FirstName: x.FirstName, LastName: x.LastName,
		Email: x.Email, EmailVerified: x.EmailVerified, PreferredLanguage: language.English}
}
