package signin

import (
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"github.com/gofiber/fiber/v2"
)

// backChannelEvent is the member a logout token's events claim must have
// (OpenID Connect Back-Channel Logout 1.0, section 2.4).
const backChannelEvent = "http://schemas.openid.net/event/backchannel-logout"

// maxLogoutTokenAge bounds how old a logout token's iat may be; older
// ones, and any jti seen within it, are refused (replays).
const maxLogoutTokenAge = 5 * time.Minute

// logoutClaims are the logout token's claims besides those go-oidc checks.
type logoutClaims struct {
	Subject  string                     `json:"sub"`
	SID      string                     `json:"sid"`
	IssuedAt int64                      `json:"iat"`
	JTI      string                     `json:"jti"`
	Events   map[string]json.RawMessage `json:"events"`
	Nonce    *string                    `json:"nonce"`
}

// HandleBackChannelLogout serves POST /auth/oidc/:provider/backchannel-logout:
// the provider posts a logout token (form field logout_token) when a
// person signs out there or is disabled, and every session it opened for
// that person (by sid, or by sub) ends. The token is validated as section
// 2.6 of the specification says: signature by the provider's keys, iss,
// aud, iat (and exp when present), the events claim, sub and/or sid, no
// nonce, and a jti not seen before.
func (s *Service) HandleBackChannelLogout() fiber.Handler {
	return func(c *fiber.Ctx) error {
		c.Set("Cache-Control", "no-store")
		p, ok := s.providers[c.Params("provider")]
		if !ok {
			return c.Status(fiber.StatusNotFound).JSON(fiber.Map{"error": "invalid_request", "error_description": "unknown provider"})
		}
		bad := func(err error) error {
			s.d.Logger.Warn("back-channel logout refused", "provider", p.cfg.Name, "err", err)
			return c.Status(fiber.StatusBadRequest).JSON(fiber.Map{"error": "invalid_request", "error_description": err.Error()})
		}
		raw := c.FormValue("logout_token")
		if raw == "" {
			return bad(errors.New("logout_token is required"))
		}
		ctx := c.UserContext()
		rp, err := s.discover(ctx, p)
		if err != nil {
			return c.Status(fiber.StatusBadGateway).JSON(fiber.Map{"error": "temporarily_unavailable", "error_description": err.Error()})
		}
		// A logout token need not carry exp; when it does, go-oidc checks it.
		var peek struct {
			Exp *int64 `json:"exp"`
		}
		cl, err := s.verifyLogoutToken(c, rp, p, raw, &peek)
		if err != nil {
			return bad(err)
		}
		n, err := s.d.Store.EndProviderSessions(ctx, "oidc:"+p.cfg.Name, cl.Subject, cl.SID)
		if err != nil {
			return err
		}
		s.d.Logger.Info("back-channel logout", "provider", p.cfg.Name, "sessions", n)
		return c.SendStatus(fiber.StatusOK)
	}
}

func (s *Service) verifyLogoutToken(c *fiber.Ctx, rp *oidc.Provider, p *provider, raw string, peek *struct {
	Exp *int64 `json:"exp"`
}) (logoutClaims, error) {
	ctx := s.ctx(c.UserContext())
	// First the signature, issuer and audience, with expiry left to the
	// check below (exp is optional in a logout token).
	tok, err := rp.VerifierContext(ctx, &oidc.Config{ClientID: p.cfg.ClientID, SkipExpiryCheck: true, Now: s.d.Now}).Verify(ctx, raw)
	if err != nil {
		return logoutClaims{}, fmt.Errorf("logout token: %w", err)
	}
	var cl logoutClaims
	if err := tok.Claims(&cl); err != nil {
		return logoutClaims{}, fmt.Errorf("logout token: %w", err)
	}
	if err := tok.Claims(peek); err != nil {
		return logoutClaims{}, fmt.Errorf("logout token: %w", err)
	}
	now := s.d.Now()
	if peek.Exp != nil && !now.Add(-leeway).Before(time.Unix(*peek.Exp, 0)) {
		return logoutClaims{}, errors.New("logout token expired")
	}
	iat := time.Unix(cl.IssuedAt, 0)
	switch {
	case cl.IssuedAt == 0:
		return logoutClaims{}, errors.New("logout token has no iat")
	case iat.After(now.Add(leeway)):
		return logoutClaims{}, errors.New("logout token issued in the future")
	case iat.Before(now.Add(-maxLogoutTokenAge)):
		return logoutClaims{}, errors.New("logout token too old")
	case cl.Nonce != nil:
		return logoutClaims{}, errors.New("a logout token must not have a nonce (is it an ID token?)")
	case cl.Subject == "" && cl.SID == "":
		return logoutClaims{}, errors.New("logout token names neither sub nor sid")
	case cl.JTI == "":
		return logoutClaims{}, errors.New("logout token has no jti")
	}
	ev, ok := cl.Events[backChannelEvent]
	var obj map[string]any
	if !ok || json.Unmarshal(ev, &obj) != nil {
		return logoutClaims{}, errors.New("logout token's events claim lacks " + backChannelEvent)
	}
	if !s.jtis.first(p.cfg.Name+" "+cl.JTI, now) {
		return logoutClaims{}, errors.New("logout token replayed (jti seen before)")
	}
	return cl, nil
}

// replayCache remembers the jti of logout tokens for maxLogoutTokenAge, so
// that one token ends sessions once. It is per process: tokens older than
// that are refused anyway, and a replay to another host can only end
// sessions the token ended already.
type replayCache struct {
	mu   sync.Mutex
	seen map[string]time.Time
}

func newReplayCache() *replayCache { return &replayCache{seen: map[string]time.Time{}} }

// first reports whether key is new, and remembers it.
func (r *replayCache) first(key string, now time.Time) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	for k, t := range r.seen {
		if now.Sub(t) > 2*maxLogoutTokenAge {
			delete(r.seen, k)
		}
	}
	if _, ok := r.seen[key]; ok {
		return false
	}
	r.seen[key] = now
	return true
}
