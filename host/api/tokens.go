package api

import (
	"context"

	"github.com/gofiber/fiber/v2"

	"github.com/agenthost/agenthost/host/audit"
	"github.com/agenthost/agenthost/host/tenancy"
)

// Tokens is what the API needs of the token store: a user lists and revokes
// their own tokens, a tenant admin any of the tenant's.
type Tokens interface {
	ListTokens(ctx context.Context, p tenancy.Principal) ([]tenancy.Token, error)
	RevokeToken(ctx context.Context, p tenancy.Principal, tokenID string) error
}

func handleListTokens(t Tokens) fiber.Handler {
	return func(c *fiber.Ctx) error {
		out, err := t.ListTokens(c.UserContext(), principal(c))
		if err != nil {
			return err
		}
		if out == nil {
			out = []tenancy.Token{}
		}
		return c.JSON(out)
	}
}

func handleRevokeToken(t Tokens, rec audit.Recorder) fiber.Handler {
	return func(c *fiber.Ctx) error {
		if err := t.RevokeToken(c.UserContext(), principal(c), c.Params("id")); err != nil {
			return err
		}
		recordChange(c, rec, audit.Entry{Action: audit.TokenRevoked, TargetType: "token", TargetID: c.Params("id")})
		return c.SendStatus(fiber.StatusNoContent)
	}
}
