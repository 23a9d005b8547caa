package api

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/gofiber/fiber/v2"

	"github.com/agenthost/agenthost/host/rounds"
	"github.com/agenthost/agenthost/host/store"
	"github.com/agenthost/agenthost/host/tenancy"
	"github.com/agenthost/agenthost/host/workflows"
)

// startRequest is the body of a start: the workspace input, plus the
// workspace for the start-or-continue form (POST /workflows/start).
type startRequest struct {
	rounds.StartRequest
	WorkspaceID string `json:"workspaceId,omitempty"`
}

// handleStartInWorkspace: POST /workspaces/:ws/workflows starts a workflow,
// or a new round of body.workflowId.
func handleStartInWorkspace(ws *rounds.Service) fiber.Handler {
	return func(c *fiber.Ctx) error {
		var r startRequest
		if err := decodeJSON(c, &r); err != nil {
			return err
		}
		return start(c, ws, c.Params("ws"), r.StartRequest)
	}
}

// handleStart: POST /workflows/start?id=, one endpoint for a polling
// client's first and later prompts: continue workflow id,
// or start one in body.workspaceId.
func handleStart(ws *rounds.Service, wf *workflows.Service) fiber.Handler {
	return func(c *fiber.Ctx) error {
		var r startRequest
		if err := decodeJSON(c, &r); err != nil {
			return err
		}
		if id := c.Query("id"); id != "" {
			r.WorkflowID = id
		}
		if r.WorkflowID != "" && r.WorkspaceID == "" {
			w, err := wf.Get(c.UserContext(), principal(c), r.WorkflowID)
			if err != nil {
				return err
			}
			r.WorkspaceID = w.WorkspaceID
		}
		if r.WorkspaceID == "" {
			return fmt.Errorf("%w: workspaceId is required to start a workflow", tenancy.ErrInvalid)
		}
		return start(c, ws, r.WorkspaceID, r.StartRequest)
	}
}

func start(c *fiber.Ctx, ws *rounds.Service, workspaceID string, r rounds.StartRequest) error {
	w, err := ws.Start(c.UserContext(), principal(c), workspaceID, r)
	if err != nil {
		return err
	}
	return c.Status(fiber.StatusAccepted).JSON(w)
}

func handleListWorkflows(wf *workflows.Service) fiber.Handler {
	return func(c *fiber.Ctx) error {
		limit, err := queryLimit(c, maxListLimit)
		if err != nil {
			return err
		}
		archived, err := queryBool(c, "archived")
		if err != nil {
			return err
		}
		shared, err := queryBool(c, "shared")
		if err != nil {
			return err
		}
		out, err := wf.List(c.UserContext(), principal(c), workflows.Filter{WorkspaceID: c.Query("workspace"),
			Status: workflows.Status(c.Query("status")), Limit: limit, Query: strings.TrimSpace(c.Query("q")), Archived: archived, Shared: shared})
		if err != nil {
			return err
		}
		if out == nil {
			out = []workflows.Workflow{}
		}
		return c.JSON(out)
	}
}

// workflowPatch is the body of PATCH /workflows/{id}: what the owner
// changes of a conversation; absent fields stay.
type workflowPatch struct {
	Name     *string `json:"name"`
	Pinned   *bool   `json:"pinned"`
	Archived *bool   `json:"archived"`
	// Shared lets the workspace's members read the conversation.
	Shared *bool `json:"shared"`
}

// maxWorkflowName bounds a conversation's name (a title, not a document).
const maxWorkflowName = 200

func handleUpdateWorkflow(wf *workflows.Service) fiber.Handler {
	return func(c *fiber.Ctx) error {
		var u workflowPatch
		if err := decodeJSON(c, &u); err != nil {
			return err
		}
		if u.Name != nil {
			n := strings.TrimSpace(*u.Name)
			if utf8.RuneCountInString(n) > maxWorkflowName {
				return fmt.Errorf("%w: name is longer than %d characters", tenancy.ErrInvalid, maxWorkflowName)
			}
			u.Name = &n
		}
		w, err := wf.Update(c.UserContext(), principal(c), c.Params("id"), workflows.Update{Name: u.Name, Pinned: u.Pinned, Archived: u.Archived, Shared: u.Shared})
		if err != nil {
			return err
		}
		return c.JSON(w)
	}
}

// ownerNames finds the person a workflow belongs to (the store's people).
type ownerNames interface {
	Person(ctx context.Context, tenantID, userID string) (store.Person, error)
}

// workflowView is GET /workflows/{id}'s answer: the workflow and, for a
// member reading another's shared conversation, whose it is.
type workflowView struct {
	workflows.Workflow
	OwnerName string `json:"ownerName,omitempty"`
}

func handleGetWorkflow(wf *workflows.Service, names ownerNames) fiber.Handler {
	return func(c *fiber.Ctx) error {
		p := principal(c)
		w, err := wf.Get(c.UserContext(), p, c.Params("id"))
		if err != nil {
			return err
		}
		v := workflowView{Workflow: w}
		if w.UserID != p.UserID && names != nil {
			// The reader may read the conversation, so they may know whose
			// it is; a lookup that fails leaves the name out, not the answer.
			if o, err := names.Person(c.UserContext(), p.TenantID, w.UserID); err == nil {
				v.OwnerName = o.Name
				if strings.TrimSpace(v.OwnerName) == "" {
					v.OwnerName = o.Email
				}
			}
		}
		return c.JSON(v)
	}
}

// workflowStatus is the status a polling client asks for: status and last
// activity.
type workflowStatus struct {
	ID           string           `json:"id"`
	Status       workflows.Status `json:"status"`
	CurrentRound int              `json:"currentRound"`
	LastActivity time.Time        `json:"lastActivity"`
}

func handleWorkflowStatus(wf *workflows.Service) fiber.Handler {
	return func(c *fiber.Ctx) error {
		w, err := wf.Get(c.UserContext(), principal(c), c.Params("id"))
		if err != nil {
			return err
		}
		return c.JSON(workflowStatus{w.ID, w.Status, w.CurrentRound, w.LastActivity})
	}
}

func handleStopWorkflow(ws *rounds.Service) fiber.Handler {
	return func(c *fiber.Ctx) error {
		w, err := ws.Stop(c.UserContext(), principal(c), c.Params("id"))
		if err != nil {
			return err
		}
		return c.JSON(w)
	}
}

func handleDeleteWorkflow(ws *rounds.Service, wf *workflows.Service) fiber.Handler {
	return func(c *fiber.Ctx) error {
		id := c.Params("id")
		if w, err := wf.Get(c.UserContext(), principal(c), id); err == nil && w.Status == workflows.StatusRunning {
			// A running loop is stopped first, so it does not write into a
			// deleted workflow.
			if _, err := ws.Stop(c.UserContext(), principal(c), id); err != nil {
				return err
			}
		}
		if err := wf.Delete(c.UserContext(), principal(c), id); err != nil {
			return err
		}
		return c.SendStatus(fiber.StatusNoContent)
	}
}

// after reads a poller's ?id= (after that row) or ?seq= (after that number).
func after(c *fiber.Ctx) (workflows.After, int, error) {
	seq, err := queryInt(c, "seq")
	if err != nil {
		return workflows.After{}, 0, err
	}
	limit, err := queryLimit(c, maxListLimit)
	if err != nil {
		return workflows.After{}, 0, err
	}
	return workflows.After{ID: c.Query("id"), Seq: int64(seq)}, limit, nil
}

func handleMessages(wf *workflows.Service) fiber.Handler {
	return func(c *fiber.Ctx) error {
		a, limit, err := after(c)
		if err != nil {
			return err
		}
		out, err := wf.Messages(c.UserContext(), principal(c), c.Params("id"), a, limit)
		if err != nil {
			return err
		}
		if out == nil {
			out = []workflows.Message{}
		}
		return c.JSON(out)
	}
}

func handleLogs(wf *workflows.Service) fiber.Handler {
	return func(c *fiber.Ctx) error {
		a, limit, err := after(c)
		if err != nil {
			return err
		}
		out, err := wf.Logs(c.UserContext(), principal(c), c.Params("id"), a, limit)
		if err != nil {
			return err
		}
		if out == nil {
			out = []workflows.Log{}
		}
		return c.JSON(out)
	}
}

func handleDeleteMessage(wf *workflows.Service) fiber.Handler {
	return func(c *fiber.Ctx) error {
		if err := wf.DeleteMessage(c.UserContext(), principal(c), c.Params("id"), c.Params("mid")); err != nil {
			return err
		}
		return c.SendStatus(fiber.StatusNoContent)
	}
}

func handleRemoveMessageFile(wf *workflows.Service) fiber.Handler {
	return func(c *fiber.Ctx) error {
		if err := wf.RemoveFile(c.UserContext(), principal(c), c.Params("id"), c.Params("mid"), c.Params("fid")); err != nil {
			return err
		}
		return c.SendStatus(fiber.StatusNoContent)
	}
}

// maxListLimit bounds the limit of listings (files, workflows, their logs
// and messages); maxSearchLimit that of searches, whose every hit is ranked
// twice.
const (
	maxListLimit   = 1000
	maxSearchLimit = 100
)

// queryLimit reads ?limit=: absent is 0 (the route's default); values
// outside 1..max are refused rather than clamped, so a client never gets
// fewer rows than it asked for without being told.
func queryLimit(c *fiber.Ctx, max int) (int, error) {
	if c.Query("limit") == "" {
		return 0, nil
	}
	n, err := queryInt(c, "limit")
	if err != nil {
		return 0, err
	}
	return checkLimit(n, max)
}

func checkLimit(n, max int) (int, error) {
	if n < 1 || n > max {
		return 0, fmt.Errorf("%w: limit %d is outside 1..%d", tenancy.ErrInvalid, n, max)
	}
	return n, nil
}

func queryInt(c *fiber.Ctx, key string) (int, error) {
	v := c.Query(key)
	if v == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("%w: %s %q is not a non-negative number", tenancy.ErrInvalid, key, v)
	}
	return n, nil
}

// queryBool reads a boolean query parameter: absent is false; anything
// strconv.ParseBool does not read is refused.
func queryBool(c *fiber.Ctx, key string) (bool, error) {
	v := c.Query(key)
	if v == "" {
		return false, nil
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		return false, fmt.Errorf("%w: %s %q is not true or false", tenancy.ErrInvalid, key, v)
	}
	return b, nil
}
