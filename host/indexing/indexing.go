// Package indexing runs the knowledge store's ingestion on the job queue:
// every new file becomes one "knowledge.ingest" job, worked by `agenthost
// serve` or any `agenthost worker`, retried on failure and surviving
// restarts. It is its own package because the queue sits on the store,
// which the knowledge package must not depend on.
package indexing

import (
	"context"
	"errors"
	"fmt"

	"github.com/agenthost/agenthost/host/files"
	"github.com/agenthost/agenthost/host/jobs"
	"github.com/agenthost/agenthost/host/knowledge"
)

// IngestArgs is the job that indexes one uploaded file.
type IngestArgs struct {
	FileID string `json:"fileId"`
}

// Kind implements jobs.Args.
func (IngestArgs) Kind() string { return "knowledge.ingest" }

// RegisterJobs adds the ingestion job kind to a registry.
func RegisterJobs(reg *jobs.Registry, in *knowledge.Ingester) {
	jobs.Register(reg, func(ctx context.Context, job *jobs.Job[IngestArgs]) error {
		if job.Rescued {
			// The process indexing this file died; say so on the file's
			// state until this attempt ends it, so that "pending" has a
			// reason.
			note := fmt.Sprintf("%s (attempt %d of %d; the process indexing it stopped)", knowledge.NoteRetryingAfterRestart, job.Attempt, job.MaxAttempts)
			if err := in.Note(ctx, job.Args.FileID, note); err != nil {
				if errors.Is(err, knowledge.ErrPermanent) {
					return jobs.Permanent(err)
				}
				return err
			}
		}
		_, err := in.Ingest(ctx, job.Args.FileID, job.Attempt > 1)
		if errors.Is(err, knowledge.ErrPermanent) {
			return jobs.Permanent(err)
		}
		return err
	})
}

// Enqueuer is what JobIndexer needs of the job queue.
type Enqueuer interface {
	Enqueue(ctx context.Context, args jobs.Args, opts *jobs.EnqueueOpts) (jobs.Enqueued, error)
}

// JobIndexer is the files.Indexer that queues an ingestion job per new file
// (one per file even if told twice).
type JobIndexer struct{ q Enqueuer }

// NewJobIndexer returns an indexer over a queue.
func NewJobIndexer(q Enqueuer) *JobIndexer { return &JobIndexer{q: q} }

// Index implements files.Indexer.
func (j *JobIndexer) Index(ctx context.Context, f files.Item) error {
	_, err := j.q.Enqueue(ctx, IngestArgs{FileID: f.ID}, &jobs.EnqueueOpts{Unique: &jobs.Unique{ByArgs: true}})
	return err
}
