// Package connections keeps users' connections to external providers (an
// OAuth 2.0 grant, an API token, a password) and attaches their credentials
// to requests the host sends on a connector plugin's behalf. Secrets are
// sealed at rest (Sealer) and never leave this package in clear, except
// to host code that signs in to a file server itself (Login): a plugin
// names a connection, the host adds the credential, and responses are
// scrubbed of it before the plugin sees them.
package connections

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
	"golang.org/x/oauth2"

	"github.com/agenthost/agenthost/host/connections/connrecord"
	"github.com/agenthost/agenthost/host/egress"
	"github.com/agenthost/agenthost/host/secrets"
	"github.com/agenthost/agenthost/host/tenancy"
)

// Errors a connection's use can end in; each wraps more detail.
var (
	// ErrRevoked: the connection was revoked; the user connects again.
	ErrRevoked = errors.New("connection revoked")
	// ErrExpired: the access token ended and cannot be refreshed.
	ErrExpired = errors.New("connection expired")
	// ErrRejected: the provider refused the credential (401) even after a refresh.
	ErrRejected = errors.New("connection rejected by the provider")
	// ErrWrongProvider: the connection belongs to another provider than the connector's.
	ErrWrongProvider = errors.New("connection belongs to another provider")
	// ErrHostRefused: the request's host is not one the connection's credentials may go to.
	ErrHostRefused = errors.New("host not allowed for this connection")
	// ErrUnknownProvider: no provider of that name is configured.
	ErrUnknownProvider = errors.New("unknown provider")
)

// Auth schemes of a connection.
const (
	AuthOAuth2 = "oauth2" // Authorization: Bearer <access token>, refreshed
	AuthToken  = "token"  // Authorization: Bearer <API token>
	AuthBasic  = "basic"  // Authorization: Basic <account:secret> (Jira: e-mail and API token)
)

// Provider is one external provider the operator configured.
type Provider struct {
	Name string
	// Hosts are egress allow-list entries the provider's credentials may be
	// sent to (besides a connection's own base URL host).
	Hosts []string
	// BaseURL is the provider's API root, the base URL of connections that
	// name none (OAuth connections); its host is one of Hosts implicitly.
	BaseURL string
	// DownloadHosts are allow-list entries a redirect from the
	// connection's hosts may lead to, fetched without the credentials and
	// only to read (GET, HEAD): Graph's /content answers 302 to a
	// pre-authenticated URL on *.sharepoint.com. A request is never sent
	// there directly with the connection; a connector's request without
	// credentials may go there with any method (DoUncredentialed: Graph's
	// upload session uploadUrl is on the same storage hosts).
	DownloadHosts []string
	// OAuth is set for providers users connect to by OAuth 2.0.
	OAuth *OAuth
	// Schemes are the URL schemes of its connections' base URLs (default
	// http and https; the file servers' provider: ftp, ftps and sftp).
	Schemes []string
	// AtlassianSites: an OAuth grant names no site; the site's cloud id
	// comes from BaseURL's /oauth/token/accessible-resources and the
	// connection's base URL is BaseURL/ex/jira/{cloudId} (Atlassian 3LO).
	AtlassianSites bool
	// CheckPath is the request (under the connection's base URL) that
	// tries a connection when it is made (Check); the providers the host
	// knows by name have their own.
	CheckPath string
}

// OAuth is a provider's OAuth 2.0 client.
type OAuth struct {
	ClientID     string
	ClientSecret string
	AuthURL      string
	TokenURL     string
	RedirectURL  string
	Scopes       []string
	// AuthParams are extra parameters of the authorisation request: the
	// provider's own way to ask for a refresh token (Google's
	// access_type=offline with prompt=consent; Microsoft's is the
	// offline_access scope, and it takes no access_type) and Atlassian's
	// audience and prompt.
	AuthParams map[string]string
}

func (o *OAuth) config() *oauth2.Config {
	return &oauth2.Config{
		ClientID: o.ClientID, ClientSecret: o.ClientSecret, RedirectURL: o.RedirectURL, Scopes: o.Scopes,
		Endpoint: oauth2.Endpoint{AuthURL: o.AuthURL, TokenURL: o.TokenURL},
	}
}

// Store is what the service needs of the database (*store.DB).
type Store interface {
	CreateConnection(ctx context.Context, p tenancy.Principal, r connrecord.ConnectionRecord) (connrecord.ConnectionRecord, error)
	Connection(ctx context.Context, p tenancy.Principal, id string) (connrecord.ConnectionRecord, error)
	Connections(ctx context.Context, p tenancy.Principal) ([]connrecord.ConnectionRecord, error)
	UpdateConnectionSecret(ctx context.Context, p tenancy.Principal, id string, version int64, secret []byte, expiresAt time.Time) (int64, error)
	RevokeConnection(ctx context.Context, p tenancy.Principal, id string) error
	SaveConnectionAuthState(ctx context.Context, p tenancy.Principal, s connrecord.ConnectionAuthState) error
	TakeConnectionAuthState(ctx context.Context, p tenancy.Principal, state string) (connrecord.ConnectionAuthState, error)
	SetConnectionCheck(ctx context.Context, p tenancy.Principal, id string, at time.Time, lastError string) error
}

// Options configure a Service. Store and Sealer are required.
type Options struct {
	Store     Store
	Sealer    *secrets.Sealer
	Providers []Provider
	// TokenClient sends requests to providers' token endpoints (default: a
	// plain client with a 30 s time-out; the endpoints are the operator's
	// configuration, not a plugin's choice, so neither the egress policy
	// nor -resolve applies to them).
	TokenClient *http.Client
	// Now and Sleep replace the clock (tests).
	Now   func() time.Time
	Sleep func(ctx context.Context, d time.Duration) error
	// RefreshLeeway refreshes an access token this long before it ends (default 1 minute).
	RefreshLeeway time.Duration
	// MaxRetryAfter is the longest Retry-After the host waits for before
	// retrying a 429, 503 or 504 (default 30 s); a longer one is the connector's answer.
	MaxRetryAfter time.Duration
	// AuthStateTTL bounds an OAuth authorisation in flight (default 10 minutes).
	AuthStateTTL time.Duration
	// Check is how a connection is tried when it is made (check.go).
	Check CheckOptions
}

// Service manages connections and sends requests with their credentials.
type Service struct {
	o         Options
	providers map[string]Provider
	// refreshing holds a mutex per connection id being refreshed.
	refreshing sync.Map

	revokedMu sync.Mutex
	onRevoke  []func(id string)
}

// New checks the options and makes a Service. Without a sealer it refuses:
// secrets are never stored in clear.
func New(o Options) (*Service, error) {
	if o.Store == nil {
		return nil, errors.New("connections: no store")
	}
	if o.Sealer == nil {
		return nil, secrets.ErrNoKey
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Sleep == nil {
		o.Sleep = sleep
	}
	if o.RefreshLeeway <= 0 {
		o.RefreshLeeway = time.Minute
	}
	if o.MaxRetryAfter <= 0 {
		o.MaxRetryAfter = 30 * time.Second
	}
	if o.AuthStateTTL <= 0 {
		o.AuthStateTTL = 10 * time.Minute
	}
	s := &Service{o: o, providers: map[string]Provider{}}
	for _, p := range o.Providers {
		if p.Name == "" {
			return nil, errors.New("connections: a provider needs a name")
		}
		if p.BaseURL != "" {
			if _, err := checkBaseURL(p.BaseURL); err != nil {
				return nil, fmt.Errorf("connections: provider %s: %w", p.Name, err)
			}
		}
		for _, h := range slices.Concat(p.Hosts, p.DownloadHosts) {
			if _, err := egress.ParseHostEntry(h); err != nil {
				return nil, fmt.Errorf("connections: provider %s: %w", p.Name, err)
			}
		}
		if p.OAuth != nil && (p.OAuth.ClientID == "" || p.OAuth.AuthURL == "" || p.OAuth.TokenURL == "" || p.OAuth.RedirectURL == "") {
			return nil, fmt.Errorf("connections: provider %s: OAuth needs a client id, the authorisation and token URLs and a redirect URL", p.Name)
		}
		s.providers[p.Name] = p
	}
	return s, nil
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// Connection is a connection as users and tools see it: no secret.
type Connection struct {
	ID       string `json:"id"`
	Provider string `json:"provider"`
	Label    string `json:"label"`
	Auth     string `json:"auth"`
	BaseURL  string `json:"baseUrl,omitempty"`
	// Deployment is the provider's deployment ("cloud", "datacenter"; ""
	// when the base URL tells, as a Jira site on atlassian.net does).
	Deployment string    `json:"deployment,omitempty"`
	Account    string    `json:"account,omitempty"`
	Scopes     []string  `json:"scopes,omitempty"`
	ExpiresAt  time.Time `json:"expiresAt,omitzero"`
	Revoked    bool      `json:"revoked"`
	CreatedAt  time.Time `json:"createdAt"`
	// Status is what the last try of the connection found: StatusChecked
	// (the provider answered), StatusFailed (LastError says why),
	// StatusUnchecked (never tried: the provider has no check) or
	// StatusRevoked.
	Status    string    `json:"status"`
	LastError string    `json:"lastError,omitempty"`
	CheckedAt time.Time `json:"checkedAt,omitzero"`
}

// Deployments of a provider (NewToken.Deployment): its cloud service, or
// a self-managed Data Center (or Server) site, whose API differs (Jira:
// REST v2 instead of v3).
const (
	DeploymentCloud      = "cloud"
	DeploymentDataCenter = "datacenter"
)

// Statuses of a connection (Connection.Status).
const (
	StatusChecked   = "checked"
	StatusFailed    = "failed"
	StatusUnchecked = "unchecked"
	StatusRevoked   = "revoked"
)

func (s *Service) view(r connrecord.ConnectionRecord) Connection {
	c := Connection{ID: r.ID, Provider: r.Provider, Label: r.Label, Auth: r.Auth, BaseURL: s.baseURL(r), Deployment: r.Deployment, Account: r.Account,
		Scopes: r.Scopes, ExpiresAt: r.ExpiresAt, Revoked: r.Revoked(), CreatedAt: r.CreatedAt, LastError: r.LastError, CheckedAt: r.CheckedAt}
	switch {
	case r.Revoked():
		c.Status = StatusRevoked
	case r.LastError != "":
		c.Status = StatusFailed
	case r.CheckedAt.IsZero():
		c.Status = StatusUnchecked
	default:
		c.Status = StatusChecked
	}
	return c
}

// baseURL is the connection's base URL, else its provider's.
func (s *Service) baseURL(r connrecord.ConnectionRecord) string {
	if r.BaseURL != "" {
		return r.BaseURL
	}
	return s.providers[r.Provider].BaseURL
}

// secret is what is sealed in a connection's row.
type secret struct {
	AccessToken  string `json:"accessToken,omitempty"`
	RefreshToken string `json:"refreshToken,omitempty"`
	// Token is an API token (token and basic connections), or a file
	// server's password.
	Token string `json:"token,omitempty"`
	// PrivateKey (PEM) and HostKey (the server's pinned SHA256
	// fingerprint) are an SFTP connection's; the pin is sealed with the
	// secret, so it cannot be swapped in the database either.
	PrivateKey string `json:"privateKey,omitempty"`
	HostKey    string `json:"hostKey,omitempty"`
}

// NewToken is a connection made from an API token or password.
type NewToken struct {
	Provider string
	Label    string
	// Auth is AuthToken (bearer) or AuthBasic (Account and Token as user and password).
	Auth    string
	BaseURL string
	// Deployment says which deployment of the provider BaseURL is:
	// DeploymentCloud, DeploymentDataCenter, or "" (the URL tells: a Jira
	// site on atlassian.net or the gateway is Cloud, another Data Center).
	Deployment string
	Account    string
	Token      string
	// HostKey pins an SFTP server's host key ("SHA256:..." as ssh-keygen -l
	// prints it); PrivateKey is an SFTP key (PEM, unencrypted) used with
	// or instead of the password.
	HostKey    string
	PrivateKey string
}

// AddToken stores a token or password connection for p.
func (s *Service) AddToken(ctx context.Context, p tenancy.Principal, n NewToken) (Connection, error) {
	if _, ok := s.providers[n.Provider]; !ok {
		return Connection{}, fmt.Errorf("%w: %w %q", tenancy.ErrInvalid, ErrUnknownProvider, n.Provider)
	}
	if n.Auth != AuthToken && n.Auth != AuthBasic {
		return Connection{}, fmt.Errorf("%w: a token connection's auth is %q or %q", tenancy.ErrInvalid, AuthToken, AuthBasic)
	}
	if strings.TrimSpace(n.Token) == "" && n.PrivateKey == "" {
		return Connection{}, fmt.Errorf("%w: the token is empty", tenancy.ErrInvalid)
	}
	if n.Auth == AuthBasic && (n.Account == "" || strings.Contains(n.Account, ":")) {
		return Connection{}, fmt.Errorf("%w: basic authentication needs an account name without ':'", tenancy.ErrInvalid)
	}
	base, err := checkBaseURL(n.BaseURL, s.providers[n.Provider].Schemes...)
	if err != nil {
		return Connection{}, err
	}
	if err := checkFileServer(n, base); err != nil {
		return Connection{}, err
	}
	if base == "" && needsBaseURL(s.providers[n.Provider]) {
		return Connection{}, fmt.Errorf("%w: a %s connection needs its site's base URL", tenancy.ErrInvalid, n.Provider)
	}
	switch n.Deployment {
	case "", DeploymentCloud, DeploymentDataCenter:
	default:
		return Connection{}, fmt.Errorf("%w: deployment is %q or %q, not %q", tenancy.ErrInvalid, DeploymentCloud, DeploymentDataCenter, n.Deployment)
	}
	c, err := s.create(ctx, p, connrecord.ConnectionRecord{Provider: n.Provider, Label: n.Label, Auth: n.Auth, BaseURL: base, Account: n.Account, Deployment: n.Deployment},
		secret{Token: n.Token, PrivateKey: n.PrivateKey, HostKey: n.HostKey})
	if err != nil {
		return c, err
	}
	// Tried at once, so that a site that does not answer or a token the
	// provider refuses shows as failed, not as a working connection. The
	// connection is kept either way: the user may fix the site or retry.
	return s.Check(ctx, p, c.ID)
}

// checkBaseURL accepts "" or an absolute URL of one of schemes (default
// http and https) without credentials, query or fragment.
func checkBaseURL(s string, schemes ...string) (string, error) {
	if s == "" {
		return "", nil
	}
	if len(schemes) == 0 {
		schemes = []string{"http", "https"}
	}
	u, err := url.Parse(s)
	if err != nil || !slices.Contains(schemes, u.Scheme) || u.Host == "" || u.User != nil || u.RawQuery != "" || u.ForceQuery || u.Fragment != "" {
		return "", fmt.Errorf("%w: base URL %q must be a %s URL with a host and nothing else", tenancy.ErrInvalid, s, strings.Join(schemes, ", "))
	}
	return strings.TrimSuffix(u.String(), "/"), nil
}

func (s *Service) create(ctx context.Context, p tenancy.Principal, r connrecord.ConnectionRecord, sec secret) (Connection, error) {
	r.ID = newID()
	sealed, err := s.seal(r.ID, sec)
	if err != nil {
		return Connection{}, err
	}
	r.Secret = sealed
	r, err = s.o.Store.CreateConnection(ctx, p, r)
	if err != nil {
		return Connection{}, err
	}
	return s.view(r), nil
}

func (s *Service) seal(id string, sec secret) ([]byte, error) {
	b, err := json.Marshal(sec)
	if err != nil {
		return nil, err
	}
	return s.o.Sealer.Seal(id, b)
}

func (s *Service) open(r connrecord.ConnectionRecord) (secret, error) {
	b, err := s.o.Sealer.Open(r.ID, r.Secret)
	if err != nil {
		return secret{}, err
	}
	var sec secret
	if err := json.Unmarshal(b, &sec); err != nil {
		return secret{}, fmt.Errorf("connections: sealed secret of %s is not a secret document", r.ID)
	}
	return sec, nil
}

// List returns p's connections.
func (s *Service) List(ctx context.Context, p tenancy.Principal) ([]Connection, error) {
	rs, err := s.o.Store.Connections(ctx, p)
	if err != nil {
		return nil, err
	}
	out := make([]Connection, 0, len(rs))
	for _, r := range rs {
		out = append(out, s.view(r))
	}
	return out, nil
}

// Get returns p's connection id.
func (s *Service) Get(ctx context.Context, p tenancy.Principal, id string) (Connection, error) {
	r, err := s.o.Store.Connection(ctx, p, id)
	if err != nil {
		return Connection{}, err
	}
	return s.view(r), nil
}

// Revoke revokes p's connection id; its secret is wiped, and the
// functions given to OnRevoke learn of it (to close sessions they keep).
func (s *Service) Revoke(ctx context.Context, p tenancy.Principal, id string) error {
	if err := s.o.Store.RevokeConnection(ctx, p, id); err != nil {
		return err
	}
	s.revokedMu.Lock()
	hooks := slices.Clone(s.onRevoke)
	s.revokedMu.Unlock()
	for _, f := range hooks {
		f(id)
	}
	return nil
}

// OnRevoke calls f with the id of every connection revoked from now on.
func (s *Service) OnRevoke(f func(id string)) {
	s.revokedMu.Lock()
	defer s.revokedMu.Unlock()
	s.onRevoke = append(s.onRevoke, f)
}

// Login is what the host needs to sign in to a file server with a
// connection. The host speaks FTP and SFTP itself (a plugin has no
// sockets), so this is the one place a secret leaves the package: to host
// code, never to a plugin.
type Login struct {
	Connection
	Password   string
	PrivateKey string
	// HostKey is the SFTP server's pinned SHA256 fingerprint.
	HostKey string
}

// Login opens p's connection id for a connector of provider: revoked,
// another provider's or another user's connections are refused as by Do.
func (s *Service) Login(ctx context.Context, p tenancy.Principal, id, provider string) (Login, error) {
	rec, sec, err := s.usable(ctx, p, id, provider)
	if err != nil {
		return Login{}, err
	}
	return Login{Connection: s.view(rec), Password: sec.Token, PrivateKey: sec.PrivateKey, HostKey: sec.HostKey}, nil
}

// StartAuthorization begins an OAuth 2.0 authorisation code grant with PKCE
// (S256) for p and returns the provider's authorisation URL to send the
// user to. The state and the sealed verifier wait in the store for the
// callback. services, for the microsoft provider, are the services the
// user chose to connect ("files", "outlook", "teams"): only their scopes
// are asked for (incremental consent), so a user without an
// administrator's consent can still connect OneDrive; none asks for the
// provider's configured scopes.
func (s *Service) StartAuthorization(ctx context.Context, p tenancy.Principal, provider, label string, services ...string) (string, error) {
	pr, ok := s.providers[provider]
	if !ok {
		return "", fmt.Errorf("%w: %w %q", tenancy.ErrInvalid, ErrUnknownProvider, provider)
	}
	if pr.OAuth == nil {
		return "", fmt.Errorf("%w: provider %q is not connected by OAuth", tenancy.ErrInvalid, provider)
	}
	if strings.TrimSpace(label) == "" {
		label = provider
	}
	cfg := pr.OAuth.config()
	if len(services) > 0 && provider == "microsoft" {
		cfg.Scopes = []string{"offline_access", "User.Read"}
		for _, sv := range services {
			sc := microsoftServiceScopes(sv)
			if sc == nil {
				return "", fmt.Errorf("%w: unknown Microsoft service %q (files, outlook or teams)", tenancy.ErrInvalid, sv)
			}
			cfg.Scopes = append(cfg.Scopes, sc...)
		}
	}
	state := newID()
	verifier := oauth2.GenerateVerifier()
	sealed, err := s.o.Sealer.Seal("state:"+state, []byte(verifier))
	if err != nil {
		return "", err
	}
	err = s.o.Store.SaveConnectionAuthState(ctx, p, connrecord.ConnectionAuthState{State: state, Provider: provider, Label: label,
		Verifier: sealed, ExpiresAt: s.o.Now().Add(s.o.AuthStateTTL)})
	if err != nil {
		return "", err
	}
	opts := []oauth2.AuthCodeOption{oauth2.S256ChallengeOption(verifier)}
	for _, k := range slices.Sorted(maps.Keys(pr.OAuth.AuthParams)) {
		opts = append(opts, oauth2.SetAuthURLParam(k, pr.OAuth.AuthParams[k]))
	}
	return cfg.AuthCodeURL(state, opts...), nil
}

// CompleteAuthorization ends the grant p started with state: it exchanges
// code (with the PKCE verifier) for tokens and stores the connection. A
// state that is unknown, used, expired or another user's is ErrNotFound;
// nothing is stored unless the exchange succeeded.
func (s *Service) CompleteAuthorization(ctx context.Context, p tenancy.Principal, state, code string) (Connection, error) {
	if state == "" || code == "" {
		return Connection{}, fmt.Errorf("%w: the callback needs state and code", tenancy.ErrInvalid)
	}
	st, err := s.o.Store.TakeConnectionAuthState(ctx, p, state)
	if err != nil {
		return Connection{}, err
	}
	pr, ok := s.providers[st.Provider]
	if !ok || pr.OAuth == nil {
		return Connection{}, fmt.Errorf("%w: provider %q is no longer configured for OAuth", ErrUnknownProvider, st.Provider)
	}
	verifier, err := s.o.Sealer.Open("state:"+state, st.Verifier)
	if err != nil {
		return Connection{}, err
	}
	cfg := pr.OAuth.config()
	tok, err := cfg.Exchange(s.tokenContext(ctx), code, oauth2.VerifierOption(string(verifier)))
	if err != nil {
		return Connection{}, fmt.Errorf("connections: %s refused the authorisation code: %w", st.Provider, cleanOAuthError(err))
	}
	if tok.AccessToken == "" {
		return Connection{}, fmt.Errorf("connections: %s answered without an access token", st.Provider)
	}
	scopes := cfg.Scopes
	if sc, ok := tok.Extra("scope").(string); ok && sc != "" {
		scopes = strings.Fields(sc)
	}
	base := ""
	if pr.AtlassianSites {
		// Atlassian's 3LO grant names no site: the cloud id of the site
		// comes from accessible-resources, and requests go to the gateway.
		if base, err = s.jiraSite(ctx, pr.BaseURL, tok.AccessToken, st.Label); err != nil {
			return Connection{}, err
		}
	}
	c, err := s.create(ctx, p, connrecord.ConnectionRecord{Provider: st.Provider, Label: st.Label, Auth: AuthOAuth2, BaseURL: base, Scopes: scopes, ExpiresAt: s.expiry(tok)},
		secret{AccessToken: tok.AccessToken, RefreshToken: tok.RefreshToken})
	if err != nil {
		return c, err
	}
	return s.Check(ctx, p, c.ID)
}

// cleanOAuthError keeps the provider's error code and description but not
// the raw response body, which could echo request values.
func cleanOAuthError(err error) error {
	var re *oauth2.RetrieveError
	if errors.As(err, &re) {
		if re.ErrorCode != "" {
			return fmt.Errorf("%s %s (HTTP %d)", re.ErrorCode, re.ErrorDescription, re.Response.StatusCode)
		}
		return fmt.Errorf("HTTP %d from the token endpoint", re.Response.StatusCode)
	}
	return err
}

func (s *Service) tokenContext(ctx context.Context) context.Context {
	hc := s.o.TokenClient
	if hc == nil {
		hc = &http.Client{Timeout: 30 * time.Second}
	}
	return context.WithValue(ctx, oauth2.HTTPClient, hc)
}

// usable loads p's connection id for a connector of provider and opens its
// secret, refreshing an access token that ends within the leeway.
func (s *Service) usable(ctx context.Context, p tenancy.Principal, id, provider string) (connrecord.ConnectionRecord, secret, error) {
	r, err := s.o.Store.Connection(ctx, p, id)
	if err != nil {
		return r, secret{}, err
	}
	if r.Revoked() {
		return r, secret{}, fmt.Errorf("%w: connection %q (%s) was revoked on %s; connect again", ErrRevoked, r.Label, r.Provider, r.RevokedAt.Format(time.DateOnly))
	}
	if provider != "" && r.Provider != provider {
		return r, secret{}, fmt.Errorf("%w: connection %q is a %s connection, this connector speaks to %s", ErrWrongProvider, r.Label, r.Provider, provider)
	}
	sec, err := s.open(r)
	if err != nil {
		return r, secret{}, err
	}
	if r.Auth == AuthOAuth2 && !r.ExpiresAt.IsZero() && !s.o.Now().Add(s.o.RefreshLeeway).Before(r.ExpiresAt) {
		return s.refresh(ctx, p, r, sec)
	}
	return r, sec, nil
}

// refresh trades the refresh token for a new access token and stores it.
// r is the version the caller used. Refreshes of one connection are
// serialised in this process, and a refresh another caller (or host)
// stored since r is used instead of refreshing again: providers rotate
// refresh tokens, so a second refresh with the old one would fail.
func (s *Service) refresh(ctx context.Context, p tenancy.Principal, r connrecord.ConnectionRecord, sec secret) (connrecord.ConnectionRecord, secret, error) {
	pr, ok := s.providers[r.Provider]
	if !ok || pr.OAuth == nil {
		return r, sec, fmt.Errorf("%w: provider %q is not configured for OAuth", ErrUnknownProvider, r.Provider)
	}
	mu, _ := s.refreshing.LoadOrStore(r.ID, &sync.Mutex{})
	mu.(*sync.Mutex).Lock()
	defer mu.(*sync.Mutex).Unlock()
	if cur, csec, changed, err := s.changedSince(ctx, p, r); err != nil || changed {
		return cur, csec, err
	}
	if sec.RefreshToken == "" {
		return r, sec, fmt.Errorf("%w: connection %q has no refresh token; connect again", ErrExpired, r.Label)
	}
	tok, err := pr.OAuth.config().TokenSource(s.tokenContext(ctx), &oauth2.Token{RefreshToken: sec.RefreshToken}).Token()
	if err != nil {
		// Another host may have rotated the refresh token meanwhile.
		if cur, csec, changed, cerr := s.changedSince(ctx, p, r); cerr == nil && changed {
			return cur, csec, nil
		}
		return r, sec, fmt.Errorf("%w: refreshing connection %q failed: %w", ErrExpired, r.Label, cleanOAuthError(err))
	}
	next := secret{AccessToken: tok.AccessToken, RefreshToken: tok.RefreshToken}
	if next.RefreshToken == "" {
		next.RefreshToken = sec.RefreshToken // the provider keeps the old one valid
	}
	sealed, err := s.seal(r.ID, next)
	if err != nil {
		return r, sec, err
	}
	expiry := s.expiry(tok)
	v, err := s.o.Store.UpdateConnectionSecret(ctx, p, r.ID, r.Version, sealed, expiry)
	if errors.Is(err, tenancy.ErrConflict) {
		// Another host stored its refresh first: use that one.
		cur, csec, _, err := s.changedSince(ctx, p, r)
		return cur, csec, err
	}
	if err != nil {
		return r, sec, err
	}
	r.Secret, r.Version, r.ExpiresAt = sealed, v, expiry
	return r, next, nil
}

// expiry is when tok ends on the service's clock (oauth2 computes it from
// expires_in on the wall clock).
func (s *Service) expiry(tok *oauth2.Token) time.Time {
	if tok.Expiry.IsZero() {
		return time.Time{}
	}
	return s.o.Now().Add(time.Until(tok.Expiry))
}

// changedSince reads the connection again and reports whether its secret
// changed since r (a refresh by someone else), with the current secret.
func (s *Service) changedSince(ctx context.Context, p tenancy.Principal, r connrecord.ConnectionRecord) (connrecord.ConnectionRecord, secret, bool, error) {
	cur, err := s.o.Store.Connection(ctx, p, r.ID)
	if err != nil {
		return r, secret{}, false, err
	}
	if cur.Revoked() {
		return cur, secret{}, false, fmt.Errorf("%w: connection %q (%s) was revoked; connect again", ErrRevoked, cur.Label, cur.Provider)
	}
	if cur.Version == r.Version {
		return r, secret{}, false, nil
	}
	sec, err := s.open(cur)
	return cur, sec, true, err
}

// Sender sends one request (the connector's egress client).
type Sender func(ctx context.Context, r egress.Request) (*egress.Response, error)

// Do sends r for p through send with connection id's credentials attached.
// provider is the connector's provider (the connection must be one of its)
// and hosts the connector's declared hosts: the request's host must be one
// of them and also the connection's own host (its base URL's, or the
// provider's). Credentials the plugin put in the request are dropped. A 401
// refreshes an OAuth token once and retries; a token the provider still
// refuses is ErrRejected. A 429, 503 or 504 whose Retry-After is short
// (or, for 503 and 504, absent: an exponential backoff) is waited out and
// retried, up to maxRetries times. Every redirect hop is decided by the connection (hop): the
// credentials follow only to its own hosts. The response's headers and body
// are scrubbed of the secret.
func (s *Service) Do(ctx context.Context, p tenancy.Principal, id, provider string, hosts []string, r egress.Request, send Sender) (*egress.Response, error) {
	return s.do(ctx, p, id, provider, hosts, r, send, true)
}

// DoUncredentialed is Do without the credentials, for a pre-authenticated
// URL the provider answered (Graph's upload session uploadUrl: "don't
// include the Authorization header" in its PUTs, "Upload large files with
// an upload session"): it is sent only by a user with a usable connection
// of the provider, only to the provider's download hosts among the
// connector's hosts, and neither it nor any redirect carries a credential.
func (s *Service) DoUncredentialed(ctx context.Context, p tenancy.Principal, id, provider string, hosts []string, r egress.Request, send Sender) (*egress.Response, error) {
	return s.do(ctx, p, id, provider, hosts, r, send, false)
}

func (s *Service) do(ctx context.Context, p tenancy.Principal, id, provider string, hosts []string, r egress.Request, send Sender, credential bool) (*egress.Response, error) {
	u, err := url.Parse(r.URL)
	if err != nil || u.Host == "" {
		return nil, fmt.Errorf("%w: invalid URL %q", tenancy.ErrInvalid, r.URL)
	}
	rec, sec, err := s.usable(ctx, p, id, provider)
	if err != nil {
		return nil, err
	}
	if credential {
		err = s.checkHost(rec, hosts, u)
	} else {
		err = s.checkBare(rec, hosts, u)
	}
	if err != nil {
		return nil, err
	}
	headers := make(map[string]string, len(r.Headers)+1)
	for k, v := range r.Headers {
		switch strings.ToLower(k) {
		case "authorization", "proxy-authorization", "cookie":
			continue // only the host sets credentials
		}
		headers[k] = v
	}
	r.Headers = headers
	refreshed, retries := false, 0
	for {
		if credential {
			r.Headers["Authorization"] = authorization(rec, sec)
		}
		left := !credential // a hop left the connection's hosts: no credential after it
		r.Redirect = func(h egress.Hop) error {
			if !credential {
				return s.checkBare(rec, hosts, h.URL)
			}
			credential, err := s.hop(rec, hosts, h, &left)
			if credential {
				h.Header.Set("Authorization", authorization(rec, sec))
			}
			return err
		}
		resp, err := send(ctx, r)
		if err != nil {
			return nil, fmt.Errorf("connection %q: %w", rec.Label, scrubError(err, rec, sec))
		}
		switch {
		case resp.Status == http.StatusUnauthorized && !credential:
			// The URL's own authentication failed: no refresh helps.
		case resp.Status == http.StatusUnauthorized && rec.Auth == AuthOAuth2 && !refreshed:
			refreshed = true
			if rec, sec, err = s.refresh(ctx, p, rec, sec); err != nil {
				return nil, err
			}
			continue
		case resp.Status == http.StatusUnauthorized:
			return nil, fmt.Errorf("%w: %s answered 401 for connection %q (%s); check or renew its credentials", ErrRejected, u.Host, rec.Label, rec.Provider)
		case throttled(resp.Status) && retries < maxRetries:
			// Graph's throttling guidance ("Microsoft Graph throttling
			// guidance", learn.microsoft.com/graph/throttling) has 429, 503
			// and 504 retried after Retry-After, or with an exponential
			// backoff when it is absent (a 503 often has none).
			d, ok := retryAfter(resp.Headers.Get("Retry-After"), s.o.Now())
			if !ok && resp.Status != http.StatusTooManyRequests {
				d, ok = time.Second<<retries, true
			}
			if ok && d <= s.o.MaxRetryAfter {
				retries++
				if err := s.o.Sleep(ctx, d); err != nil {
					return nil, err
				}
				continue
			}
		}
		scrub(resp, rec, sec)
		return resp, nil
	}
}

func (s *Service) checkHost(rec connrecord.ConnectionRecord, hosts []string, u *url.URL) error {
	if !matches(hosts, u) {
		return fmt.Errorf("%w: %s is not among the connector's hosts", ErrHostRefused, u.Hostname())
	}
	if !matches(s.ownHosts(rec), u) {
		return fmt.Errorf("%w: %s is not connection %q's host", ErrHostRefused, u.Host, rec.Label)
	}
	return nil
}

// checkBare refuses an uncredentialed request to u unless u is on one of
// the connector's hosts that is a download host of rec's provider.
func (s *Service) checkBare(rec connrecord.ConnectionRecord, hosts []string, u *url.URL) error {
	if !matches(hosts, u) {
		return fmt.Errorf("%w: %s is not among the connector's hosts", ErrHostRefused, u.Hostname())
	}
	if !matches(s.providers[rec.Provider].DownloadHosts, u) {
		return fmt.Errorf("%w: %s is not a download host of %s, where a request without the credentials may go", ErrHostRefused, u.Hostname(), rec.Provider)
	}
	return nil
}

// ownHosts are the hosts rec's credentials may go to: its provider's and
// its base URL's.
func (s *Service) ownHosts(rec connrecord.ConnectionRecord) []string {
	own := slices.Clone(s.providers[rec.Provider].Hosts)
	if base := s.baseURL(rec); base != "" {
		if b, err := url.Parse(base); err == nil {
			own = append(own, b.Host)
		}
	}
	return own
}

// matches reports whether u's host and port match one of the allow-list
// entries.
func matches(entries []string, u *url.URL) bool {
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[u.Scheme]
	}
	return egress.HostMatches(entries, u.Hostname(), port)
}

// hop decides one redirect of a request sent with rec's credentials,
// whichever hosts the connector may reach: a hop is checked as a request
// of its own would be, since the provider, not the plugin, chose it. To
// the connection's own hosts it carries the credentials, unless an earlier
// hop left them (*left) or it falls from https to http; to one of the
// provider's download hosts it goes without them, to read only; anywhere
// else it is refused.
func (s *Service) hop(rec connrecord.ConnectionRecord, hosts []string, h egress.Hop, left *bool) (credential bool, err error) {
	if h.First.Scheme == "https" && h.URL.Scheme != "https" {
		return false, fmt.Errorf("%w: %s is not https, and connection %q's request was", ErrHostRefused, h.URL.Host, rec.Label)
	}
	if !matches(hosts, h.URL) {
		return false, fmt.Errorf("%w: %s is not among the connector's hosts", ErrHostRefused, h.URL.Host)
	}
	if matches(s.ownHosts(rec), h.URL) {
		return !*left, nil
	}
	if !matches(s.providers[rec.Provider].DownloadHosts, h.URL) {
		return false, fmt.Errorf("%w: %s is not connection %q's host", ErrHostRefused, h.URL.Host, rec.Label)
	}
	if h.Method != http.MethodGet && h.Method != http.MethodHead {
		return false, fmt.Errorf("%w: %s is a download host of %s, which is only read from, and the redirect keeps the %s", ErrHostRefused, h.URL.Host, rec.Provider, h.Method)
	}
	*left = true
	return false, nil
}

func authorization(r connrecord.ConnectionRecord, sec secret) string {
	switch r.Auth {
	case AuthBasic:
		return "Basic " + base64.StdEncoding.EncodeToString([]byte(r.Account+":"+sec.Token))
	case AuthToken:
		return "Bearer " + sec.Token
	default:
		return "Bearer " + sec.AccessToken
	}
}

// maxRetries bounds the retries of one request the provider throttles.
const maxRetries = 3

// throttled reports whether status asks for the request again later:
// 429 Too Many Requests, 503 Service Unavailable, 504 Gateway Timeout.
func throttled(status int) bool {
	return status == http.StatusTooManyRequests || status == http.StatusServiceUnavailable || status == http.StatusGatewayTimeout
}

// retryAfter parses Retry-After (seconds or an HTTP date).
func retryAfter(v string, now time.Time) (time.Duration, bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, false
	}
	if n, err := strconv.Atoi(v); err == nil && n >= 0 {
		return time.Duration(n) * time.Second, true
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(t.Sub(now), 0), true
	}
	return 0, false
}

// secretForms are the byte strings that reveal a secret: each token, its
// base64, and the credential of the Authorization header the host sends
// (a basic credential is base64 of account:token).
func secretForms(r connrecord.ConnectionRecord, sec secret) [][]byte {
	var out [][]byte
	for _, v := range []string{sec.AccessToken, sec.RefreshToken, sec.Token} {
		if len(v) >= 4 {
			out = append(out, []byte(v), []byte(base64.StdEncoding.EncodeToString([]byte(v))))
		}
	}
	if _, cred, ok := strings.Cut(authorization(r, sec), " "); ok && len(cred) >= 4 {
		out = append(out, []byte(cred))
	}
	return out
}

const redacted = "[redacted]"

// scrub removes the secret from a response: a provider (or a hostile page
// on an allowed host) echoing the credential must not hand it to the plugin.
func scrub(resp *egress.Response, r connrecord.ConnectionRecord, sec secret) {
	forms := secretForms(r, sec)
	for _, f := range forms {
		resp.Body = bytes.ReplaceAll(resp.Body, f, []byte(redacted))
	}
	for k, vs := range resp.Headers {
		for i, v := range vs {
			for _, f := range forms {
				v = strings.ReplaceAll(v, string(f), redacted)
			}
			vs[i] = v
		}
		resp.Headers[k] = vs
	}
}

func scrubError(err error, r connrecord.ConnectionRecord, sec secret) error {
	msg := err.Error()
	clean := msg
	for _, f := range secretForms(r, sec) {
		clean = strings.ReplaceAll(clean, string(f), redacted)
	}
	if clean == msg {
		return err
	}
	var denied *egress.DeniedError
	if errors.As(err, &denied) {
		return &egress.DeniedError{Host: denied.Host, Reason: denied.Reason, Err: denied.Err}
	}
	return errors.New(clean)
}

func newID() string { return uuid.Must(uuid.NewV7()).String() }
