// Package background runs long agent work in the background
// (docs/agent.md): a BackgroundJob is a description and subtasks that the
// job queue hands to an agent run in a workflow of its own, with a budget cap, a cap on
// how many of a tenant's jobs run at once, retries, progress and a result
// summary. When a job ends, the workflow that started it gets a message and
// a `backgroundJob` event. Jobs survive restarts: the queue's lease hands a
// dead host's job to a live one, and a job ends exactly once.
package background

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/agenthost/agenthost/host/agent"
	"github.com/agenthost/agenthost/host/background/bgjob"
	"github.com/agenthost/agenthost/host/money"
	"github.com/agenthost/agenthost/host/notifications"
	"github.com/agenthost/agenthost/host/rounds"
	"github.com/agenthost/agenthost/host/tenancy"
	"github.com/agenthost/agenthost/host/workflows"
)

// Store keeps jobs. Reads and creation act in a principal's scope (a user
// sees their own jobs, a tenant admin the tenant's); the worker's updates
// are administrative.
type Store interface {
	// CreateBackgroundJob stores a queued job in a workspace p may use
	// (tenancy.ErrNotFound otherwise).
	CreateBackgroundJob(ctx context.Context, p tenancy.Principal, j bgjob.Job) (bgjob.Job, error)
	BackgroundJob(ctx context.Context, p tenancy.Principal, id string) (bgjob.Job, error)
	BackgroundJobs(ctx context.Context, p tenancy.Principal, limit int) ([]bgjob.Job, error)
	// BackgroundJobByID reads a job for the worker (no scope).
	BackgroundJobByID(ctx context.Context, id string) (bgjob.Job, error)
	// UpdateBackgroundJob applies u if the job is in one of the states
	// from; it reports whether it did (so a job ends exactly once).
	UpdateBackgroundJob(ctx context.Context, id string, from []bgjob.Status, u bgjob.Update) (bool, error)
	// RunningBackgroundJobs counts the tenant's running jobs.
	RunningBackgroundJobs(ctx context.Context, tenantID string) (int, error)
}

// Queue is the job queue jobs run on (package runjob binds it): it runs
// Service.Work for a job id, at most maxAttempts times.
type Queue interface {
	EnqueueRun(ctx context.Context, jobID string, maxAttempts int) (queueJobID int64, err error)
	// CancelRun cancels the queue's job (a running one's context ends);
	// an unknown or finished one is not an error.
	CancelRun(ctx context.Context, queueJobID int64) error
}

// Runner runs an agent round and waits for its end (workspace.Service).
type Runner interface {
	Run(ctx context.Context, p tenancy.Principal, workspaceID string, req rounds.StartRequest, started func(workflows.Workflow)) (workflows.Workflow, agent.Result, error)
}

// DefaultPerTenant is how many of a tenant's jobs run at once by default.
const DefaultPerTenant = 2

// Config tunes the service; zero values take the defaults in brackets.
type Config struct {
	// PerTenant is how many of a tenant's jobs run at once [2]; the others
	// wait in the queue.
	PerTenant int
	// MaxRetries is how often a failed run is tried again [2].
	MaxRetries int
	// Wait is how long a job over the tenant's cap waits before it looks
	// again [5s].
	Wait time.Duration
}

// Service starts, lists, cancels and works background jobs.
type Service struct {
	store  Store
	queue  Queue
	runner Runner
	wf     *workflows.Service
	cfg    Config
	log    *slog.Logger
	// notify tells the job's person that it ended; nil tells no one.
	notify Notifier
}

// Notifier tells a person of a job that ended (notifications.Service).
type Notifier interface {
	Notify(ctx context.Context, n notifications.Notification)
}

// WithNotifier makes the service tell each job's person when it ends.
func (s *Service) WithNotifier(n Notifier) *Service {
	s.notify = n
	return s
}

// New returns the service; logger may be nil.
func New(store Store, queue Queue, runner Runner, wf *workflows.Service, cfg Config, logger *slog.Logger) *Service {
	if cfg.PerTenant <= 0 {
		cfg.PerTenant = DefaultPerTenant
	}
	if cfg.MaxRetries <= 0 {
		cfg.MaxRetries = 2
	}
	if cfg.Wait <= 0 {
		cfg.Wait = 5 * time.Second
	}
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &Service{store: store, queue: queue, runner: runner, wf: wf, cfg: cfg, log: logger}
}

// StartRequest asks for a job.
type StartRequest struct {
	WorkspaceID      string   `json:"workspaceId"`
	OriginWorkflowID string   `json:"originWorkflowId,omitempty"`
	Description      string   `json:"description"`
	Subtasks         []string `json:"subtasks,omitempty"`
	// MaxCostCHF caps the job's spending (a decimal amount, "0.50"); empty:
	// the host's per-workflow budget.
	MaxCostCHF string `json:"maxCostCHF,omitempty"`
}

// Limits of a request.
const (
	maxDescription = 4 << 10
	maxSubtasks    = 20
	maxSubtask     = 2 << 10
)

// Start checks the request, stores the job and queues it.
func (s *Service) Start(ctx context.Context, p tenancy.Principal, r StartRequest) (bgjob.Job, error) {
	desc := strings.TrimSpace(r.Description)
	switch {
	case desc == "":
		return bgjob.Job{}, fmt.Errorf("%w: description is empty", tenancy.ErrInvalid)
	case len(desc) > maxDescription || !utf8.ValidString(desc):
		return bgjob.Job{}, fmt.Errorf("%w: description must be valid UTF-8 of at most %d bytes", tenancy.ErrInvalid, maxDescription)
	case len(r.Subtasks) > maxSubtasks:
		return bgjob.Job{}, fmt.Errorf("%w: %d subtasks, at most %d", tenancy.ErrInvalid, len(r.Subtasks), maxSubtasks)
	}
	var subtasks []string
	for i, st := range r.Subtasks {
		st = strings.TrimSpace(st)
		if st == "" || len(st) > maxSubtask || !utf8.ValidString(st) {
			return bgjob.Job{}, fmt.Errorf("%w: subtasks[%d] must be non-empty valid UTF-8 of at most %d bytes", tenancy.ErrInvalid, i, maxSubtask)
		}
		subtasks = append(subtasks, st)
	}
	j := bgjob.Job{WorkspaceID: r.WorkspaceID, OriginWorkflowID: r.OriginWorkflowID, Description: desc, Subtasks: subtasks,
		Status: bgjob.Queued, MaxRetries: s.cfg.MaxRetries}
	if r.MaxCostCHF != "" {
		a, err := money.Parse(r.MaxCostCHF)
		if err != nil || a <= 0 {
			return bgjob.Job{}, fmt.Errorf("%w: maxCostCHF %q is not a positive amount of CHF", tenancy.ErrInvalid, r.MaxCostCHF)
		}
		j.MaxCost = &a
	}
	if j.OriginWorkflowID != "" {
		w, err := s.wf.Get(ctx, p, j.OriginWorkflowID)
		if err != nil {
			return bgjob.Job{}, fmt.Errorf("originWorkflowId: %w", err)
		}
		if w.WorkspaceID != j.WorkspaceID {
			return bgjob.Job{}, fmt.Errorf("originWorkflowId: %w: workflow %q is in workspace %q, not %q", tenancy.ErrNotFound, w.ID, w.WorkspaceID, j.WorkspaceID)
		}
	}
	j, err := s.store.CreateBackgroundJob(ctx, p, j)
	if err != nil {
		return bgjob.Job{}, err
	}
	qid, err := s.queue.EnqueueRun(ctx, j.ID, j.MaxRetries+1)
	if err != nil {
		msg := "could not be queued: " + err.Error()
		st := bgjob.Failed
		s.store.UpdateBackgroundJob(context.WithoutCancel(ctx), j.ID, []bgjob.Status{bgjob.Queued}, bgjob.Update{Status: &st, Error: &msg})
		return bgjob.Job{}, fmt.Errorf("background: queueing job %s: %w", j.ID, err)
	}
	if _, err := s.store.UpdateBackgroundJob(ctx, j.ID, []bgjob.Status{bgjob.Queued, bgjob.Running}, bgjob.Update{QueueJobID: &qid}); err != nil {
		return bgjob.Job{}, err
	}
	j.QueueJobID = qid
	return j, nil
}

// Get returns a job the principal may see.
func (s *Service) Get(ctx context.Context, p tenancy.Principal, id string) (bgjob.Job, error) {
	return s.store.BackgroundJob(ctx, p, id)
}

// List returns the principal's jobs (a tenant admin's: the tenant's), newest
// first.
func (s *Service) List(ctx context.Context, p tenancy.Principal, limit int) ([]bgjob.Job, error) {
	return s.store.BackgroundJobs(ctx, p, limit)
}

// ErrEnded: the job has ended and cannot be cancelled.
var ErrEnded = fmt.Errorf("%w: the background job has already ended", tenancy.ErrConflict)

// Cancel ends a queued or running job: a running one's round is stopped
// (its progress summary becomes the result), a queued one never starts.
func (s *Service) Cancel(ctx context.Context, p tenancy.Principal, id string) (bgjob.Job, error) {
	j, err := s.store.BackgroundJob(ctx, p, id)
	if err != nil {
		return bgjob.Job{}, err
	}
	if j.Status.Terminal() {
		return bgjob.Job{}, ErrEnded
	}
	st, msg, now := bgjob.Cancelled, cancelledByUser, time.Now().UTC()
	if j.Status == bgjob.Queued {
		if ok, err := s.store.UpdateBackgroundJob(ctx, id, []bgjob.Status{bgjob.Queued}, bgjob.Update{Status: &st, Error: &msg, CompletedAt: &now}); err != nil {
			return bgjob.Job{}, err
		} else if ok {
			s.tellOrigin(context.WithoutCancel(ctx), j, st, "", msg)
		}
	} else {
		// The worker sees its context cancelled, stops the round and
		// records the end.
		if _, err := s.store.UpdateBackgroundJob(ctx, id, []bgjob.Status{bgjob.Running}, bgjob.Update{Error: &msg}); err != nil {
			return bgjob.Job{}, err
		}
	}
	if j.QueueJobID != 0 {
		if err := s.queue.CancelRun(ctx, j.QueueJobID); err != nil {
			return bgjob.Job{}, fmt.Errorf("background: cancelling job %s: %w", id, err)
		}
	}
	return s.store.BackgroundJob(ctx, p, id)
}
