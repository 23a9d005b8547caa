package api

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/gofiber/fiber/v2"

	"github.com/agenthost/agenthost/host/tenancy"
	"github.com/agenthost/agenthost/host/toolcall"
	"github.com/agenthost/agenthost/host/tools"
	"github.com/agenthost/agenthost/host/wasm"
)

// WorkspaceTools is what the API needs to find a workspace's tool set and
// the caller's rights in it.
type WorkspaceTools interface {
	WorkspaceTools(ctx context.Context, p tenancy.Principal, workspaceID string) (set string, extra []string, err error)
	Levels(ctx context.Context, p tenancy.Principal, workspaceID string) (read, write tenancy.Level, err error)
}

func workspaceSet(c *fiber.Ctx, wt WorkspaceTools, reg *tools.Registry) (*tools.Set, error) {
	name, extra, err := wt.WorkspaceTools(c.UserContext(), principal(c), c.Params("ws"))
	if err != nil {
		return nil, err
	}
	set, _, err := reg.WorkspaceSet(c.UserContext(), principal(c), c.Params("ws"), name, extra...)
	return set, err
}

// handleWorkspaceTools lists the tools of the workspace's set that the
// caller may call: a caller who may not write in the workspace (a viewer)
// is not offered the writing tools a call would refuse.
func handleWorkspaceTools(wt WorkspaceTools, reg *tools.Registry) fiber.Handler {
	return func(c *fiber.Ctx) error {
		set, err := workspaceSet(c, wt, reg)
		if err != nil {
			return err
		}
		list := set.Tools()
		if _, write, err := wt.Levels(c.UserContext(), principal(c), c.Params("ws")); err != nil {
			return err
		} else if write == tenancy.None {
			list = slices.DeleteFunc(list, func(t tools.Tool) bool { return !t.ReadOnly })
		}
		return c.JSON(list)
	}
}

// handleCallTool runs one tool of the workspace's set directly, with the
// JSON body as its arguments; a writing tool needs write access to the
// workspace. The result is the runtime's result shape, failures included
// (status 200: the call happened; its outcome is in the body).
func handleCallTool(wt WorkspaceTools, reg *tools.Registry) fiber.Handler {
	return func(c *fiber.Ctx) error {
		set, err := workspaceSet(c, wt, reg)
		if err != nil {
			return err
		}
		name := c.Params("name")
		t, ok := set.Lookup(name)
		if !ok {
			return fmt.Errorf("%w: the workspace has no tool %q", tenancy.ErrNotFound, name)
		}
		if !t.ReadOnly {
			if _, write, err := wt.Levels(c.UserContext(), principal(c), c.Params("ws")); err != nil {
				return err
			} else if write == tenancy.None {
				return fmt.Errorf("%w: %s writes, and the caller may not write in this workspace", tenancy.ErrForbidden, name)
			}
		}
		args := c.Body()
		if len(args) == 0 {
			args = []byte("{}")
		}
		if !json.Valid(args) {
			return fmt.Errorf("%w: the body must be the tool's arguments as a JSON object", tenancy.ErrInvalid)
		}
		// A caller that hangs up stops its call, also while it waits for an instance.
		ctx, cancel := untilDisconnect(c)
		defer cancel()
		ctx = toolcall.With(ctx, toolcall.Caller{Principal: principal(c), WorkspaceID: c.Params("ws")})
		res := set.Call(ctx, name, args, nil)
		if res.Error != nil && res.Error.Code == wasm.CodeSpendingLimit {
			// Nothing ran: the caller is told as for a refused workflow.
			return problem(c, fiber.StatusPaymentRequired, "Spending Limit Reached", res.Error.Message)
		}
		return c.JSON(res)
	}
}
