package api

import (
	"context"
	"fmt"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/agenthost/agenthost/host/tenancy"
	"github.com/agenthost/agenthost/host/webui"
)

// Authenticator turns an API token secret into the acting principal.
type Authenticator interface {
	Authenticate(ctx context.Context, secret string) (tenancy.Principal, error)
}

const principalKey = "agenthost.principal"

// recheckKey holds the request's credential check (a recheck), for
// responses that outlive the request: an event stream ends when the token
// or session it was opened with is revoked, expires or loses its user.
const recheckKey = "agenthost.recheck"

// recheck authenticates the request's credential once more; it fails with
// tenancy.ErrUnauthenticated once the credential no longer admits the
// principal it admitted (revoked, expired, deactivated, another role), or
// with another error when the check itself could not be made.
type recheck func(ctx context.Context) error

// requireAuth admits requests that carry `Authorization: Bearer <token>` of
// a live API token, or the UI's session cookie (ui may be nil: no sessions),
// and makes the principal available to handlers. A bearer token wins over a
// cookie; the cookie's CSRF rules are the UI's (webui.UI.Principal).
func requireAuth(a Authenticator, ui *webui.UI) fiber.Handler {
	return func(c *fiber.Ctx) error {
		p, again, err := authenticate(c, a, ui)
		if err != nil {
			return err
		}
		c.Locals(principalKey, p)
		c.Locals(recheckKey, again)
		withActor(c, p, strings.HasPrefix(c.Get(fiber.HeaderAuthorization), "Bearer "))
		return c.Next()
	}
}

// authenticate is requireAuth's check: the bearer token, or else the UI's
// session cookie. It returns the check to make again later.
func authenticate(c *fiber.Ctx, a Authenticator, ui *webui.UI) (tenancy.Principal, recheck, error) {
	h := c.Get(fiber.HeaderAuthorization)
	secret, ok := strings.CutPrefix(h, "Bearer ")
	if !ok && h == "" && ui != nil {
		if p, has, err := ui.Principal(c); has {
			if err != nil {
				return p, nil, err
			}
			// fasthttp reuses the request's buffers: the check keeps a copy.
			cookie := strings.Clone(c.Cookies(webui.CookieName))
			return p, samePrincipal(p, func(ctx context.Context) (tenancy.Principal, error) {
				return ui.SessionPrincipal(ctx, cookie)
			}), nil
		}
	}
	if !ok {
		c.Set(fiber.HeaderWWWAuthenticate, `Bearer realm="agenthost"`)
		return tenancy.Principal{}, nil, fmt.Errorf("%w: send Authorization: Bearer <API token>", tenancy.ErrUnauthenticated)
	}
	secret = strings.Clone(strings.TrimSpace(secret))
	p, err := a.Authenticate(c.UserContext(), secret)
	if err != nil {
		c.Set(fiber.HeaderWWWAuthenticate, `Bearer realm="agenthost", error="invalid_token"`)
		return tenancy.Principal{}, nil, err
	}
	return p, samePrincipal(p, func(ctx context.Context) (tenancy.Principal, error) {
		return a.Authenticate(ctx, secret)
	}), nil
}

// samePrincipal is the recheck that authenticates again and wants the same
// principal: a change of role (an admin no longer one) ends what was
// admitted under the old one too.
func samePrincipal(p tenancy.Principal, auth func(context.Context) (tenancy.Principal, error)) recheck {
	return func(ctx context.Context) error {
		q, err := auth(ctx)
		if err != nil {
			return err
		}
		if q != p {
			return fmt.Errorf("%w: the credential's principal changed", tenancy.ErrUnauthenticated)
		}
		return nil
	}
}

// requestRecheck is the request's credential check (nil when the route is
// not behind requireAuth).
func requestRecheck(c *fiber.Ctx) recheck {
	r, _ := c.Locals(recheckKey).(recheck)
	return r
}

// principal is the authenticated principal of the request.
func principal(c *fiber.Ctx) tenancy.Principal {
	p, _ := c.Locals(principalKey).(tenancy.Principal)
	return p
}
