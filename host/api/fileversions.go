package api

import (
	"fmt"
	"log/slog"
	"strconv"

	"github.com/gofiber/fiber/v2"

	"github.com/agenthost/agenthost/host/files"
	"github.com/agenthost/agenthost/host/files/filemeta"
	"github.com/agenthost/agenthost/host/tenancy"
	"github.com/agenthost/agenthost/host/workflows"
)

// fileVersionRoutes are a file's versions (listed, read, restored) and the
// edits agents propose (listed, accepted, rejected). Accepting announces the
// new version on the proposing workflow's stream.
func fileVersionRoutes(r fiber.Router, d Deps) {
	r.Get("/files/:id/versions", handleFileVersions(d.Files))
	r.Get("/files/:id/versions/:version/content", handleVersionContent(d.Files))
	r.Post("/files/:id/versions/:version/restore", handleRestoreVersion(d.Files))
	r.Get("/files/:id/proposals", handleFileProposals(d.Files))
	r.Get("/proposals/:id", handleGetProposal(d.Files))
	r.Post("/proposals/:id/accept", handleDecideProposal(d.Files, d.Workflows, d.Logger, true))
	r.Post("/proposals/:id/reject", handleDecideProposal(d.Files, d.Workflows, d.Logger, false))
}

func versionParam(c *fiber.Ctx) (int, error) {
	v, err := strconv.Atoi(c.Params("version"))
	if err != nil || v < 1 {
		return 0, fmt.Errorf("%w: version %q is not a version number (1, 2, …)", tenancy.ErrInvalid, c.Params("version"))
	}
	return v, nil
}

func handleFileVersions(svc *files.Service) fiber.Handler {
	return func(c *fiber.Ctx) error {
		vs, err := svc.Versions(c.UserContext(), principal(c), c.Params("id"))
		if err != nil {
			return err
		}
		return c.JSON(vs)
	}
}

func handleVersionContent(svc *files.Service) fiber.Handler {
	return func(c *fiber.Ctx) error {
		n, err := versionParam(c)
		if err != nil {
			return err
		}
		it, err := svc.Get(c.UserContext(), principal(c), c.Params("id"))
		if err != nil {
			return err
		}
		v, r, err := svc.OpenVersion(c.UserContext(), principal(c), it.ID, n)
		if err != nil {
			return err
		}
		setStoredContentHeaders(c, it.MIMEType, it.Name)
		return sendBlob(c, r, `"`+v.SHA256+`"`)
	}
}

// versionResult is a file after a new version was written.
type versionResult struct {
	File    filemeta.Item    `json:"file"`
	Version filemeta.Version `json:"version"`
}

func handleRestoreVersion(svc *files.Service) fiber.Handler {
	return func(c *fiber.Ctx) error {
		n, err := versionParam(c)
		if err != nil {
			return err
		}
		it, v, err := svc.Restore(c.UserContext(), principal(c), c.Params("id"), n)
		if err != nil {
			return err
		}
		return c.Status(fiber.StatusCreated).JSON(versionResult{File: it, Version: v})
	}
}

func handleFileProposals(svc *files.Service) fiber.Handler {
	return func(c *fiber.Ctx) error {
		list, err := svc.Proposals(c.UserContext(), principal(c), c.Params("id"))
		if err != nil {
			return err
		}
		return c.JSON(list)
	}
}

func handleGetProposal(svc *files.Service) fiber.Handler {
	return func(c *fiber.Ctx) error {
		x, err := svc.Proposal(c.UserContext(), principal(c), c.Params("id"))
		if err != nil {
			return err
		}
		return c.JSON(x)
	}
}

func handleDecideProposal(svc *files.Service, wf *workflows.Service, logger *slog.Logger, accept bool) fiber.Handler {
	return func(c *fiber.Ctx) error {
		ctx, p := c.UserContext(), principal(c)
		decide := svc.Reject
		if accept {
			decide = svc.Accept
		}
		d, err := decide(ctx, p, c.Params("id"))
		if err != nil {
			return err
		}
		if accept && d.Proposal.WorkflowID != "" && wf != nil {
			// The decision is made; a stream that cannot take the event
			// (the workflow was deleted, or is another user's) does not
			// undo it.
			if _, err := wf.Append(ctx, p, d.Proposal.WorkflowID, workflows.EventFileVersion, workflows.FileVersionData{
				ProposalID: d.Proposal.ID, FileID: d.File.ID, Name: d.File.Name, SHA256: d.File.SHA256, Size: d.File.Size,
				Version: d.File.Version}); err != nil && logger != nil {
				logger.Warn("api: announcing an accepted proposal", "proposal", d.Proposal.ID, "workflow", d.Proposal.WorkflowID, "err", err)
			}
		}
		return c.JSON(d)
	}
}
