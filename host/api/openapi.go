package api

import (
	_ "embed"

	"github.com/gofiber/fiber/v2"
)

// openAPI describes every route of routes.go; TestOpenAPIMatchesRoutes keeps
// the two in step.
//
//go:embed openapi.json
var openAPI []byte

func handleOpenAPI() fiber.Handler {
	return func(c *fiber.Ctx) error {
		c.Set(fiber.HeaderContentType, fiber.MIMEApplicationJSON)
		return c.Send(openAPI)
	}
}
