package api

import (
	"github.com/gofiber/fiber/v2"

	"github.com/agenthost/agenthost/host/agent"
	"github.com/agenthost/agenthost/host/rounds"
)

// handleToolPolicies: GET /workspaces/:ws/tool-policies lists the
// workspace's tools with their approval policies (any member).
func handleToolPolicies(ws *rounds.Service) fiber.Handler {
	return func(c *fiber.Ctx) error {
		out, err := ws.ToolPolicies(c.UserContext(), principal(c), c.Params("ws"))
		if err != nil {
			return err
		}
		return c.JSON(out)
	}
}

// handleSetToolPolicy: PUT /workspaces/:ws/tool-policies/:tool with
// {"policy": "auto"|"ask"|"deny"|""} ("": the default); the workspace's
// managers and the tenant's admin.
func handleSetToolPolicy(ws *rounds.Service) fiber.Handler {
	return func(c *fiber.Ctx) error {
		var body struct {
			Policy agent.Policy `json:"policy"`
		}
		if err := decodeJSON(c, &body); err != nil {
			return err
		}
		if err := ws.SetToolPolicy(c.UserContext(), principal(c), c.Params("ws"), c.Params("tool"), body.Policy); err != nil {
			return err
		}
		return handleToolPolicies(ws)(c)
	}
}

// handleApprovals: GET /workflows/:id/approvals lists the workflow's
// approvals, pending and decided.
func handleApprovals(ws *rounds.Service) fiber.Handler {
	return func(c *fiber.Ctx) error {
		out, err := ws.Approvals(c.UserContext(), principal(c), c.Params("id"))
		if err != nil {
			return err
		}
		return c.JSON(out)
	}
}

// handleDecideApproval: POST /workflows/:id/approvals/:aid with
// {"approve": bool, "arguments": {...}, "reason": "..."}: the workflow's
// owner approves (optionally with edited arguments) or denies a call.
func handleDecideApproval(ws *rounds.Service) fiber.Handler {
	return func(c *fiber.Ctx) error {
		var d rounds.Decision
		if err := decodeJSON(c, &d); err != nil {
			return err
		}
		a, err := ws.Decide(c.UserContext(), principal(c), c.Params("id"), c.Params("aid"), d)
		if err != nil {
			return err
		}
		return c.JSON(a)
	}
}
