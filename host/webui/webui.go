// Package webui is the workspace UI in the browser: the embedded page and
// its modules (Preact and htm, vendored, no build step), served compressed
// under a Content-Security-Policy that allows no inline script, and the
// browser session that signs a person in with an API token.
//
// A session is a random secret in an HttpOnly, SameSite=Strict cookie; the
// store keeps its hash and the API token it was opened with, so revoking
// the token ends the session. Requests authenticated by the cookie that
// change anything must carry the session's CSRF token in X-CSRF-Token (the
// page reads it from GET /api/v1/session; another site can neither read it
// nor make a browser send it) and, when the browser sends one, an Origin of
// this server.
package webui

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"mime"
	"net/url"
	"path"
	"strings"
	"sync"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/agenthost/agenthost/host/audit"
	"github.com/agenthost/agenthost/host/store"
	"github.com/agenthost/agenthost/host/tenancy"
)

//go:embed assets
var assetFS embed.FS

// CookieName is the session cookie's name. The __Host- prefix would pin it
// to HTTPS, which a local server does not have; the attributes below give
// the same protection over HTTP on localhost.
const CookieName = "agenthost_session"

// KeptCookie holds the browser's other sessions (other organisations
// signed in to, space-separated secrets, HttpOnly like the session cookie):
// the organisation switcher makes one of them the session.
const KeptCookie = "agenthost_kept"

// maxKept bounds the organisations one browser keeps signed in.
const maxKept = 8

// CSRFHeader carries the session's CSRF token on unsafe requests.
const CSRFHeader = "X-CSRF-Token"

// CSP is the page's Content-Security-Policy: scripts and styles only from
// this server's files (no inline script, no eval), data only from its API.
const CSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' blob: data:; media-src 'self' blob:; " +
	"connect-src 'self'; font-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

// Sessions is what the UI needs of the store.
type Sessions interface {
	OpenSession(ctx context.Context, tokenSecret string, ttl time.Duration) (tenancy.Session, string, error)
	SessionBySecret(ctx context.Context, secret string) (tenancy.Session, error)
	EndSession(ctx context.Context, secret string) error
	CompleteSecondFactor(ctx context.Context, sessionID string) error
	OpenUserSession(ctx context.Context, userID string, ttl time.Duration, o tenancy.SessionOrigin) (tenancy.Session, string, error)
	Tenant(ctx context.Context, p tenancy.Principal) (tenancy.Tenant, error)
	User(ctx context.Context, p tenancy.Principal) (tenancy.User, error)
	Workspaces(ctx context.Context, p tenancy.Principal) ([]tenancy.Workspace, error)
}

// Config tunes the UI.
type Config struct {
	// SessionTTL bounds a session's life [12 h]; the API token's own expiry
	// ends it earlier.
	SessionTTL time.Duration
	// Secure marks the cookie Secure (serve over HTTPS, or behind a proxy
	// that terminates it).
	Secure bool
	// Setup, when set, lets the holder of a setup link create the first
	// organisation from the page (POST /api/v1/setup).
	Setup FirstRun
	// SetupTokenTTL is the life of the API token a setup makes [90 days].
	SetupTokenTTL time.Duration
	// Audit records sign-ins in the tenant's audit log; nil records none.
	// TokenOwner names the tenant and user of a token whatever its state,
	// so that a refused sign-in with a known token is recorded in its
	// tenant's log (nil: refusals are not recorded).
	Audit      audit.Recorder
	TokenOwner func(ctx context.Context, secret string) (tenantID, userID string, ok bool)
	// LogoutURL, when set, names where the browser goes after signing out
	// of a session (the identity provider's end-session page for a session
	// it opened), or "" for nowhere.
	LogoutURL func(ctx context.Context, s tenancy.Session) string
}

// UI serves the page, its assets and the session routes.
type UI struct {
	sessions Sessions
	cfg      Config
	assets   map[string]*asset
}

// asset is one file of the page. Its gzip form is made on its first
// request, not in New: compressing every asset at the best level took 85 ms
// of each start-up once the PDF renderer (1.7 MB) was vendored, for files
// most start-ups never serve.
type asset struct {
	body   []byte
	ctype  string
	etag   string
	gzOnce sync.Once
	gzBody []byte
}

// gz is the asset gzip-compressed, made once.
func (a *asset) gz() []byte {
	a.gzOnce.Do(func() {
		var buf bytes.Buffer
		w, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
		w.Write(a.body)
		w.Close()
		a.gzBody = buf.Bytes()
	})
	return a.gzBody
}

// New builds the UI; its assets are read once, here.
func New(s Sessions, cfg Config) (*UI, error) {
	if cfg.SessionTTL <= 0 {
		cfg.SessionTTL = 12 * time.Hour
	}
	if cfg.SetupTokenTTL <= 0 {
		cfg.SetupTokenTTL = 90 * 24 * time.Hour
	}
	u := &UI{sessions: s, cfg: cfg, assets: map[string]*asset{}}
	err := fs.WalkDir(assetFS, "assets", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		body, err := assetFS.ReadFile(p)
		if err != nil {
			return err
		}
		ext := path.Ext(p)
		ctype := mime.TypeByExtension(ext)
		switch ext {
		case ".mjs", ".js":
			ctype = "text/javascript; charset=utf-8"
		case ".txt":
			ctype = "text/plain; charset=utf-8"
		}
		sum := sha256.Sum256(body)
		u.assets[strings.TrimPrefix(p, "assets/")] = &asset{body: body, ctype: ctype, etag: `"` + hex.EncodeToString(sum[:8]) + `"`}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("webui: assets: %w", err)
	}
	return u, nil
}

// Pages are the paths the page itself answers (the UI routes in the
// browser); each serves index.html, and the page decides what to show.
func Pages() []string {
	return []string{"/", "/connections", "/settings", "/people", "/admin", "/admin/:view", "/join", "/w/:ws", "/w/:ws/c/:wf", "/w/:ws/files", "/w/:ws/sources"}
}

// HandlePage serves index.html under the CSP.
func (u *UI) HandlePage() fiber.Handler {
	return func(c *fiber.Ctx) error {
		c.Set("Cache-Control", "no-cache")
		return u.send(c, "index.html")
	}
}

// HandleAsset serves GET /assets/:file.
func (u *UI) HandleAsset() fiber.Handler {
	return func(c *fiber.Ctx) error {
		name := c.Params("file")
		if name == "index.html" {
			return fiber.ErrNotFound
		}
		// A changed asset has a changed ETag; the page revalidates.
		c.Set("Cache-Control", "no-cache")
		return u.send(c, name)
	}
}

// HandleFavicon answers /favicon.ico, which browsers ask for whatever the
// page links, with the page's icon (an SVG, which browsers take by its
// content type).
func (u *UI) HandleFavicon() fiber.Handler {
	return func(c *fiber.Ctx) error {
		c.Set("Cache-Control", "max-age=86400")
		return u.send(c, "icon.svg")
	}
}

func (u *UI) send(c *fiber.Ctx, name string) error {
	a, ok := u.assets[name]
	if !ok {
		return fiber.ErrNotFound
	}
	SecurityHeaders(c)
	c.Set(fiber.HeaderContentType, a.ctype)
	c.Set(fiber.HeaderETag, a.etag)
	c.Set(fiber.HeaderVary, fiber.HeaderAcceptEncoding)
	if c.Get(fiber.HeaderIfNoneMatch) == a.etag {
		return c.SendStatus(fiber.StatusNotModified)
	}
	if strings.Contains(c.Get(fiber.HeaderAcceptEncoding), "gzip") {
		c.Set(fiber.HeaderContentEncoding, "gzip")
		return c.Send(a.gz())
	}
	return c.Send(a.body)
}

// SecurityHeaders sets the CSP and the headers that go with it.
func SecurityHeaders(c *fiber.Ctx) {
	c.Set("Content-Security-Policy", CSP)
	c.Set("X-Content-Type-Options", "nosniff")
	c.Set("Referrer-Policy", "same-origin")
	c.Set("X-Frame-Options", "DENY")
}

// signIn is POST /api/v1/session's body.
type signIn struct {
	Token string `json:"token"`
}

// sessionInfo is what GET /api/v1/session answers: who is signed in, where,
// and the CSRF token the page sends back.
type sessionInfo struct {
	User       tenancy.User        `json:"user"`
	Tenant     tenancy.Tenant      `json:"tenant"`
	Workspaces []tenancy.Workspace `json:"workspaces"`
	CSRF       string              `json:"csrf"`
	ExpiresAt  time.Time           `json:"expiresAt"`
	// Accounts are the organisations this browser is signed in to, the
	// session's first; switch with POST /api/v1/session/switch.
	Accounts []account `json:"accounts"`
}

// account is one organisation the browser is signed in to.
type account struct {
	SessionID string `json:"sessionId"`
	Tenant    string `json:"tenant"`
	Email     string `json:"email"`
}

// HandleSignIn exchanges an API token for a session cookie. There are no
// passwords in agenthost (users sign in with tokens an admin issues), so a
// token is the only credential. The request must come from this server's
// own page (Origin check), so another site cannot sign a browser in as
// someone else (login CSRF).
func (u *UI) HandleSignIn(decode func(*fiber.Ctx, any) error) fiber.Handler {
	return func(c *fiber.Ctx) error {
		if err := sameOrigin(c); err != nil {
			return err
		}
		var r signIn
		if err := decode(c, &r); err != nil {
			return err
		}
		if strings.TrimSpace(r.Token) == "" {
			return fmt.Errorf("%w: token is required", tenancy.ErrInvalid)
		}
		s, secret, err := u.sessions.OpenSession(c.UserContext(), strings.TrimSpace(r.Token), u.cfg.SessionTTL)
		if err != nil {
			// An unknown token names no tenant: there is no tenant's log to
			// record that failure in. A known one (revoked, expired, its
			// user deactivated) is recorded in its tenant's.
			if u.cfg.TokenOwner != nil && errors.Is(err, tenancy.ErrUnauthenticated) {
				if tenant, user, ok := u.cfg.TokenOwner(c.UserContext(), strings.TrimSpace(r.Token)); ok {
					_ = audit.Record(c.UserContext(), u.cfg.Audit, audit.Entry{TenantID: tenant,
						Actor: audit.Actor{Kind: audit.ActorUser, ID: user, Via: audit.ViaToken}, Action: audit.SignInFailed,
						TargetType: "user", TargetID: user, Detail: audit.Detail(map[string]string{"method": "token", "reason": err.Error()})})
				}
			}
			return err
		}
		_ = audit.Record(c.UserContext(), u.cfg.Audit, audit.Entry{TenantID: s.Principal.TenantID,
			Actor: audit.Actor{Kind: audit.ActorUser, ID: s.Principal.UserID, Via: audit.ViaToken}, Action: audit.SignInSucceeded,
			TargetType: "user", TargetID: s.Principal.UserID, Detail: audit.Detail(map[string]string{"method": "token"})})
		// Signing in while signed in adds an organisation: the session so
		// far is kept (unless it is the same user's), and the new one is
		// the session.
		kept := u.live(c.UserContext(), append([]string{c.Cookies(CookieName)}, strings.Fields(c.Cookies(KeptCookie))...))
		var others []string
		for _, k := range kept {
			if k.s.Principal.UserID != s.Principal.UserID {
				others = append(others, k.secret)
			}
		}
		u.setCookies(c, secret, s.ExpiresAt, others)
		if s.SecondFactorPending {
			// Nothing of the tenant is shown before the second factor.
			return c.Status(fiber.StatusCreated).JSON(pendingInfo{SecondFactor: "required", CSRF: s.CSRF})
		}
		info, err := u.info(c.UserContext(), s, others)
		if err != nil {
			return err
		}
		return c.Status(fiber.StatusCreated).JSON(info)
	}
}

// pendingInfo is what a sign-in answers when the session waits for its
// second factor: only that, and the CSRF token its next steps need.
type pendingInfo struct {
	SecondFactor string `json:"secondFactor"`
	CSRF         string `json:"csrf"`
}

// PendingSession is the session of the request's cookie when it waits for
// its second factor; the CSRF rules are Principal's. Any other is
// ErrUnauthenticated.
func (u *UI) PendingSession(c *fiber.Ctx) (tenancy.Session, error) {
	secret := c.Cookies(CookieName)
	if secret == "" {
		return tenancy.Session{}, fmt.Errorf("%w: not signed in", tenancy.ErrUnauthenticated)
	}
	s, err := u.sessions.SessionBySecret(c.UserContext(), secret)
	if err != nil {
		return tenancy.Session{}, err
	}
	if err := checkCSRF(c, s); err != nil {
		return tenancy.Session{}, err
	}
	if !s.SecondFactorPending {
		return tenancy.Session{}, fmt.Errorf("%w: the session is not waiting for a second factor", tenancy.ErrUnauthenticated)
	}
	return s, nil
}

// CompleteSecondFactor marks the pending session s as having passed its
// second factor and answers who is signed in, as a sign-in does.
func (u *UI) CompleteSecondFactor(c *fiber.Ctx, s tenancy.Session) error {
	if err := u.sessions.CompleteSecondFactor(c.UserContext(), s.ID); err != nil {
		return err
	}
	s.SecondFactorPending = false
	info, err := u.info(c.UserContext(), s, strings.Fields(c.Cookies(KeptCookie)))
	if err != nil {
		return err
	}
	return c.JSON(info)
}

// CancelSecondFactor ends the pending session of the request (the person
// gave up the second step) and clears its cookie; the browser's other
// organisations are kept.
func (u *UI) CancelSecondFactor(c *fiber.Ctx) error {
	if err := u.sessions.EndSession(c.UserContext(), c.Cookies(CookieName)); err != nil {
		return err
	}
	c.Cookie(&fiber.Cookie{Name: CookieName, Value: "", Path: "/", HTTPOnly: true, SameSite: fiber.CookieSameSiteStrictMode,
		Secure: u.cfg.Secure, Expires: time.Unix(1, 0), MaxAge: -1})
	return c.SendStatus(fiber.StatusNoContent)
}

// SignInAs is SignInUser for a sign-in made by the page itself (a
// passkey): it answers as POST /api/v1/session does, with who is signed in.
// The caller has checked the request's origin and the proof.
func (u *UI) SignInAs(c *fiber.Ctx, userID string, o tenancy.SessionOrigin) error {
	s, err := u.SignInUser(c, userID, o)
	if err != nil {
		return err
	}
	// The organisations kept are those SignInUser kept: the request's
	// other live sessions of other users.
	var others []string
	for _, k := range u.live(c.UserContext(), append([]string{c.Cookies(CookieName)}, strings.Fields(c.Cookies(KeptCookie))...)) {
		if k.s.Principal.UserID != s.Principal.UserID {
			others = append(others, k.secret)
		}
	}
	info, err := u.info(c.UserContext(), s, others)
	if err != nil {
		return err
	}
	return c.Status(fiber.StatusCreated).JSON(info)
}

// SameOrigin refuses a request whose Origin (or Referer) names another
// host: sign-in routes use it against login CSRF.
func SameOrigin(c *fiber.Ctx) error { return sameOrigin(c) }

// CurrentSession is the session the request's cookie stands for (ok false
// without a live one): the settings page marks it and keeps it when ending
// the others.
func (u *UI) CurrentSession(c *fiber.Ctx) (tenancy.Session, bool) {
	secret := c.Cookies(CookieName)
	if secret == "" {
		return tenancy.Session{}, false
	}
	s, err := u.sessions.SessionBySecret(c.UserContext(), secret)
	return s, err == nil
}

// HandleSession answers who the session is (401 without one).
func (u *UI) HandleSession() fiber.Handler {
	return func(c *fiber.Ctx) error {
		secret := c.Cookies(CookieName)
		if secret == "" {
			return fmt.Errorf("%w: not signed in", tenancy.ErrUnauthenticated)
		}
		s, err := u.sessions.SessionBySecret(c.UserContext(), secret)
		if err != nil {
			return err
		}
		if s.SecondFactorPending {
			return store.ErrSecondFactorRequired
		}
		info, err := u.info(c.UserContext(), s, strings.Fields(c.Cookies(KeptCookie)))
		if err != nil {
			return err
		}
		c.Set("Cache-Control", "no-store")
		return c.JSON(info)
	}
}

// switchRequest is POST /api/v1/session/switch's body.
type switchRequest struct {
	SessionID string `json:"sessionId"`
}

// HandleSwitch makes another organisation the browser is signed in to the
// session (the organisation switcher); the current session is kept. It is
// an unsafe method: Principal's CSRF check runs first (routes.go).
func (u *UI) HandleSwitch(decode func(*fiber.Ctx, any) error) fiber.Handler {
	return func(c *fiber.Ctx) error {
		var r switchRequest
		if err := decode(c, &r); err != nil {
			return err
		}
		cur := c.Cookies(CookieName)
		kept := u.live(c.UserContext(), strings.Fields(c.Cookies(KeptCookie)))
		for i, k := range kept {
			if k.s.ID != r.SessionID {
				continue
			}
			others := []string{cur}
			for j, o := range kept {
				if j != i {
					others = append(others, o.secret)
				}
			}
			u.setCookies(c, k.secret, k.s.ExpiresAt, others)
			if k.s.SecondFactorPending {
				// The page goes on to the second step; nothing of the
				// tenant is shown before it.
				return c.JSON(pendingInfo{SecondFactor: "required", CSRF: k.s.CSRF})
			}
			info, err := u.info(c.UserContext(), k.s, others)
			if err != nil {
				return err
			}
			return c.JSON(info)
		}
		return fmt.Errorf("%w: this browser is not signed in to session %q", tenancy.ErrNotFound, r.SessionID)
	}
}

// SignInUser opens a session for a user whom a sign-in method (an
// identity provider, a passkey) has authenticated, and makes it the
// browser's session; the browser's other organisations are kept, as
// HandleSignIn keeps them.
func (u *UI) SignInUser(c *fiber.Ctx, userID string, o tenancy.SessionOrigin) (tenancy.Session, error) {
	s, secret, err := u.sessions.OpenUserSession(c.UserContext(), userID, u.cfg.SessionTTL, o)
	if err != nil {
		return tenancy.Session{}, err
	}
	kept := u.live(c.UserContext(), append([]string{c.Cookies(CookieName)}, strings.Fields(c.Cookies(KeptCookie))...))
	var others []string
	for _, k := range kept {
		if k.s.Principal.UserID != s.Principal.UserID {
			others = append(others, k.secret)
		}
	}
	u.setCookies(c, secret, s.ExpiresAt, others)
	return s, nil
}

// signedOut is HandleSignOut's answer when the browser has somewhere to go
// next: the identity provider's end-session page.
type signedOut struct {
	Redirect string `json:"redirect"`
}

// HandleSignOut ends the session and every other one the browser kept, and
// clears the cookies. It is an unsafe method, so it goes through
// Principal's CSRF check first (routes.go). A session an identity provider
// opened answers where to sign out there too (RP-initiated logout).
func (u *UI) HandleSignOut() fiber.Handler {
	return func(c *fiber.Ctx) error {
		redirect := ""
		if cur := c.Cookies(CookieName); cur != "" && u.cfg.LogoutURL != nil {
			if s, err := u.sessions.SessionBySecret(c.UserContext(), cur); err == nil {
				redirect = u.cfg.LogoutURL(c.UserContext(), s)
			}
		}
		for _, secret := range append([]string{c.Cookies(CookieName)}, strings.Fields(c.Cookies(KeptCookie))...) {
			if secret == "" {
				continue
			}
			if err := u.sessions.EndSession(c.UserContext(), secret); err != nil {
				return err
			}
		}
		for _, name := range []string{CookieName, KeptCookie} {
			c.Cookie(&fiber.Cookie{Name: name, Value: "", Path: "/", HTTPOnly: true, SameSite: fiber.CookieSameSiteStrictMode,
				Secure: u.cfg.Secure, Expires: time.Unix(1, 0), MaxAge: -1})
		}
		if redirect != "" {
			return c.JSON(signedOut{Redirect: redirect})
		}
		return c.SendStatus(fiber.StatusNoContent)
	}
}

// setCookies makes secret the session and keeps others.
func (u *UI) setCookies(c *fiber.Ctx, secret string, expires time.Time, others []string) {
	c.Cookie(&fiber.Cookie{Name: CookieName, Value: secret, Path: "/", HTTPOnly: true, SameSite: fiber.CookieSameSiteStrictMode,
		Secure: u.cfg.Secure, Expires: expires})
	if len(others) > maxKept {
		others = others[:maxKept]
	}
	kept := &fiber.Cookie{Name: KeptCookie, Value: strings.Join(others, " "), Path: "/", HTTPOnly: true,
		SameSite: fiber.CookieSameSiteStrictMode, Secure: u.cfg.Secure, Expires: time.Now().Add(u.cfg.SessionTTL)}
	if len(others) == 0 {
		kept.Expires, kept.MaxAge = time.Unix(1, 0), -1
	}
	c.Cookie(kept)
}

type liveSession struct {
	secret string
	s      tenancy.Session
}

// live returns the sessions of secrets that are still live, in order,
// without duplicates; ended, expired and malformed ones are dropped.
func (u *UI) live(ctx context.Context, secrets []string) []liveSession {
	var out []liveSession
	seen := map[string]bool{}
	for _, secret := range secrets {
		if secret == "" || seen[secret] {
			continue
		}
		seen[secret] = true
		if s, err := u.sessions.SessionBySecret(ctx, secret); err == nil {
			out = append(out, liveSession{secret, s})
		}
	}
	return out
}

func (u *UI) info(ctx context.Context, s tenancy.Session, others []string) (sessionInfo, error) {
	user, err := u.sessions.User(ctx, s.Principal)
	if err != nil {
		return sessionInfo{}, err
	}
	t, err := u.sessions.Tenant(ctx, s.Principal)
	if err != nil {
		return sessionInfo{}, err
	}
	ws, err := u.sessions.Workspaces(ctx, s.Principal)
	if err != nil {
		return sessionInfo{}, err
	}
	if ws == nil {
		ws = []tenancy.Workspace{}
	}
	accounts := []account{{SessionID: s.ID, Tenant: t.Name, Email: user.Email}}
	for _, k := range u.live(ctx, others) {
		ku, err := u.sessions.User(ctx, k.s.Principal)
		if err != nil {
			continue
		}
		kt, err := u.sessions.Tenant(ctx, k.s.Principal)
		if err != nil {
			continue
		}
		accounts = append(accounts, account{SessionID: k.s.ID, Tenant: kt.Name, Email: ku.Email})
	}
	return sessionInfo{User: user, Tenant: t, Workspaces: ws, CSRF: s.CSRF, ExpiresAt: s.ExpiresAt, Accounts: accounts}, nil
}

// Principal authenticates a request by its session cookie: ok is false when
// the request carries none (the caller then asks for a bearer token). An
// unsafe method needs the session's CSRF token in X-CSRF-Token and, when
// the browser names one, an Origin of this server.
func (u *UI) Principal(c *fiber.Ctx) (p tenancy.Principal, ok bool, err error) {
	secret := c.Cookies(CookieName)
	if secret == "" {
		return tenancy.Principal{}, false, nil
	}
	s, err := u.sessions.SessionBySecret(c.UserContext(), secret)
	if err != nil {
		return tenancy.Principal{}, true, err
	}
	if err := checkCSRF(c, s); err != nil {
		return tenancy.Principal{}, true, err
	}
	p, err = admitted(s)
	return p, true, err
}

// admitted is the principal of a live session, unless its second factor
// is pending: only the second-factor routes (PendingSession) serve it.
func admitted(s tenancy.Session) (tenancy.Principal, error) {
	if s.SecondFactorPending {
		return tenancy.Principal{}, store.ErrSecondFactorRequired
	}
	return s.Principal, nil
}

// SessionPrincipal is the principal of the session whose cookie secret is
// given, as Principal admits it for a safe request: an error once the
// session ended, its token was revoked or its second factor is pending.
// Responses that outlive their request (event streams) check it again.
func (u *UI) SessionPrincipal(ctx context.Context, secret string) (tenancy.Principal, error) {
	s, err := u.sessions.SessionBySecret(ctx, secret)
	if err != nil {
		return tenancy.Principal{}, err
	}
	return admitted(s)
}

// checkCSRF refuses an unsafe request without the session's CSRF token or
// from another origin.
func checkCSRF(c *fiber.Ctx, s tenancy.Session) error {
	switch c.Method() {
	case fiber.MethodGet, fiber.MethodHead, fiber.MethodOptions:
		return nil
	}
	if err := sameOrigin(c); err != nil {
		return err
	}
	got := c.Get(CSRFHeader)
	if got == "" || subtle.ConstantTimeCompare([]byte(got), []byte(s.CSRF)) != 1 {
		return fmt.Errorf("%w: missing or wrong %s (a page of another site, or a stale page: reload)", tenancy.ErrForbidden, CSRFHeader)
	}
	return nil
}

// sameOrigin refuses a request whose Origin (or, without one, Referer)
// names another host than the one it was sent to. Requests with neither
// are not from a browser page (curl, tests) and pass.
func sameOrigin(c *fiber.Ctx) error {
	origin := c.Get(fiber.HeaderOrigin)
	if origin == "" {
		origin = c.Get(fiber.HeaderReferer)
	}
	if origin == "" {
		return nil
	}
	o, err := url.Parse(origin)
	if err != nil || o.Host != c.Hostname() {
		return fmt.Errorf("%w: request from another origin (%s)", tenancy.ErrForbidden, origin)
	}
	return nil
}
