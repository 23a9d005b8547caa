package api

import (
	"bufio"
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/agenthost/agenthost/host/tenancy"
	"github.com/agenthost/agenthost/host/workflows"
	"github.com/agenthost/agenthost/host/workspace"
)

// startRequest is the body of a start: the workspace input, plus the
// workspace for the start-or-continue form (POST /workflows/start).
type startRequest struct {
	workspace.StartRequest
	WorkspaceID string `json:"workspaceId,omitempty"`
}

// handleStartInWorkspace: POST /workspaces/:ws/workflows starts a workflow,
// or a new round of body.workflowId.
func handleStartInWorkspace(ws *workspace.Service) fiber.Handler {
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
func handleStart(ws *workspace.Service, wf *workflows.Service) fiber.Handler {
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

func start(c *fiber.Ctx, ws *workspace.Service, workspaceID string, r workspace.StartRequest) error {
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
		out, err := wf.List(c.UserContext(), principal(c), workflows.Filter{WorkspaceID: c.Query("workspace"),
			Status: workflows.Status(c.Query("status")), Limit: limit})
		if err != nil {
			return err
		}
		if out == nil {
			out = []workflows.Workflow{}
		}
		return c.JSON(out)
	}
}

func handleGetWorkflow(wf *workflows.Service) fiber.Handler {
	return func(c *fiber.Ctx) error {
		w, err := wf.Get(c.UserContext(), principal(c), c.Params("id"))
		if err != nil {
			return err
		}
		return c.JSON(w)
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

func handleStopWorkflow(ws *workspace.Service) fiber.Handler {
	return func(c *fiber.Ctx) error {
		w, err := ws.Stop(c.UserContext(), principal(c), c.Params("id"))
		if err != nil {
			return err
		}
		return c.JSON(w)
	}
}

func handleDeleteWorkflow(ws *workspace.Service, wf *workflows.Service) fiber.Handler {
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

// heartbeat keeps idle streams alive through proxies and is how a dropped
// client is noticed: Fiber shows a disconnect only as a failed write.
const heartbeat = 15 * time.Second

// handleEvents streams a workflow's events as Server-Sent Events: first
// everything after Last-Event-ID (or ?after=), then live ones, each with its
// sequence number as the SSE id, so a reconnecting client misses nothing.
func handleEvents(wf *workflows.Service, streams context.Context) fiber.Handler {
	return func(c *fiber.Ctx) error {
		last := c.Get("Last-Event-ID")
		if last == "" {
			last = c.Query("after", "0")
		}
		afterSeq, err := strconv.ParseInt(last, 10, 64)
		if err != nil || afterSeq < 0 {
			return fmt.Errorf("%w: Last-Event-ID %q is not a sequence number", tenancy.ErrInvalid, last)
		}
		// The subscription outlives the handler (the body is written after
		// it returns), so it gets its own context, ended by the writer or by
		// the server's shutdown.
		ctx, cancel := context.WithCancel(streams)
		// Fiber's params alias the request's buffer, which fasthttp reuses
		// once the handler returns; the broker keeps the id (a map key) for
		// the stream's life, so it gets its own copy. Without it a stream
		// could stop receiving live events when the buffer was overwritten.
		id := strings.Clone(c.Params("id"))
		events, err := wf.Subscribe(ctx, principal(c), id, afterSeq)
		if err != nil {
			cancel()
			return err
		}
		c.Set(fiber.HeaderContentType, "text/event-stream")
		c.Set(fiber.HeaderCacheControl, "no-cache")
		c.Set(fiber.HeaderConnection, "keep-alive")
		c.Set("X-Accel-Buffering", "no")
		c.Context().SetBodyStreamWriter(func(w *bufio.Writer) {
			defer cancel()
			tick := time.NewTicker(heartbeat)
			defer tick.Stop()
			if _, err := w.WriteString(": connected\n\n"); err != nil || w.Flush() != nil {
				return
			}
			for {
				select {
				case ev, ok := <-events:
					if !ok {
						return
					}
					fmt.Fprintf(w, "id: %d\nevent: %s\ndata: %s\n\n", ev.Seq, ev.Type, ev.Data)
					// Flush once the burst is written: a replay of many events
					// goes out in few writes.
					if len(events) == 0 && w.Flush() != nil {
						return
					}
				case <-tick.C:
					if _, err := w.WriteString(": ping\n\n"); err != nil || w.Flush() != nil {
						return
					}
				}
			}
		})
		return nil
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
