package api

import (
	"context"
	"fmt"

	"github.com/gofiber/fiber/v2"

	"github.com/agenthost/agenthost/host/signin"
	"github.com/agenthost/agenthost/host/store"
	"github.com/agenthost/agenthost/host/tenancy"
)

// SignIn is sign-in through identity providers (host/signin.Service):
// the sign-in page's buttons and the OpenID Connect redirects, callbacks
// and back-channel logout.
type SignIn interface {
	HandleProviders() fiber.Handler
	HandleStart() fiber.Handler
	HandleCallback() fiber.Handler
	HandleBackChannelLogout() fiber.Handler
}

// Invitations are a tenant admin's invitations by e-mail
// (host/signin.Invitations) and the link's landing page.
type Invitations interface {
	Invite(ctx context.Context, p tenancy.Principal, base string, r signin.InviteRequest) (signin.Invited, error)
	List(ctx context.Context, p tenancy.Principal) ([]store.Invitation, error)
	Revoke(ctx context.Context, p tenancy.Principal, id string) (store.Invitation, error)
	HandleLanding() fiber.Handler
}

// signInRoutes registers the public sign-in routes; without providers
// configured the button list is empty and the rest answer 404.
func signInRoutes(app *fiber.App, v1 fiber.Router, s SignIn, inv Invitations) {
	if s == nil {
		none := func(c *fiber.Ctx) error {
			return fmt.Errorf("%w: no sign-in provider is configured (signIn.providers, docs/sso.md)", tenancy.ErrNotFound)
		}
		v1.Get("/auth/providers", func(c *fiber.Ctx) error { return c.JSON([]signin.ProviderInfo{}) })
		app.Get("/auth/oidc/:provider", none)
		app.Get("/auth/oidc/:provider/callback", none)
		app.Post("/auth/oidc/:provider/backchannel-logout", none)
		app.Get("/invite/:secret", none)
		return
	}
	v1.Get("/auth/providers", s.HandleProviders())
	app.Get("/auth/oidc/:provider", s.HandleStart())
	// Browsers come back from the provider's site without the
	// SameSite=Strict session cookie: the callback authenticates by the
	// flow's own state.
	app.Get("/auth/oidc/:provider/callback", s.HandleCallback())
	// The provider calls this server to server, with a signed logout token.
	app.Post("/auth/oidc/:provider/backchannel-logout", s.HandleBackChannelLogout())
	if inv != nil {
		app.Get("/invite/:secret", inv.HandleLanding())
	}
}

var errNoInvitations = fmt.Errorf("%w: invitations are not served by this host", tenancy.ErrNotFound)

func handleInvite(inv Invitations) fiber.Handler {
	return func(c *fiber.Ctx) error {
		if inv == nil {
			return errNoInvitations
		}
		var r signin.InviteRequest
		if err := decodeJSON(c, &r); err != nil {
			return err
		}
		out, err := inv.Invite(c.UserContext(), principal(c), c.BaseURL(), r)
		if err != nil {
			return err
		}
		c.Set("Cache-Control", "no-store")
		return c.Status(fiber.StatusCreated).JSON(out)
	}
}

func handleListInvitations(inv Invitations) fiber.Handler {
	return func(c *fiber.Ctx) error {
		if inv == nil {
			return errNoInvitations
		}
		out, err := inv.List(c.UserContext(), principal(c))
		if err != nil {
			return err
		}
		return c.JSON(out)
	}
}

func handleRevokeInvitation(inv Invitations) fiber.Handler {
	return func(c *fiber.Ctx) error {
		if inv == nil {
			return errNoInvitations
		}
		out, err := inv.Revoke(c.UserContext(), principal(c), c.Params("id"))
		if err != nil {
			return err
		}
		return c.JSON(out)
	}
}
