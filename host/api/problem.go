package api

import (
	"errors"
	"log/slog"

	"github.com/gofiber/fiber/v2"

	"github.com/agenthost/agenthost/host/audit"
	"github.com/agenthost/agenthost/host/billing/ledger"
	"github.com/agenthost/agenthost/host/blob"
	"github.com/agenthost/agenthost/host/knowledge/ondemand"
	"github.com/agenthost/agenthost/host/llm"
	"github.com/agenthost/agenthost/host/rounds"
	"github.com/agenthost/agenthost/host/store"
	"github.com/agenthost/agenthost/host/tenancy"
	"github.com/agenthost/agenthost/host/tools"
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
		// Domain errors carry messages written for the caller (they name the
		// field or the id), so they travel as the problem's detail.
		for _, m := range clientErrors {
			if errors.Is(err, m.err) {
				return problem(c, m.status, m.title, err.Error())
			}
		}
		if store.IsStorageFull(err) {
			// The operator's to fix; the caller learns that nothing is lost
			// but the request, and may try again later.
			log.Error("request failed: storage full", "method", c.Method(), "path", c.Path(), "err", err)
			return problem(c, fiber.StatusInsufficientStorage, "Insufficient Storage",
				"the server's storage is full: nothing of this request was stored; try again once the operator has freed space")
		}
		if store.IsUnavailable(err) {
			// A database restart or failover: the request did not happen
			// (or is undone with its transaction) and may be sent again.
			log.Warn("request failed: database unavailable", "method", c.Method(), "path", c.Path(), "err", err)
			return problem(c, fiber.StatusServiceUnavailable, "Database Unavailable",
				"the database is unavailable for a moment: try again shortly")
		}
		log.Error("request failed", "method", c.Method(), "path", c.Path(), "err", err)
		return problem(c, fiber.StatusInternalServerError, "Internal Server Error", "")
	}
}

// clientErrors maps domain errors to statuses, most specific first.
var clientErrors = []struct {
	err    error
	status int
	title  string
}{
	{ledger.ErrOverLimit, fiber.StatusPaymentRequired, "Spending Limit Reached"},
	{blob.ErrTooLarge, fiber.StatusRequestEntityTooLarge, "Payload Too Large"},
	{rounds.ErrNoModel, fiber.StatusServiceUnavailable, "No Model Configured"},
	{rounds.ErrNoApprovals, fiber.StatusServiceUnavailable, "Approvals Not Configured"},
	{rounds.ErrHandingOff, fiber.StatusServiceUnavailable, "Host Stopping"},
	{llm.ErrNotConfigured, fiber.StatusServiceUnavailable, "No Model Configured"},
	{llm.ErrInvalidRequest, fiber.StatusBadRequest, "Bad Request"},
	{rounds.ErrNoSettings, fiber.StatusNotImplemented, "Not Implemented"},
	// A workspace whose stored tool set this server does not define: the
	// operator's to fix (admin tools), never a server fault.
	{tools.ErrBadSet, fiber.StatusConflict, "Workspace Tool Set Not Configured"},
	{tenancy.ErrUnauthenticated, fiber.StatusUnauthorized, "Unauthorized"},
	{tenancy.ErrNotFound, fiber.StatusNotFound, "Not Found"},
	{tenancy.ErrForbidden, fiber.StatusForbidden, "Forbidden"},
	{tenancy.ErrConflict, fiber.StatusConflict, "Conflict"},
	// A file's content objects asked for while it is still being indexed
	// (or after its indexing failed): the reason says which.
	{ondemand.ErrNotReady, fiber.StatusConflict, "Content Not Indexed"},
	{tenancy.ErrInvalid, fiber.StatusBadRequest, "Bad Request"},
	{audit.ErrInvalid, fiber.StatusBadRequest, "Bad Request"},
}
