package indexing

import (
	"context"
	"fmt"

	"github.com/agenthost/agenthost/host/knowledge/kindex"
	"github.com/agenthost/agenthost/host/tenancy"
)

// EntryStore is what the container service needs of the database.
type EntryStore interface {
	// ContainerEntries lists a container file's entries for a principal
	// who can read the file (tenancy.ErrNotFound otherwise).
	ContainerEntries(ctx context.Context, p tenancy.Principal, fileID string) ([]kindex.ContainerEntry, error)
	// PasswordLocked: the file's content was read with a password given
	// for another file with its bytes, and none for this one.
	PasswordLocked(ctx context.Context, fileID string) (bool, error)
}

// EntryExtractor extracts one entry of a container file on demand.
type EntryExtractor interface {
	ExtractEntry(ctx context.Context, fileID, path string) (kindex.ContainerEntry, error)
}

// Containers is the entry side of container files for the document tools
// (browse a container, extract one of its entries), acting for a principal.
type Containers struct {
	store EntryStore
	ex    EntryExtractor
}

// NewContainers returns the service; ex is the ingester that resolved the
// containers (ingest.Pipeline.WithContainers).
func NewContainers(store EntryStore, ex EntryExtractor) *Containers {
	return &Containers{store: store, ex: ex}
}

// Entries lists the entries of a container file the principal can read,
// nested containers' members included, each by its full container path
// with its status and, for a failed one, the reason. A file that is not a
// container, or not resolved yet, has none (an empty list).
func (c *Containers) Entries(ctx context.Context, p tenancy.Principal, fileID string) ([]kindex.ContainerEntry, error) {
	return c.store.ContainerEntries(ctx, p, fileID)
}

// ExtractEntry extracts and indexes one entry of a container file the
// principal can read, now: an entry whose extraction failed is tried again,
// one the walk did not deliver (past the entry limit, or not listed) is
// resolved alone; an entry refused for what it is (traversal, link, bomb)
// stays refused, with its reason. It returns the entry as it stands after.
func (c *Containers) ExtractEntry(ctx context.Context, p tenancy.Principal, fileID, path string) (kindex.ContainerEntry, error) {
	if path == "" {
		return kindex.ContainerEntry{}, fmt.Errorf("%w: an entry path is required", tenancy.ErrInvalid)
	}
	// Access first: the listing is scope-checked, the extraction is not.
	if _, err := c.store.ContainerEntries(ctx, p, fileID); err != nil {
		return kindex.ContainerEntry{}, err
	}
	// A container locked by its password lists nothing, and extracts
	// nothing either (docs/knowledge.md#passwords).
	if locked, err := c.store.PasswordLocked(ctx, fileID); err != nil {
		return kindex.ContainerEntry{}, err
	} else if locked {
		return kindex.ContainerEntry{}, fmt.Errorf("%w: the file waits for its password (give it with POST /api/v1/files/{id}/password)", tenancy.ErrConflict)
	}
	return c.ex.ExtractEntry(ctx, fileID, path)
}
