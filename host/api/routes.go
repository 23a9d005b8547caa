package api

import "github.com/gofiber/fiber/v2"

// routes lists every route of the API, so the surface is visible at a glance.
func routes(app *fiber.App, d Deps) {
	app.Get("/healthz", handleHealth(d.Ready))
	v1 := app.Group("/api/v1")
	v1.Get("/plugins", handlePlugins(d.Plugins))
	v1.Get("/tools", handleTools(d.Plugins))
}
