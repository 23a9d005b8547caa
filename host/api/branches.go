package api

import (
	"github.com/gofiber/fiber/v2"

	"github.com/agenthost/agenthost/host/rounds"
	"github.com/agenthost/agenthost/host/workflows"
)

// handleSelectBranch: PUT /workflows/:id/branch {messageId} shows (and
// continues) the conversation's branch through that prompt or answer.
func handleSelectBranch(wf *workflows.Service) fiber.Handler {
	return func(c *fiber.Ctx) error {
		var r workflows.BranchSelectedData
		if err := decodeJSON(c, &r); err != nil {
			return err
		}
		w, err := wf.SelectBranch(c.UserContext(), principal(c), c.Params("id"), r.MessageID)
		if err != nil {
			return err
		}
		return c.JSON(w)
	}
}

// handleRegenerate: POST /workflows/:id/messages/:mid/regenerate {model?}
// answers the prompt (or the answer's prompt) again as a new branch.
func handleRegenerate(ws *rounds.Service) fiber.Handler {
	return func(c *fiber.Ctx) error {
		var r struct {
			Model string `json:"model"`
		}
		if len(c.Body()) > 0 {
			if err := decodeJSON(c, &r); err != nil {
				return err
			}
		}
		w, err := ws.Regenerate(c.UserContext(), principal(c), c.Params("id"), c.Params("mid"), r.Model)
		if err != nil {
			return err
		}
		return c.Status(fiber.StatusAccepted).JSON(w)
	}
}

// handleFeedback: PUT /workflows/:id/messages/:mid/feedback {rating, note}
// keeps the person's verdict on an answer (an empty rating withdraws it).
func handleFeedback(wf *workflows.Service) fiber.Handler {
	return func(c *fiber.Ctx) error {
		var f workflows.Feedback
		if err := decodeJSON(c, &f); err != nil {
			return err
		}
		m, err := wf.SetFeedback(c.UserContext(), principal(c), c.Params("id"), c.Params("mid"), f)
		if err != nil {
			return err
		}
		return c.JSON(m)
	}
}
