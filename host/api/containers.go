package api

import (
	"context"

	"github.com/gofiber/fiber/v2"

	"github.com/agenthost/agenthost/host/knowledge/kindex"
	"github.com/agenthost/agenthost/host/tenancy"
)

// ContainerEntries lists the entries of container files (ZIP, TAR, GZ).
type ContainerEntries interface {
	ContainerEntries(ctx context.Context, p tenancy.Principal, fileID string) ([]kindex.ContainerEntry, error)
}

// handleFileEntries: GET /files/:id/entries, a container file's entries
// (nested containers' members included) by container path, with status and
// reason; an empty list for a file that is not a container or not resolved.
func handleFileEntries(s ContainerEntries) fiber.Handler {
	return func(c *fiber.Ctx) error {
		entries, err := s.ContainerEntries(c.UserContext(), principal(c), c.Params("id"))
		if err != nil {
			return err
		}
		if entries == nil {
			entries = []kindex.ContainerEntry{}
		}
		return c.JSON(entries)
	}
}
