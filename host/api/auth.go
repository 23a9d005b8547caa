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

// requireAuth admits requests that carry `Authorization: Bearer <token>` of
// a live API token, or the UI's session cookie (ui may be nil: no sessions),
// and makes the principal available to handlers. A bearer token wins over a
// cookie; the cookie's CSRF rules are the UI's (webui.UI.Principal).
func requireAuth(a Authenticator, ui *webui.UI) fiber.Handler {
	return func(c *fiber.Ctx) error {
		p, err := authenticate(c, a, ui)
		if err != nil {
			return err
		}
		c.Locals(principalKey, p)
		withActor(c, p, strings.HasPrefix(c.Get(fiber.HeaderAuthorization), "Bearer "))
		return c.Next()
	}
}

// authenticate is requireAuth's check: the bearer token, or else the UI's
// session cookie.
func authenticate(c *fiber.Ctx, a Authenticator, ui *webui.UI) (tenancy.Principal, error) {
	h := c.Get(fiber.HeaderAuthorization)
	secret, ok := strings.CutPrefix(h, "Bearer ")
	if !ok && h == "" && ui != nil {
		if p, has, err := ui.Principal(c); has {
			return p, err
		}
	}
	if !ok {
		c.Set(fiber.HeaderWWWAuthenticate, `Bearer realm="agenthost"`)
		return tenancy.Principal{}, fmt.Errorf("%w: send Authorization: Bearer <API token>", tenancy.ErrUnauthenticated)
	}
	p, err := a.Authenticate(c.UserContext(), strings.TrimSpace(secret))
	if err != nil {
		c.Set(fiber.HeaderWWWAuthenticate, `Bearer realm="agenthost", error="invalid_token"`)
		return tenancy.Principal{}, err
	}
	return p, nil
}

// principal is the authenticated principal of the request.
func principal(c *fiber.Ctx) tenancy.Principal {
	p, _ := c.Locals(principalKey).(tenancy.Principal)
	return p
}
