// Package runjob binds background jobs to the job queue: the queue's job
// of a background job carries its id, runs background.Service.Work, and
// turns its outcomes into the queue's (a permanent failure, a wait for room
// that counts no attempt).
package runjob

import (
	"context"
	"errors"
	"time"

	"github.com/agenthost/agenthost/host/background"
	"github.com/agenthost/agenthost/host/jobs"
)

// Args is the queue's job of a background job: only its id; the row is the
// job.
type Args struct {
	JobID string `json:"jobId"`
}

// Kind implements jobs.Args.
func (Args) Kind() string { return "agent.background" }

// Worker is what runs a job: background.Service.
type Worker interface {
	Work(ctx context.Context, jobID string, attempt, maxAttempts int) error
}

// QueueName is the queue background jobs run on: only hosts that run
// agents (serve) work it, not `agenthost worker`.
const QueueName = "background"

// Register adds the kind to reg, worked by what w returns. The service is
// built after the queue (it enqueues on it), so w is asked when a job runs;
// a job that comes before the service exists (a rescued one, at start-up)
// waits a second.
func Register(reg *jobs.Registry, w func() Worker) {
	jobs.Register(reg, func(ctx context.Context, j *jobs.Job[Args]) error {
		wk := w()
		if wk == nil {
			return jobs.Snooze(time.Second)
		}
		err := wk.Work(ctx, j.Args.JobID, j.Attempt, j.MaxAttempts)
		var wait background.Wait
		switch {
		case errors.As(err, &wait):
			return jobs.Snooze(wait.Duration)
		case errors.Is(err, background.ErrPermanent):
			return jobs.Permanent(err)
		}
		return err
	})
}

// Queue is background.Queue on the job queue.
type Queue struct{ Q *jobs.Queue }

// EnqueueRun implements background.Queue.
func (q Queue) EnqueueRun(ctx context.Context, jobID string, maxAttempts int) (int64, error) {
	e, err := q.Q.Enqueue(ctx, Args{JobID: jobID}, &jobs.EnqueueOpts{Queue: QueueName, MaxAttempts: maxAttempts})
	return e.ID, err
}

// CancelRun implements background.Queue.
func (q Queue) CancelRun(ctx context.Context, id int64) error {
	if err := q.Q.Cancel(ctx, id); err != nil && !errors.Is(err, jobs.ErrNotFound) {
		return err
	}
	return nil
}
