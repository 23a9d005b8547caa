package api

import (
	"context"
	"fmt"

	"github.com/gofiber/fiber/v2"

	"github.com/agenthost/agenthost/host/knowledge"
	"github.com/agenthost/agenthost/host/tenancy"
	"github.com/agenthost/agenthost/pdk/content"
)

// Knowledge is what the API needs of the knowledge store.
type Knowledge interface {
	Search(ctx context.Context, p tenancy.Principal, q knowledge.Query) ([]knowledge.Hit, error)
}

// IndexStates reads a file's indexing state.
type IndexStates interface {
	ContentState(ctx context.Context, p tenancy.Principal, fileID string) (knowledge.ContentState, error)
}

// handleSearch: GET /workspaces/:ws/search?q=&layer=&file=&page=&section=&type=&limit=
func handleSearch(k Knowledge) fiber.Handler {
	return func(c *fiber.Ctx) error {
		q := knowledge.Query{Text: c.Query("q"), Layer: knowledge.Layer(c.Query("layer")), WorkspaceID: c.Params("ws"),
			Section: c.Query("section"), ContentType: content.Type(c.Query("type"))}
		if q.Layer == knowledge.LayerShared {
			q.WorkspaceID = ""
		}
		if q.Text == "" {
			return fmt.Errorf("%w: q (the search text) is required", tenancy.ErrInvalid)
		}
		args := c.Request().URI().QueryArgs()
		for _, v := range args.PeekMulti("file") {
			q.FileIDs = append(q.FileIDs, string(v))
		}
		var err error
		if q.Page, err = queryInt(c, "page"); err != nil {
			return err
		}
		if q.Limit, err = queryInt(c, "limit"); err != nil {
			return err
		}
		hits, err := k.Search(c.UserContext(), principal(c), q)
		if err != nil {
			return err
		}
		if hits == nil {
			hits = []knowledge.Hit{}
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
		return c.JSON(st)
	}
}
