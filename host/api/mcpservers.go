package api

import (
	"context"

	"github.com/gofiber/fiber/v2"

	"github.com/agenthost/agenthost/host/audit"
	"github.com/agenthost/agenthost/host/mcpclient"
	"github.com/agenthost/agenthost/host/mcpclient/mcpconfig"
	"github.com/agenthost/agenthost/host/tenancy"
)

// MCPServers is what the API needs to administer a tenant's external MCP
// servers (mcpclient.Admin); every method refuses all but the tenant's admin.
type MCPServers interface {
	Add(ctx context.Context, p tenancy.Principal, n mcpclient.NewServer) (mcpconfig.Server, error)
	List(ctx context.Context, p tenancy.Principal) ([]mcpconfig.Server, error)
	Status(ctx context.Context, p tenancy.Principal, id string) (mcpconfig.Server, mcpclient.Status, error)
	Remove(ctx context.Context, p tenancy.Principal, id string) error
}

// mcpServerView is a server with its connection's status. Secrets are
// never in it (mcpclient.Server does not marshal them): only their names.
type mcpServerView struct {
	mcpconfig.Server
	Status mcpclient.Status `json:"status"`
}

func handleListMCPServers(m MCPServers) fiber.Handler {
	return func(c *fiber.Ctx) error {
		out, err := m.List(c.UserContext(), principal(c))
		if err != nil {
			return err
		}
		if out == nil {
			out = []mcpconfig.Server{}
		}
		return c.JSON(out)
	}
}

func handleAddMCPServer(m MCPServers, rec audit.Recorder) fiber.Handler {
	return func(c *fiber.Ctx) error {
		var n mcpclient.NewServer
		if err := decodeJSON(c, &n); err != nil {
			return err
		}
		s, err := m.Add(c.UserContext(), principal(c), n)
		if err != nil {
			return err
		}
		// The server as stored: its configuration and the names of its
		// secrets, never their values (mcpclient.Server does not marshal
		// them).
		recordChange(c, rec, audit.Entry{Action: audit.MCPServerAdded, TargetType: "mcp_server", TargetID: s.ID,
			WorkspaceID: s.WorkspaceID, Detail: audit.Detail(s)})
		return c.Status(fiber.StatusCreated).JSON(s)
	}
}

// handleGetMCPServer connects to the server if needed, so that the admin
// sees its tools, the ones it refused and why it failed.
func handleGetMCPServer(m MCPServers) fiber.Handler {
	return func(c *fiber.Ctx) error {
		ctx, cancel := untilDisconnect(c)
		defer cancel()
		s, st, err := m.Status(ctx, principal(c), c.Params("id"))
		if err != nil {
			return err
		}
		return c.JSON(mcpServerView{Server: s, Status: st})
	}
}

func handleRemoveMCPServer(m MCPServers, rec audit.Recorder) fiber.Handler {
	return func(c *fiber.Ctx) error {
		if err := m.Remove(c.UserContext(), principal(c), c.Params("id")); err != nil {
			return err
		}
		recordChange(c, rec, audit.Entry{Action: audit.MCPServerRemoved, TargetType: "mcp_server", TargetID: c.Params("id")})
		return c.SendStatus(fiber.StatusNoContent)
	}
}
