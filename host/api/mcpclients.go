package api

import (
	"context"

	"github.com/gofiber/fiber/v2"

	"github.com/agenthost/agenthost/host/audit"
	"github.com/agenthost/agenthost/host/store"
	"github.com/agenthost/agenthost/host/tenancy"
)

// AuthorizationServer serves the OAuth endpoints of MCP clients that sign
// in like people (host/oauthserver); they are public (the authorization
// page reads the person's session itself).
type AuthorizationServer interface {
	Routes(app fiber.Router)
}

// MCPClients are the MCP clients a person authorised (their OAuth grants,
// store.DB): each person sees and revokes their own only.
type MCPClients interface {
	OAuthGrants(ctx context.Context, p tenancy.Principal) ([]store.OAuthGrant, error)
	RevokeOAuthGrant(ctx context.Context, p tenancy.Principal, id string) (store.OAuthGrant, error)
}

func handleListMCPClients(m MCPClients) fiber.Handler {
	return func(c *fiber.Ctx) error {
		out, err := m.OAuthGrants(c.UserContext(), principal(c))
		if err != nil {
			return err
		}
		c.Set(fiber.HeaderCacheControl, "no-store")
		return c.JSON(out)
	}
}

func handleRevokeMCPClient(m MCPClients, rec audit.Recorder) fiber.Handler {
	return func(c *fiber.Ctx) error {
		g, err := m.RevokeOAuthGrant(c.UserContext(), principal(c), c.Params("id"))
		if err != nil {
			return err
		}
		recordChange(c, rec, audit.Entry{Action: audit.MCPClientRevoked, TargetType: "mcp_client", TargetID: g.ID, WorkspaceID: g.WorkspaceID,
			Detail: audit.Detail(map[string]any{"clientId": g.ClientID, "clientName": g.ClientName, "by": "person"})})
		return c.SendStatus(fiber.StatusNoContent)
	}
}
