package api

import (
	"github.com/gofiber/fiber/v2"

	"github.com/agenthost/agenthost/host/rounds"
)

// handleWorkspaceSettings: GET /workspaces/:ws/settings, the workspace's
// agent settings as its rounds see them (any member).
func handleWorkspaceSettings(ws *rounds.Service) fiber.Handler {
	return func(c *fiber.Ctx) error {
		s, err := ws.Settings(c.UserContext(), principal(c), c.Params("ws"))
		if err != nil {
			return err
		}
		return c.JSON(s)
	}
}

// handleSetWorkspaceSettings: PUT /workspaces/:ws/settings with
// {"entityCacheEnabled": true|false|null} (null: the host's default); the
// workspace's managers and the tenant's admin.
func handleSetWorkspaceSettings(ws *rounds.Service) fiber.Handler {
	return func(c *fiber.Ctx) error {
		var u rounds.SettingsUpdate
		if err := decodeJSON(c, &u); err != nil {
			return err
		}
		s, err := ws.SetSettings(c.UserContext(), principal(c), c.Params("ws"), u)
		if err != nil {
			return err
		}
		return c.JSON(s)
	}
}
