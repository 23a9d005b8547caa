package api

import (
	"errors"
	"log/slog"

	"github.com/gofiber/fiber/v2"
)

// Problem is an RFC 9457 problem document, the shape of every API error.
type Problem struct {
	Type   string `json:"type"`
	Title  string `json:"title"`
	Status int    `json:"status"`
	Detail string `json:"detail,omitempty"`
}

func problem(c *fiber.Ctx, status int, title, detail string) error {
	return c.Status(status).JSON(Problem{Type: "about:blank", Title: title, Status: status, Detail: detail}, "application/problem+json")
}

func problemHandler(log *slog.Logger) fiber.ErrorHandler {
	return func(c *fiber.Ctx, err error) error {
		var fe *fiber.Error
		if errors.As(err, &fe) {
			return problem(c, fe.Code, fe.Message, "")
		}
		log.Error("request failed", "method", c.Method(), "path", c.Path(), "err", err)
		return problem(c, fiber.StatusInternalServerError, "Internal Server Error", "")
	}
}
