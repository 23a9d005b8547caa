package api

import (
	"context"
	"fmt"

	"github.com/gofiber/fiber/v2"

	"github.com/agenthost/agenthost/host/files"
	"github.com/agenthost/agenthost/host/files/filemeta"
	"github.com/agenthost/agenthost/host/knowledge/ondemand"
	"github.com/agenthost/agenthost/host/tenancy"
	"github.com/agenthost/agenthost/pdk/content"
)

// FileObjects reads a file's extracted content objects (ondemand.Reader).
type FileObjects interface {
	Objects(ctx context.Context, p tenancy.Principal, f filemeta.Item, q ondemand.ObjectQuery) (ondemand.ObjectPage, error)
}

// handleFileObjects: GET /files/:id/objects?offset=&limit=&page=, a page of
// the file's content objects as JSON, each with its reference (page, slide,
// notes part, sheet, heading label): what the UI's preview draws an office
// file's structure from, instead of the read tool's text for a model.
// Access is the file's: the files service refuses a file the caller cannot
// read, before the knowledge store is asked.
func handleFileObjects(svc *files.Service, s FileObjects) fiber.Handler {
	return func(c *fiber.Ctx) error {
		f, err := svc.Get(c.UserContext(), principal(c), c.Params("id"))
		if err != nil {
			return err
		}
		q := ondemand.ObjectQuery{Offset: c.QueryInt("offset"), Limit: c.QueryInt("limit"), MaxBytes: c.QueryInt("maxBytes")}
		if pg := c.QueryInt("page"); pg != 0 {
			if pg < 0 {
				return fmt.Errorf("%w: page %d", tenancy.ErrInvalid, pg)
			}
			q.Pages = []int{pg}
		}
		page, err := s.Objects(c.UserContext(), principal(c), f, q)
		if err != nil {
			return err
		}
		if page.Objects == nil {
			page.Objects = []content.Object{}
		}
		return c.JSON(page)
	}
}
