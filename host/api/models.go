package api

import (
	"github.com/gofiber/fiber/v2"

	"github.com/agenthost/agenthost/host/rounds"
)

// handleWorkspaceModels: GET /workspaces/:ws/models, the agent models the
// workspace allows (with capabilities and prices) and those configured (any
// member).
func handleWorkspaceModels(ws *rounds.Service) fiber.Handler {
	return func(c *fiber.Ctx) error {
		m, err := ws.Models(c.UserContext(), principal(c), c.Params("ws"))
		if err != nil {
			return err
		}
		return c.JSON(m)
	}
}

// handleSetWorkspaceModels: PUT /workspaces/:ws/models with {"allowed":
// ["provider/model", …]} (empty: every configured model); the workspace's
// managers and the tenant's admin.
func handleSetWorkspaceModels(ws *rounds.Service) fiber.Handler {
	return func(c *fiber.Ctx) error {
		var body struct {
			Allowed []string `json:"allowed"`
		}
		if err := decodeJSON(c, &body); err != nil {
			return err
		}
		m, err := ws.SetModels(c.UserContext(), principal(c), c.Params("ws"), body.Allowed)
		if err != nil {
			return err
		}
		return c.JSON(m)
	}
}

// conversationModel is a conversation's model choice ("" : the default).
type conversationModel struct {
	Model string `json:"model"`
}

// handleConversationModel: GET /workflows/:id/model.
func handleConversationModel(ws *rounds.Service) fiber.Handler {
	return func(c *fiber.Ctx) error {
		m, err := ws.ConversationModel(c.UserContext(), principal(c), c.Params("id"))
		if err != nil {
			return err
		}
		return c.JSON(conversationModel{Model: m})
	}
}

// handleSetConversationModel: PUT /workflows/:id/model with {"model":
// "provider/model"} ("" : back to the default); its next round uses it.
func handleSetConversationModel(ws *rounds.Service) fiber.Handler {
	return func(c *fiber.Ctx) error {
		var body conversationModel
		if err := decodeJSON(c, &body); err != nil {
			return err
		}
		if err := ws.SetConversationModel(c.UserContext(), principal(c), c.Params("id"), body.Model); err != nil {
			return err
		}
		return c.JSON(body)
	}
}
