package jobs

import (
	"context"
	"fmt"
	"time"

	"github.com/riverqueue/river"
)

// Args are the arguments of one kind of job. They are stored as JSON (so
// exported fields with json tags are what survives), and Kind names the kind:
// a short, stable, unique string such as "knowledge.index_file". Kind must
// work on the zero value (use a value receiver), because the registry asks a
// zero value for it.
type Args interface {
	Kind() string
}

// Job is one attempt at a job, as its worker sees it.
type Job[A Args] struct {
	// ID identifies the job across attempts and processes.
	ID int64
	// Args are the decoded arguments.
	Args A
	// Attempt counts attempts including this one: 1 on the first run, more
	// after a failure or a rescue from a dead worker. Work is at least once;
	// Attempt > 1 says an earlier attempt may have done part of the work.
	Attempt int
	// Rescued reports that the previous attempt ended because the process
	// running it died (kill -9, a crash, power loss) and the job was handed
	// back: this attempt is a retry after a restart, not after an error.
	Rescued bool
	// MaxAttempts is the attempt after whose failure the job is discarded.
	MaxAttempts int
	// Queue is the queue the job was enqueued to.
	Queue string
	// CreatedAt is when the job was enqueued.
	CreatedAt time.Time
}

// Registry lists the kinds of jobs a Queue knows and the function that works
// each. Build it once, in one place, before New; a Queue that only enqueues
// still needs it, because Enqueue refuses kinds nobody registered (a typo
// would otherwise wait forever for a worker).
type Registry struct {
	kinds map[string]func(*river.Workers) error
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry {
	return &Registry{kinds: map[string]func(*river.Workers) error{}}
}

// Register adds the kind of A with the function that works it. The function
// runs once per attempt, with a context that is cancelled when the job times
// out (Config.JobTimeout), is cancelled (Queue.Cancel) or the Queue stops
// hard; it must return promptly then. A nil error completes the job; an error
// fails the attempt (see Permanent for one that must not be retried); a panic
// fails it like an error.
//
// Register panics if the kind is empty or already registered, which is a
// programming error like a duplicate route.
func Register[A Args](r *Registry, work func(ctx context.Context, job *Job[A]) error) {
	var zero A
	kind := zero.Kind()
	if kind == "" {
		panic("jobs: Register: empty job kind")
	}
	if _, dup := r.kinds[kind]; dup {
		panic(fmt.Sprintf("jobs: Register: kind %q registered twice", kind))
	}
	r.kinds[kind] = func(w *river.Workers) error {
		return river.AddWorkerSafely(w, river.WorkFunc(func(ctx context.Context, j *river.Job[A]) error {
			return work(ctx, &Job[A]{
				ID:          j.ID,
				Args:        j.Args,
				Attempt:     j.Attempt,
				Rescued:     len(j.Errors) > 0 && isRescue(j.Errors[len(j.Errors)-1].Error),
				MaxAttempts: j.MaxAttempts,
				Queue:       j.Queue,
				CreatedAt:   j.CreatedAt,
			})
		}))
	}
}

// Kinds lists the registered kinds (in no particular order).
func (r *Registry) Kinds() []string {
	ks := make([]string, 0, len(r.kinds))
	for k := range r.kinds {
		ks = append(ks, k)
	}
	return ks
}

// workers builds River's worker bundle: the registered kinds plus this
// package's own.
func (r *Registry) workers(own ...func(*river.Workers) error) (*river.Workers, error) {
	w := river.NewWorkers()
	for _, add := range r.kinds {
		if err := add(w); err != nil {
			return nil, err
		}
	}
	for _, add := range own {
		if err := add(w); err != nil {
			return nil, err
		}
	}
	return w, nil
}

// Permanent wraps an error that retrying cannot fix (a malformed file, a
// deleted source): returned from a worker, it ends the job at once in state
// cancelled with the error recorded, whatever attempts remain.
func Permanent(err error) error {
	return river.JobCancel(err)
}

// Snooze, returned from a worker, puts the job back to run again after d
// without counting an attempt (a job that waits for room, not one that
// failed).
func Snooze(d time.Duration) error {
	return river.JobSnooze(d)
}
