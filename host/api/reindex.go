package api

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/gofiber/fiber/v2"

	"github.com/agenthost/agenthost/host/audit"
	"github.com/agenthost/agenthost/host/files"
	"github.com/agenthost/agenthost/host/files/filemeta"
	"github.com/agenthost/agenthost/host/knowledge/kindex"
	"github.com/agenthost/agenthost/host/knowledge/unlock"
	"github.com/agenthost/agenthost/host/tenancy"
)

// Reindexer queues a file's content to be indexed again
// (indexing.JobIndexer).
type Reindexer interface {
	Reindex(ctx context.Context, f filemeta.Item) error
}

// handleReindexFile is POST /files/:id/reindex: a file whose indexing
// failed is indexed again, for a caller who may change the workspace's
// files. A file indexed, being indexed or waiting for its password is
// refused with what to do instead; nothing changes then.
func handleReindexFile(svc *files.Service, ws Workspaces, states IndexStates, rx Reindexer, rec audit.Recorder) fiber.Handler {
	return func(c *fiber.Ctx) error {
		ctx, p := c.UserContext(), principal(c)
		f, err := svc.Get(ctx, p, c.Params("id"))
		if err != nil {
			return err
		}
		if _, write, err := ws.Levels(ctx, p, f.WorkspaceID); err != nil {
			return err
		} else if write == tenancy.None {
			return fmt.Errorf("%w: re-indexing %s needs write access to its workspace", tenancy.ErrForbidden, f.Name)
		}
		st, err := states.ContentState(ctx, p, f.ID)
		if err != nil {
			return err
		}
		switch unlock.ShownStatus(st.Status, st.Error) {
		case kindex.StatusFailed:
		case unlock.StatusEncrypted:
			return fmt.Errorf("%w: %s needs its password (POST /files/%s/password), not another attempt", tenancy.ErrConflict, f.Name, f.ID)
		case kindex.StatusIndexed:
			return fmt.Errorf("%w: %s is indexed already", tenancy.ErrConflict, f.Name)
		default:
			return fmt.Errorf("%w: %s is being indexed (%s)", tenancy.ErrConflict, f.Name, st.Status)
		}
		if err := rx.Reindex(ctx, f); err != nil {
			return fmt.Errorf("api: re-index %s: %w", f.ID, err)
		}
		detail, _ := json.Marshal(map[string]string{"previousError": st.Error})
		recordChange(c, rec, audit.Entry{Actor: audit.Actor{Kind: audit.ActorUser, ID: p.UserID}, Action: "file.reindexed",
			TargetType: "file", TargetID: f.ID, Detail: detail})
		return c.Status(fiber.StatusAccepted).JSON(kindex.ContentState{Status: kindex.StatusPending, Note: kindex.NoteQueued})
	}
}
