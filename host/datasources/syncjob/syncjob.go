// Package syncjob binds data source syncs to the job queue: the queue's
// job carries the data source's id and the claim's seq, runs
// datasources.Service.Sync, and turns a permanent failure into the queue's.
package syncjob

import (
	"context"
	"errors"
	"time"

	"github.com/agenthost/agenthost/host/datasources"
	"github.com/agenthost/agenthost/host/jobs"
)

// Args is the queue's job of one claimed sync.
type Args struct {
	DataSourceID string `json:"dataSourceId"`
	Seq          int64  `json:"seq"`
}

// Kind implements jobs.Args.
func (Args) Kind() string { return "datasources.sync" }

// QueueName is the queue syncs run on: only hosts that load the connector
// plugins (serve) work it, not `agenthost worker`.
const QueueName = "datasources"

// Worker runs a sync: datasources.Service.
type Worker interface {
	Sync(ctx context.Context, id string, seq int64, attempt, maxAttempts int) (datasources.Result, error)
}

// Register adds the kind to reg, worked by what w returns; a job that comes
// before the service exists (a rescued one, at start-up) waits a second.
func Register(reg *jobs.Registry, w func() Worker) {
	jobs.Register(reg, func(ctx context.Context, j *jobs.Job[Args]) error {
		wk := w()
		if wk == nil {
			return jobs.Snooze(time.Second)
		}
		_, err := wk.Sync(ctx, j.Args.DataSourceID, j.Args.Seq, j.Attempt, j.MaxAttempts)
		if errors.Is(err, datasources.ErrPermanent) {
			return jobs.Permanent(err)
		}
		return err
	})
}

// Queue is datasources.Queue on the job queue.
type Queue struct {
	Q *jobs.Queue
	// MaxAttempts bounds one sync's attempts (0: the queue's default).
	MaxAttempts int
}

// EnqueueSync implements datasources.Queue.
func (q Queue) EnqueueSync(ctx context.Context, id string, seq int64) (int64, error) {
	// Unique by args: one claim is one job, even if enqueued twice.
	e, err := q.Q.Enqueue(ctx, Args{DataSourceID: id, Seq: seq}, &jobs.EnqueueOpts{Queue: QueueName, MaxAttempts: q.MaxAttempts,
		Unique: &jobs.Unique{ByArgs: true}})
	return e.ID, err
}
