package api

import "github.com/gofiber/fiber/v2"

// handleConnectionProviders lists the providers a user may connect to and
// how (the workspace UI's Connections view offers them): names and kinds
// only, nothing of the operator's OAuth client.
func handleConnectionProviders(s Connections) fiber.Handler {
	return func(c *fiber.Ctx) error {
		return c.JSON(s.Providers())
	}
}
