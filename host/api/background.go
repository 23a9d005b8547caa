package api

import (
	"context"

	"github.com/gofiber/fiber/v2"

	"github.com/agenthost/agenthost/host/background"
	"github.com/agenthost/agenthost/host/background/bgjob"
	"github.com/agenthost/agenthost/host/tenancy"
)

// Background is what the API needs of background jobs.
type Background interface {
	Start(ctx context.Context, p tenancy.Principal, r background.StartRequest) (bgjob.Job, error)
	Get(ctx context.Context, p tenancy.Principal, id string) (bgjob.Job, error)
	List(ctx context.Context, p tenancy.Principal, limit int) ([]bgjob.Job, error)
	Cancel(ctx context.Context, p tenancy.Principal, id string) (bgjob.Job, error)
}

// jobView is a job as the API shows it: its cap as an exact decimal.
type jobView struct {
	bgjob.Job
	MaxCostCHF *string `json:"maxCostCHF"`
}

func viewJob(j bgjob.Job) jobView {
	v := jobView{Job: j}
	if j.MaxCost != nil {
		s := j.MaxCost.String()
		v.MaxCostCHF = &s
	}
	if v.Subtasks == nil {
		v.Subtasks = []string{}
	}
	return v
}

// handleStartBackground: POST /workspaces/:ws/background.
func handleStartBackground(b Background) fiber.Handler {
	return func(c *fiber.Ctx) error {
		var r background.StartRequest
		if err := decodeJSON(c, &r); err != nil {
			return err
		}
		r.WorkspaceID = c.Params("ws")
		j, err := b.Start(c.UserContext(), principal(c), r)
		if err != nil {
			return err
		}
		return c.Status(fiber.StatusAccepted).JSON(viewJob(j))
	}
}

func handleListBackground(b Background) fiber.Handler {
	return func(c *fiber.Ctx) error {
		limit, err := queryLimit(c, maxListLimit)
		if err != nil {
			return err
		}
		js, err := b.List(c.UserContext(), principal(c), limit)
		if err != nil {
			return err
		}
		out := make([]jobView, 0, len(js))
		for _, j := range js {
			out = append(out, viewJob(j))
		}
		return c.JSON(out)
	}
}

func handleGetBackground(b Background) fiber.Handler {
	return func(c *fiber.Ctx) error {
		j, err := b.Get(c.UserContext(), principal(c), c.Params("id"))
		if err != nil {
			return err
		}
		return c.JSON(viewJob(j))
	}
}

func handleCancelBackground(b Background) fiber.Handler {
	return func(c *fiber.Ctx) error {
		j, err := b.Cancel(c.UserContext(), principal(c), c.Params("id"))
		if err != nil {
			return err
		}
		return c.JSON(viewJob(j))
	}
}
