// Package oauthserver is the authorization server of MCP clients that sign
// in like people (the MCP authorization spec 2025-11-25: OAuth 2.1 with
// PKCE, RFC 8414 metadata, RFC 7591 dynamic registration, client ID
// metadata documents, RFC 8707 resources, RFC 7009 revocation). A person
// signs in through the UI's sign-in (a session cookie, host/signin's
// providers) and consents to one workspace and scopes; the client's tokens
// then act as that person in that workspace at its MCP endpoint
// (host/mcpserver), never beyond the person's own rights, and nowhere
// else: the API refuses them. It is served by the API's listener, where the
// person's session is.
package oauthserver

import (
	"context"
	"log/slog"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/agenthost/agenthost/host/audit"
	"github.com/agenthost/agenthost/host/egress"
	"github.com/agenthost/agenthost/host/signin"
	"github.com/agenthost/agenthost/host/store"
	"github.com/agenthost/agenthost/host/tenancy"
)

// Scopes a client may be granted. A grant always has ScopeRead; ScopeWrite
// lets it call the workspace's writing tools, if its person may write there.
const (
	ScopeRead  = "mcp:read"
	ScopeWrite = "mcp:write"
)

// Scopes are the scopes this server grants.
func Scopes() []string { return []string{ScopeRead, ScopeWrite} }

// Store is what the server keeps in the store (store.DB).
type Store interface {
	PutOAuthClient(ctx context.Context, c store.OAuthClient) error
	OAuthClientByID(ctx context.Context, id string) (store.OAuthClient, error)
	AuthorizeOAuth(ctx context.Context, p tenancy.Principal, a store.OAuthAuthorization) (store.OAuthGrant, string, error)
	TakeOAuthCode(ctx context.Context, code string) (store.OAuthCode, error)
	IssueOAuthTokens(ctx context.Context, grantID string, ttl store.TokenTTLs) (store.OAuthTokens, error)
	RefreshOAuthTokens(ctx context.Context, clientID, refresh string, ttl store.TokenTTLs) (store.OAuthTokens, error)
	RevokeOAuthToken(ctx context.Context, clientID, token string) (*store.OAuthGrant, error)
	Workspaces(ctx context.Context, p tenancy.Principal) ([]tenancy.Workspace, error)
	Levels(ctx context.Context, p tenancy.Principal, workspaceID string) (read, write tenancy.Level, err error)
}

// Sessions finds the person's browser session (webui.UI).
type Sessions interface {
	CurrentSession(c *fiber.Ctx) (tenancy.Session, bool)
}

// Providers lists the sign-in providers a person without a session may
// sign in with (signin.Service); nil: none.
type Providers interface {
	Providers() []signin.ProviderInfo
}

// Fetcher fetches client ID metadata documents (an *egress.Client: no
// private addresses, bounded size and time).
type Fetcher interface {
	Do(ctx context.Context, r egress.Request) (*egress.Response, error)
}

// Config is the server's configuration.
type Config struct {
	// Issuer is the server's URL (the API's public URL): its metadata is
	// at Issuer + /.well-known/oauth-authorization-server.
	Issuer string
	// AccessTTL, RefreshTTL and CodeTTL bound the lives of access tokens
	// [15 min], refresh tokens [30 days, renewed by each rotation] and
	// authorization codes [1 min].
	AccessTTL, RefreshTTL, CodeTTL time.Duration
	// DocumentTTL is how long a fetched client ID metadata document is
	// used before it is fetched again [10 min].
	DocumentTTL time.Duration
	// Origins are browser-based clients' origins (scheme://host[:port])
	// served across origins (CORS) at the metadata, registration, token
	// and revocation endpoints: the MCP endpoint's list.
	Origins []string
	// PerMinute bounds each client address's requests per minute to each
	// endpoint [60: authorization; twice that: tokens and revocation;
	// a sixth: registration].
	PerMinute int
}

func (c Config) withDefaults() Config {
	c.Issuer = strings.TrimRight(c.Issuer, "/")
	if c.AccessTTL <= 0 {
		c.AccessTTL = 15 * time.Minute
	}
	if c.RefreshTTL <= 0 {
		c.RefreshTTL = 30 * 24 * time.Hour
	}
	if c.CodeTTL <= 0 {
		c.CodeTTL = time.Minute
	}
	if c.DocumentTTL <= 0 {
		c.DocumentTTL = 10 * time.Minute
	}
	if c.PerMinute <= 0 {
		c.PerMinute = 60
	}
	return c
}

// Deps are the server's collaborators.
type Deps struct {
	Store     Store
	Sessions  Sessions
	Providers Providers
	// Documents fetches client ID metadata documents; nil: such clients
	// are refused (and the metadata does not offer them).
	Documents Fetcher
	Audit     audit.Recorder
	Logger    *slog.Logger
}

// Server is the authorization server.
type Server struct {
	cfg     Config
	d       Deps
	origins map[string]bool
	limits  *limiter
}

// New returns the server.
func New(cfg Config, d Deps) *Server {
	cfg = cfg.withDefaults()
	if d.Logger == nil {
		d.Logger = slog.New(slog.DiscardHandler)
	}
	s := &Server{cfg: cfg, d: d, origins: map[string]bool{}, limits: newLimiter()}
	for _, o := range cfg.Origins {
		s.origins[strings.ToLower(strings.TrimSuffix(o, "/"))] = true
	}
	return s
}

// Issuer is the server's issuer URL.
func (s *Server) Issuer() string { return s.cfg.Issuer }

// Paths of the endpoints, below the issuer.
const (
	MetadataPath     = "/.well-known/oauth-authorization-server"
	AuthorizePath    = "/oauth/authorize"
	TokenPath        = "/oauth/token"
	RegistrationPath = "/oauth/register"
	RevocationPath   = "/oauth/revoke"
)

// Routes registers the endpoints on the API's app. Each is rate-limited
// by client address; the browser's pages (authorize) carry the person's
// session, the others no cookie at all.
func (s *Server) Routes(app fiber.Router) {
	pm := s.cfg.PerMinute
	// CORS (and the preflights) of the endpoints a browser-based client
	// calls; the authorization page is a navigation, not a fetch.
	app.Use(MetadataPath, s.cors("GET"))
	app.Get(MetadataPath, s.limit("metadata", 4*pm), s.handleMetadata)
	app.Get(AuthorizePath, s.limit("authorize", pm), s.handleAuthorize)
	app.Post(AuthorizePath, s.limit("authorize", pm), s.handleConsent)
	for path, h := range map[string]fiber.Handler{TokenPath: s.handleToken, RegistrationPath: s.handleRegister, RevocationPath: s.handleRevoke} {
		n := pm * 2
		if path == RegistrationPath {
			n = max(pm/6, 1)
		}
		app.Use(path, s.cors("POST"))
		app.Post(path, s.limit(path, n), h)
	}
}

// record writes an audit entry; a failure is logged, not the request's.
func (s *Server) record(c *fiber.Ctx, e audit.Entry) {
	if s.d.Audit == nil {
		return
	}
	e.IP, e.UserAgent = c.IP(), string(c.Request().Header.UserAgent())
	if err := s.d.Audit.Record(c.UserContext(), e); err != nil {
		s.d.Logger.Warn("oauth: audit", "action", e.Action, "err", err)
	}
}
