package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/gofiber/fiber/v2"

	"github.com/agenthost/agenthost/host/audit"
	"github.com/agenthost/agenthost/host/knowledge/kindex"
	"github.com/agenthost/agenthost/host/knowledge/progress"
	"github.com/agenthost/agenthost/host/knowledge/unlock"
	"github.com/agenthost/agenthost/host/tenancy"
	"github.com/agenthost/agenthost/pdk/content"
)

// Knowledge is what the API needs of the knowledge store.
type Knowledge interface {
	Search(ctx context.Context, p tenancy.Principal, q kindex.Query) ([]kindex.Hit, error)
}

// IndexStates reads a file's indexing state.
type IndexStates interface {
	ContentState(ctx context.Context, p tenancy.Principal, fileID string) (kindex.ContentState, error)
}

// searchRequest is POST /workspaces/:ws/search's body: the GET form's
// parameters, for queries too long for a URL.
type searchRequest struct {
	Q       string   `json:"q"`
	Layer   string   `json:"layer"`
	Files   []string `json:"files"`
	Page    int      `json:"page"`
	Section string   `json:"section"`
	Type    string   `json:"type"`
	Hidden  string   `json:"hidden"`
	Limit   *int     `json:"limit"`
}

// handleSearch: GET /workspaces/:ws/search?q=&layer=&file=&page=&section=&type=&hidden=&limit=
// and POST with the same as a JSON body (long queries overflow a URL).
// The workspace must be the caller's, as on every workspace route.
func handleSearch(k Knowledge, ws Workspaces) fiber.Handler {
	return func(c *fiber.Ctx) error {
		var r searchRequest
		if c.Method() == fiber.MethodPost {
			if err := decodeJSON(c, &r); err != nil {
				return err
			}
			if r.Page < 0 {
				return fmt.Errorf("%w: page %d is negative", tenancy.ErrInvalid, r.Page)
			}
			if r.Limit != nil {
				if _, err := checkLimit(*r.Limit, maxSearchLimit); err != nil {
					return err
				}
			}
		} else {
			r = searchRequest{Q: c.Query("q"), Layer: c.Query("layer"), Section: c.Query("section"), Type: c.Query("type"), Hidden: c.Query("hidden")}
			for _, v := range c.Request().URI().QueryArgs().PeekMulti("file") {
				r.Files = append(r.Files, string(v))
			}
			var err error
			if r.Page, err = queryInt(c, "page"); err != nil {
				return err
			}
			limit, err := queryLimit(c, maxSearchLimit)
			if err != nil {
				return err
			}
			r.Limit = &limit
		}
		if r.Q == "" {
			return fmt.Errorf("%w: q (the search text) is required", tenancy.ErrInvalid)
		}
		if err := kindex.CheckHidden(r.Hidden); err != nil {
			return err
		}
		if _, _, err := ws.Levels(c.UserContext(), principal(c), c.Params("ws")); err != nil {
			return err
		}
		q := kindex.Query{Text: r.Q, Layer: kindex.Layer(r.Layer), WorkspaceID: c.Params("ws"),
			Section: r.Section, ContentType: content.Type(r.Type), FileIDs: r.Files, Page: r.Page, Hidden: r.Hidden}
		if r.Limit != nil {
			q.Limit = *r.Limit
		}
		if q.Layer == kindex.LayerShared {
			q.WorkspaceID = ""
		}
		hits, err := k.Search(c.UserContext(), principal(c), q)
		if err != nil {
			return err
		}
		if hits == nil {
			hits = []kindex.Hit{}
		}
		return c.JSON(hits)
	}
}

// handleFileIndex: GET /files/:id/index, the file's indexing state.
func handleFileIndex(s IndexStates) fiber.Handler {
	return func(c *fiber.Ctx) error {
		st, err := s.ContentState(c.UserContext(), principal(c), c.Params("id"))
		if err != nil {
			return err
		}
		// A document that waits for its password shows so (stored as a
		// final failure with its reason).
		st.Status = unlock.ShownStatus(st.Status, st.Error)
		// A paged document says how many of its pages are searchable so
		// far (background extraction, OCR).
		return c.JSON(struct {
			kindex.ContentState
			Progress *progress.Report `json:"progress,omitempty"`
		}{st, progress.Of(st)})
	}
}

// auditPassword records a password given for a file, with its outcome
// (never the password): indexed, wrong password, refused, or what failed.
func auditPassword(c *fiber.Ctx, rec audit.Recorder, fileID string, st kindex.ContentState, err error) {
	outcome := "indexed"
	switch {
	case errors.Is(err, unlock.ErrTooManyAttempts):
		outcome = "refused: too many attempts"
	case errors.Is(err, unlock.ErrNotEncrypted):
		outcome = "not needed: the file is not encrypted"
	case err != nil:
		outcome = "failed"
	case unlock.ShownStatus(st.Status, st.Error) == unlock.StatusEncrypted:
		outcome = "wrong password"
	case st.Status == kindex.StatusFailed:
		outcome = "not needed: indexing failed for another reason"
	}
	detail, _ := json.Marshal(map[string]string{"outcome": outcome})
	recordChange(c, rec, audit.Entry{Actor: audit.Actor{Kind: audit.ActorUser, ID: principal(c).UserID}, Action: "file.password_given",
		TargetType: "file", TargetID: fileID, Detail: detail})
}

// FilePasswords takes the password of an encrypted file and indexes the
// file with it (unlock.Service).
type FilePasswords interface {
	Unlock(ctx context.Context, p tenancy.Principal, fileID, password string) (kindex.ContentState, error)
	// UnlockWhenSettled serves a password given with an upload: once
	// the file's first indexing ends, Unlock if it is encrypted.
	UnlockWhenSettled(ctx context.Context, p tenancy.Principal, fileID, password string) (kindex.ContentState, error)
}

// filePasswordRequest is POST /files/:id/password's body.
type filePasswordRequest struct {
	Password string `json:"password"`
}

// handleFilePassword: POST /files/:id/password, the password of an
// encrypted file; the file is indexed with it before the answer, which is
// the file's index state (indexed, or encrypted with "wrong password").
// The password is kept nowhere: not in the audit entry (which records the
// attempt and its outcome), nor in logs or events.
func handleFilePassword(s FilePasswords, rec audit.Recorder) fiber.Handler {
	return func(c *fiber.Ctx) error {
		var req filePasswordRequest
		if err := c.BodyParser(&req); err != nil {
			return fmt.Errorf("%w: the body must be JSON {\"password\": \"...\"}", tenancy.ErrInvalid)
		}
		p, id := principal(c), c.Params("id")
		st, err := s.Unlock(c.UserContext(), p, id, req.Password)
		req.Password = ""
		if err != nil && !errors.Is(err, unlock.ErrTooManyAttempts) {
			return err
		}
		auditPassword(c, rec, id, st, err)
		if err != nil {
			return problem(c, fiber.StatusTooManyRequests, "Too Many Requests", err.Error())
		}
		st.Status = unlock.ShownStatus(st.Status, st.Error)
		return c.JSON(struct {
			kindex.ContentState
			Progress *progress.Report `json:"progress,omitempty"`
		}{st, progress.Of(st)})
	}
}
