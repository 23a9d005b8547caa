package signin

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"html"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"github.com/gofiber/fiber/v2"
	"golang.org/x/oauth2"

	"github.com/agenthost/agenthost/host/audit"
	"github.com/agenthost/agenthost/host/store"
	"github.com/agenthost/agenthost/host/tenancy"
)

// Store is what sign-in needs of the store.
type Store interface {
	StartSignInFlow(ctx context.Context, f store.SignInFlow) error
	TakeSignInFlow(ctx context.Context, state string) (store.SignInFlow, error)
	SignInIdentity(ctx context.Context, in store.IdentitySignIn) (store.SignInOutcome, error)
	TenantByRef(ctx context.Context, ref string) (tenancy.Tenant, error)
	Workspaces(ctx context.Context, p tenancy.Principal) ([]tenancy.Workspace, error)
	EndProviderSessions(ctx context.Context, provider, subject, sid string) (int64, error)
	InvitationBySecret(ctx context.Context, secret string) (store.Invitation, error)
}

// Sessions opens the browser's session for a signed-in user (webui.UI).
type Sessions interface {
	SignInUser(c *fiber.Ctx, userID string, o tenancy.SessionOrigin) (tenancy.Session, error)
}

// Audit actions of invitations (sign-ins use audit.SignInSucceeded and
// audit.SignInFailed).
const (
	InvitationCreated  = "invitation.created"
	InvitationAccepted = "invitation.accepted"
	InvitationRevoked  = "invitation.revoked"
)

// Deps are the service's collaborators.
type Deps struct {
	Store    Store
	Sessions Sessions
	Logger   *slog.Logger
	// HTTP talks to the providers [a client with a 15 s timeout].
	HTTP *http.Client
	// Now is the clock tokens are checked against [time.Now].
	Now func() time.Time
	// Audit records sign-ins and their failures; nil: none.
	Audit audit.Recorder
}

// Service serves sign-in through the configured providers.
type Service struct {
	cfg       Config
	d         Deps
	providers map[string]*provider
	order     []string
	jtis      *replayCache
}

// provider is one configured provider and what discovery found.
type provider struct {
	cfg Provider
	mu  sync.Mutex
	// rp is set by the first discovery that succeeds; a provider that is
	// down at start-up is tried again at the next sign-in.
	rp         *oidc.Provider
	endSession string
}

// flowTTL bounds the time between the redirect to the provider and the
// callback.
const flowTTL = 10 * time.Minute

// stateCookie binds a sign-in flow to the browser that started it: the
// callback's state must equal it (login CSRF). SameSite=Lax: the callback
// is a top-level navigation from the provider's site, which a Strict
// cookie would not come with.
const stateCookie = "agenthost_signin"

// leeway is the clock difference tolerated between here and a provider.
const leeway = time.Minute

// New builds the service; nothing is fetched until the first sign-in.
func New(cfg Config, d Deps) (*Service, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	if d.Logger == nil {
		d.Logger = slog.Default()
	}
	if d.HTTP == nil {
		d.HTTP = &http.Client{Timeout: 15 * time.Second}
	}
	if d.Now == nil {
		d.Now = time.Now
	}
	s := &Service{cfg: cfg, d: d, providers: map[string]*provider{}, jtis: newReplayCache()}
	for _, p := range cfg.Providers {
		s.providers[p.Name] = &provider{cfg: p}
		s.order = append(s.order, p.Name)
	}
	return s, nil
}

// Config returns the configuration in effect (defaults applied).
func (s *Service) Config() Config { return s.cfg }

// RedirectURI is where a provider sends the browser back to.
func (s *Service) RedirectURI(name string) string {
	return strings.TrimRight(s.cfg.PublicURL, "/") + "/auth/oidc/" + name + "/callback"
}

// BackChannelLogoutURI is where a provider posts its logout tokens.
func (s *Service) BackChannelLogoutURI(name string) string {
	return strings.TrimRight(s.cfg.PublicURL, "/") + "/auth/oidc/" + name + "/backchannel-logout"
}

func (s *Service) ctx(ctx context.Context) context.Context { return oidc.ClientContext(ctx, s.d.HTTP) }

// discover returns the provider's discovered configuration, fetching it
// the first time (and again after a failure).
func (s *Service) discover(ctx context.Context, p *provider) (*oidc.Provider, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.rp != nil {
		return p.rp, nil
	}
	// The provider's key set fetches keys later, under the context given
	// here: it must outlive this request.
	rp, err := oidc.NewProvider(s.ctx(context.WithoutCancel(ctx)), p.cfg.Issuer)
	if err != nil {
		return nil, &idpError{provider: p.cfg.Label, err: err}
	}
	var extra struct {
		EndSession string `json:"end_session_endpoint"`
	}
	if err := rp.Claims(&extra); err != nil {
		return nil, &idpError{provider: p.cfg.Label, err: err}
	}
	p.rp, p.endSession = rp, extra.EndSession
	return rp, nil
}

func (s *Service) oauth(p *provider, rp *oidc.Provider) *oauth2.Config {
	return &oauth2.Config{ClientID: p.cfg.ClientID, ClientSecret: p.cfg.ClientSecret, Endpoint: rp.Endpoint(),
		RedirectURL: s.RedirectURI(p.cfg.Name), Scopes: append([]string{oidc.ScopeOpenID}, p.cfg.Scopes...)}
}

// idpError is a provider that could not be reached or answered nonsense.
type idpError struct {
	provider string
	err      error
}

func (e *idpError) Error() string {
	return fmt.Sprintf("the identity provider %s cannot be reached or answered wrongly: %v", e.provider, e.err)
}
func (e *idpError) Unwrap() error { return e.err }

func random() string {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(fmt.Sprintf("signin: no randomness: %v", err)) // crypto/rand never fails on supported systems
	}
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// ProviderInfo is a sign-in button.
type ProviderInfo struct {
	Name  string `json:"name"`
	Label string `json:"label"`
	URL   string `json:"url"`
}

// Providers lists the sign-in buttons, in the configuration's order.
func (s *Service) Providers() []ProviderInfo {
	out := []ProviderInfo{}
	for _, n := range s.order {
		p := s.providers[n]
		out = append(out, ProviderInfo{Name: n, Label: p.cfg.Label, URL: "/auth/oidc/" + n})
	}
	return out
}

// HandleProviders serves GET /api/v1/auth/providers: the sign-in page's
// buttons.
func (s *Service) HandleProviders() fiber.Handler {
	return func(c *fiber.Ctx) error {
		c.Set("Cache-Control", "no-store")
		return c.JSON(s.Providers())
	}
}

// HandleStart serves GET /auth/oidc/:provider: it keeps a new flow (state,
// nonce, PKCE verifier, an invitation followed) and sends the browser to
// the provider.
func (s *Service) HandleStart() fiber.Handler {
	return func(c *fiber.Ctx) error {
		p, ok := s.providers[c.Params("provider")]
		if !ok {
			return s.page(c, fiber.StatusNotFound, "Unknown sign-in provider", "This server has no sign-in provider named "+c.Params("provider")+".")
		}
		invitation := c.Query("invitation")
		ctx := c.UserContext()
		if invitation != "" {
			if _, err := s.d.Store.InvitationBySecret(ctx, invitation); err != nil {
				return s.fail(c, p, "", err)
			}
		}
		rp, err := s.discover(ctx, p)
		if err != nil {
			return s.fail(c, p, "", err)
		}
		f := store.SignInFlow{State: random(), Provider: p.cfg.Name, Nonce: random(), Verifier: oauth2.GenerateVerifier(),
			Invitation: invitation, Return: ReturnPath(c.Query("return")), ExpiresAt: s.d.Now().Add(flowTTL)}
		if err := s.d.Store.StartSignInFlow(ctx, f); err != nil {
			return s.fail(c, p, "", err)
		}
		c.Cookie(&fiber.Cookie{Name: stateCookie, Value: f.State, Path: "/auth/oidc/" + p.cfg.Name, HTTPOnly: true,
			SameSite: fiber.CookieSameSiteLaxMode, Secure: strings.HasPrefix(s.cfg.PublicURL, "https:"), MaxAge: int(flowTTL / time.Second)})
		c.Set("Cache-Control", "no-store")
		// The invitation's secret is in this address: it must not reach the
		// provider as a Referer.
		c.Set("Referrer-Policy", "no-referrer")
		return c.Redirect(s.oauth(p, rp).AuthCodeURL(f.State, oidc.Nonce(f.Nonce), oauth2.S256ChallengeOption(f.Verifier)), fiber.StatusFound)
	}
}

// returnPrefixes are where a sign-in may return to besides the UI's home:
// the authorization endpoint of an MCP client's sign-in (host/oauthserver).
var returnPrefixes = []string{"/oauth/authorize?"}

// ReturnPath is raw if the browser may be sent there after signing in,
// else "": only this server's own paths that are listed in returnPrefixes,
// so a sign-in link is never an open redirect.
func ReturnPath(raw string) string {
	for _, p := range returnPrefixes {
		if strings.HasPrefix(raw, p) && !strings.ContainsAny(raw, "\\\r\n") && len(raw) <= 8<<10 {
			return raw
		}
	}
	return ""
}

// claims are the ID token's claims sign-in reads.
type claims struct {
	Subject       string `json:"sub"`
	Email         string `json:"email"`
	EmailVerified *bool  `json:"email_verified"`
	Name          string `json:"name"`
	SID           string `json:"sid"`
	IssuedAt      int64  `json:"iat"`
	Nonce         string `json:"nonce"`
}

// HandleCallback serves GET /auth/oidc/:provider/callback: it checks the
// state against the browser's, takes the flow (once), exchanges the code
// with the PKCE verifier, verifies the ID token (signature by the
// provider's current keys, issuer, audience, expiry, issue time, nonce),
// resolves the person in the provider's tenant and opens the session.
func (s *Service) HandleCallback() fiber.Handler {
	return func(c *fiber.Ctx) error {
		p, ok := s.providers[c.Params("provider")]
		if !ok {
			return s.page(c, fiber.StatusNotFound, "Unknown sign-in provider", "This server has no sign-in provider named "+c.Params("provider")+".")
		}
		ctx := c.UserContext()
		state := c.Query("state")
		// The cookie is single-use whatever happens next.
		c.Cookie(&fiber.Cookie{Name: stateCookie, Value: "", Path: "/auth/oidc/" + p.cfg.Name, HTTPOnly: true,
			SameSite: fiber.CookieSameSiteLaxMode, Expires: time.Unix(1, 0), MaxAge: -1})
		if state == "" || subtle.ConstantTimeCompare([]byte(state), []byte(c.Cookies(stateCookie))) != 1 {
			return s.fail(c, p, "", fmt.Errorf("%w: the sign-in's state does not match this browser's (start again from the sign-in page)", tenancy.ErrUnauthenticated))
		}
		flow, err := s.d.Store.TakeSignInFlow(ctx, state)
		if err != nil {
			return s.fail(c, p, "", err)
		}
		if flow.Provider != p.cfg.Name {
			return s.fail(c, p, "", fmt.Errorf("%w: the sign-in was started with another provider", tenancy.ErrUnauthenticated))
		}
		if e := c.Query("error"); e != "" {
			desc := c.Query("error_description")
			if desc == "" {
				desc = e
			}
			return s.fail(c, p, "", fmt.Errorf("%w: %s refused the sign-in: %s (%s)", tenancy.ErrForbidden, p.cfg.Label, desc, e))
		}
		rp, err := s.discover(ctx, p)
		if err != nil {
			return s.fail(c, p, "", err)
		}
		tok, err := s.oauth(p, rp).Exchange(s.ctx(ctx), c.Query("code"), oauth2.VerifierOption(flow.Verifier))
		if err != nil {
			var re *oauth2.RetrieveError
			if errors.As(err, &re) && re.ErrorCode != "" {
				return s.fail(c, p, "", fmt.Errorf("%w: %s did not accept the sign-in's code: %s %s", tenancy.ErrUnauthenticated, p.cfg.Label, re.ErrorCode, re.ErrorDescription))
			}
			return s.fail(c, p, "", &idpError{provider: p.cfg.Label, err: err})
		}
		raw, _ := tok.Extra("id_token").(string)
		if raw == "" {
			return s.fail(c, p, "", fmt.Errorf("%w: %s sent no ID token", tenancy.ErrUnauthenticated, p.cfg.Label))
		}
		idt, err := rp.VerifierContext(s.ctx(ctx), &oidc.Config{ClientID: p.cfg.ClientID, Now: s.d.Now}).Verify(s.ctx(ctx), raw)
		if err != nil {
			return s.fail(c, p, "", fmt.Errorf("%w: the ID token from %s is not valid: %v", tenancy.ErrUnauthenticated, p.cfg.Label, err))
		}
		var cl claims
		var all map[string]any
		if err := idt.Claims(&cl); err != nil {
			return s.fail(c, p, "", fmt.Errorf("%w: the ID token's claims: %v", tenancy.ErrUnauthenticated, err))
		}
		if err := idt.Claims(&all); err != nil {
			return s.fail(c, p, "", fmt.Errorf("%w: the ID token's claims: %v", tenancy.ErrUnauthenticated, err))
		}
		// go-oidc checks exp and nbf; a token issued in the future (a
		// provider's clock ahead, or a forged token) is refused here.
		if cl.IssuedAt == 0 || time.Unix(cl.IssuedAt, 0).After(s.d.Now().Add(leeway)) {
			return s.fail(c, p, "", fmt.Errorf("%w: the ID token from %s is not valid yet (issued at %s)", tenancy.ErrUnauthenticated, p.cfg.Label, time.Unix(cl.IssuedAt, 0).UTC().Format(time.RFC3339)))
		}
		if subtle.ConstantTimeCompare([]byte(idt.Nonce), []byte(flow.Nonce)) != 1 {
			return s.fail(c, p, "", fmt.Errorf("%w: the ID token was not issued for this sign-in (nonce)", tenancy.ErrUnauthenticated))
		}
		if idt.AccessTokenHash != "" {
			if err := idt.VerifyAccessToken(tok.AccessToken); err != nil {
				return s.fail(c, p, "", fmt.Errorf("%w: the access token does not match the ID token: %v", tenancy.ErrUnauthenticated, err))
			}
		}
		if cl.Email == "" && rp.UserInfoEndpoint() != "" {
			// Some providers put the address only in the userinfo answer.
			ui, err := rp.UserInfo(s.ctx(ctx), oauth2.StaticTokenSource(tok))
			if err != nil {
				return s.fail(c, p, "", &idpError{provider: p.cfg.Label, err: err})
			}
			if ui.Subject != idt.Subject {
				return s.fail(c, p, "", fmt.Errorf("%w: the userinfo answer is for another subject", tenancy.ErrUnauthenticated))
			}
			cl.Email = ui.Email
			v := ui.EmailVerified
			cl.EmailVerified = &v
			var extra map[string]any
			if ui.Claims(&extra) == nil {
				for k, v := range extra {
					if _, ok := all[k]; !ok {
						all[k] = v
					}
				}
			}
		}
		return s.finish(c, p, flow, idt.Subject, cl, all, raw)
	}
}

// finish admits the person the provider vouched for and opens the session.
func (s *Service) finish(c *fiber.Ctx, p *provider, flow store.SignInFlow, subject string, cl claims, all map[string]any, rawIDToken string) error {
	ctx := c.UserContext()
	email := strings.ToLower(strings.TrimSpace(cl.Email))
	// The operator may vouch for a provider's addresses (Entra ID sends
	// no email_verified: its addresses are the directory's).
	verified := !*p.cfg.RequireVerifiedEmail || (cl.EmailVerified != nil && *cl.EmailVerified)
	if !verified {
		return s.fail(c, p, email, fmt.Errorf("%w: %s does not vouch for the address %s (email_verified)", tenancy.ErrForbidden, p.cfg.Label, email))
	}
	invited := false
	if flow.Invitation != "" {
		if inv, err := s.d.Store.InvitationBySecret(ctx, flow.Invitation); err == nil && inv.Email == email {
			invited = true
		}
	}
	if !invited && !domainAllowed(email, p.cfg.AllowedDomains) {
		return s.fail(c, p, email, fmt.Errorf("%w: %s is not of a domain this organisation admits through %s", tenancy.ErrForbidden, email, p.cfg.Label))
	}
	tn, err := s.d.Store.TenantByRef(ctx, p.cfg.Tenant)
	if err != nil {
		return s.fail(c, p, email, fmt.Errorf("the provider %s is bound to tenant %q: %w", p.cfg.Label, p.cfg.Tenant, err))
	}
	admin, grants, err := s.mapRoles(ctx, p, tn.ID, all)
	if err != nil {
		return s.fail(c, p, email, err)
	}
	out, err := s.d.Store.SignInIdentity(ctx, store.IdentitySignIn{TenantID: tn.ID, Provider: "oidc:" + p.cfg.Name, Subject: subject,
		Email: email, Name: cl.Name, EmailVerified: verified, Invitation: flow.Invitation, JustInTime: p.cfg.Provisioning == JustInTime,
		Admin: admin, Grants: grants})
	if err != nil {
		return s.failTenant(c, p, tn.ID, email, err)
	}
	sess, err := s.d.Sessions.SignInUser(c, out.User.ID, tenancy.SessionOrigin{Provider: "oidc:" + p.cfg.Name, Subject: subject, SID: cl.SID, IDToken: rawIDToken})
	if err != nil {
		return s.failTenant(c, p, tn.ID, email, err)
	}
	if out.Invitation != nil {
		s.record(c, audit.Entry{Action: InvitationAccepted, TenantID: tn.ID, Actor: audit.Actor{Kind: audit.ActorUser, ID: out.User.ID, Via: "oidc"},
			TargetType: "invitation", TargetID: out.Invitation.ID, Detail: audit.Detail(map[string]any{"email": email, "provider": p.cfg.Name})})
	}
	s.record(c, audit.Entry{Action: audit.SignInSucceeded, TenantID: tn.ID, Actor: audit.Actor{Kind: audit.ActorUser, ID: out.User.ID, Via: "oidc"},
		TargetType: "user", TargetID: out.User.ID,
		Detail: audit.Detail(map[string]any{"provider": p.cfg.Name, "email": email, "created": out.Created, "session": sess.ID})})
	s.d.Logger.Info("signed in", "provider", p.cfg.Name, "tenant", tn.ID, "user", out.User.ID, "created", out.Created)
	to := "/"
	if flow.Return != "" {
		to = flow.Return
	}
	return s.redirectPage(c, to)
}

func domainAllowed(email string, domains []string) bool {
	at := strings.LastIndexByte(email, '@')
	if at <= 0 {
		return false
	}
	d := email[at+1:]
	for _, a := range domains {
		if d == a {
			return true
		}
	}
	return false
}

// mapRoles turns the role claim's values into the tenant admin flag and
// workspace grants of the provider's tenant.
func (s *Service) mapRoles(ctx context.Context, p *provider, tenantID string, all map[string]any) (bool, []store.Grant, error) {
	m := p.cfg.Roles
	if m.Claim == "" {
		return false, nil, nil
	}
	values := map[string]bool{}
	switch v := all[m.Claim].(type) {
	case string:
		values[v] = true
	case []any:
		for _, x := range v {
			if s, ok := x.(string); ok {
				values[s] = true
			}
		}
	}
	admin := false
	for _, a := range m.Admin {
		admin = admin || values[a]
	}
	var grants []store.Grant
	var ws []tenancy.Workspace
	for _, w := range m.Workspaces {
		if !values[w.Value] {
			continue
		}
		if ws == nil {
			var err error
			if ws, err = s.d.Store.Workspaces(ctx, tenancy.Principal{TenantID: tenantID, Admin: true}); err != nil {
				return false, nil, err
			}
		}
		id := ""
		for _, x := range ws {
			if x.ID == w.Workspace || (id == "" && x.Name == w.Workspace) {
				id = x.ID
			}
		}
		if id == "" {
			return false, nil, fmt.Errorf("%w: the role mapping of %s names workspace %q, which the organisation does not have", tenancy.ErrNotFound, p.cfg.Label, w.Workspace)
		}
		grants = append(grants, store.Grant{WorkspaceID: id, Role: w.Role})
	}
	return admin, grants, nil
}

// LogoutURL is where the browser goes to sign out at the provider that
// opened a session (RP-initiated logout), or "" for a session no provider
// opened or a provider without an end-session endpoint.
func (s *Service) LogoutURL(ctx context.Context, sess tenancy.Session) string {
	name, ok := strings.CutPrefix(sess.Origin.Provider, "oidc:")
	if !ok {
		return ""
	}
	p, ok := s.providers[name]
	if !ok {
		return ""
	}
	if _, err := s.discover(ctx, p); err != nil || p.endSession == "" {
		return ""
	}
	q := url.Values{"client_id": {p.cfg.ClientID}, "post_logout_redirect_uri": {strings.TrimRight(s.cfg.PublicURL, "/") + "/"}}
	if sess.Origin.IDToken != "" {
		q.Set("id_token_hint", sess.Origin.IDToken)
	}
	sep := "?"
	if strings.Contains(p.endSession, "?") {
		sep = "&"
	}
	return p.endSession + sep + q.Encode()
}

// fail answers a failed sign-in with a page that says why, and records it.
func (s *Service) fail(c *fiber.Ctx, p *provider, email string, err error) error {
	tenantID := ""
	if tn, e := s.d.Store.TenantByRef(c.UserContext(), p.cfg.Tenant); e == nil {
		tenantID = tn.ID
	}
	return s.failTenant(c, p, tenantID, email, err)
}

func (s *Service) failTenant(c *fiber.Ctx, p *provider, tenantID, email string, err error) error {
	status, title := fiber.StatusBadRequest, "Sign-in failed"
	var idp *idpError
	switch {
	case errors.As(err, &idp):
		status, title = fiber.StatusBadGateway, "The identity provider cannot be reached"
	case errors.Is(err, tenancy.ErrForbidden):
		status, title = fiber.StatusForbidden, "Sign-in refused"
	case errors.Is(err, tenancy.ErrUnauthenticated), errors.Is(err, tenancy.ErrInvalid):
	case errors.Is(err, tenancy.ErrNotFound), errors.Is(err, tenancy.ErrConflict):
		status = fiber.StatusConflict
	default:
		status = fiber.StatusInternalServerError
	}
	msg := err.Error()
	for _, e := range []error{tenancy.ErrForbidden, tenancy.ErrUnauthenticated, tenancy.ErrInvalid, tenancy.ErrNotFound, tenancy.ErrConflict} {
		msg = strings.TrimPrefix(msg, e.Error()+": ")
	}
	s.d.Logger.Warn("sign-in failed", "provider", p.cfg.Name, "status", status, "err", msg)
	if tenantID != "" {
		s.record(c, audit.Entry{Action: audit.SignInFailed, TenantID: tenantID, Actor: audit.Actor{Kind: audit.ActorSystem},
			TargetType: "email", TargetID: email, Detail: audit.Detail(map[string]any{"provider": p.cfg.Name, "reason": msg})})
	}
	return s.page(c, status, title, msg)
}

func (s *Service) record(c *fiber.Ctx, e audit.Entry) {
	if s.d.Audit == nil {
		return
	}
	e.IP, e.UserAgent = c.IP(), c.Get(fiber.HeaderUserAgent)
	if err := s.d.Audit.Record(c.UserContext(), e); err != nil {
		s.d.Logger.Error("audit record lost", "action", e.Action, "err", err)
	}
}

// pageCSP allows the page's inline style only: it has no script.
const pageCSP = "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

// page answers a small HTML page (an error, a choice) with no script.
func (s *Service) page(c *fiber.Ctx, status int, title, body string, links ...[2]string) error {
	var b strings.Builder
	b.WriteString(`<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width">`)
	b.WriteString(`<title>` + html.EscapeString(title) + ` · agenthost</title><style>body{font:16px/1.5 system-ui,sans-serif;max-width:36em;margin:4em auto;padding:0 1em}</style></head><body>`)
	b.WriteString(`<h1>` + html.EscapeString(title) + `</h1><p role="alert">` + html.EscapeString(body) + `</p>`)
	if len(links) == 0 {
		links = [][2]string{{"/", "Back to the sign-in page"}}
	}
	b.WriteString(`<ul>`)
	for _, l := range links {
		b.WriteString(`<li><a href="` + html.EscapeString(l[0]) + `">` + html.EscapeString(l[1]) + `</a></li>`)
	}
	b.WriteString(`</ul></body></html>`)
	c.Set("Content-Security-Policy", pageCSP)
	c.Set("X-Content-Type-Options", "nosniff")
	c.Set("Referrer-Policy", "no-referrer")
	c.Set("Cache-Control", "no-store")
	c.Set(fiber.HeaderContentType, fiber.MIMETextHTMLCharsetUTF8)
	return c.Status(status).SendString(b.String())
}

// redirectPage sends the browser on with a page of its own rather than a
// redirect: the callback is a navigation from the provider's site, and the
// SameSite=Strict session cookie is sent only on a navigation this site
// starts (the refresh).
func (s *Service) redirectPage(c *fiber.Ctx, to string) error {
	c.Set("Content-Security-Policy", pageCSP)
	c.Set("Referrer-Policy", "no-referrer")
	c.Set("Cache-Control", "no-store")
	c.Set(fiber.HeaderContentType, fiber.MIMETextHTMLCharsetUTF8)
	e := html.EscapeString(to)
	return c.SendString(`<!doctype html><html lang="en"><head><meta charset="utf-8"><meta http-equiv="refresh" content="0;url=` + e +
		`"><title>Signed in · agenthost</title></head><body><p>Signed in. <a href="` + e + `">Continue</a></p></body></html>`)
}
