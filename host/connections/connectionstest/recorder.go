package connectionstest

import (
	"context"
	"sync"

	"github.com/agenthost/agenthost/host/files/filemeta"
)

// Recorder is a files.Indexer that takes every new or changed file as the
// ingestion queue would and keeps its id, for the test to check what was
// handed over and to ingest it itself. It is safe for concurrent use.
type Recorder struct {
	mu  sync.Mutex
	ids []string
}

// Index records f's id.
func (r *Recorder) Index(_ context.Context, f filemeta.Item) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.ids = append(r.ids, f.ID)
	return nil
}

// IDs returns the ids recorded, in order.
func (r *Recorder) IDs() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.ids...)
}
