package jobs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"runtime"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/riverdriver/riversqlite"
	"github.com/riverqueue/river/rivertype"
	"github.com/riverqueue/rivercontrib/otelriver"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	"go.opentelemetry.io/otel/trace"

	"github.com/agenthost/agenthost/host/store"
)

// DefaultQueue is the queue jobs go to unless EnqueueOpts.Queue names another.
const DefaultQueue = river.QueueDefault

// Defaults of Config.
const (
	DefaultMaxAttempts = 10
	DefaultRetryBase   = time.Second
	DefaultRetryCap    = 10 * time.Minute
	DefaultJobTimeout  = 10 * time.Minute
	DefaultRescueAfter = 15 * time.Minute
)

// Fetch settings (see the package documentation). PostgreSQL is woken by
// NOTIFY, SQLite by River's 50 ms outbox poll; the poll interval only bounds
// how long a missed wake-up, or a retry due sooner than River's 5 s scheduler
// pass, waits. The cooldown is the least time between two fetches of a queue:
// with River's 100 ms default, a fifth to a third of the jobs arriving at an
// idle queue waited for it (p90 63 ms on PostgreSQL, 70-90 ms on SQLite);
// 20 ms gave p90 7.5 ms and ~47 ms. Its cost is at most 50 small fetch
// queries a second per busy queue and process, instead of 10.
const (
	postgresFetchPollInterval = time.Second
	sqliteFetchPollInterval   = 500 * time.Millisecond
	fetchCooldown             = 20 * time.Millisecond
)

// hardStopGrace is how long Stop waits for jobs to return after it cancelled
// their contexts at the caller's deadline.
const hardStopGrace = 5 * time.Second

// ErrNotFound is returned for a job id that does not exist (or was removed by
// River's cleaner after its retention period).
var ErrNotFound = errors.New("jobs: no such job")

// Config configures a Queue. The zero value plus a Registry is an
// enqueue-only Queue with the defaults above.
type Config struct {
	// Registry lists the job kinds and their workers. Required.
	Registry *Registry
	// Work makes this Queue work jobs after Start. Without it the Queue only
	// enqueues, cancels and inspects (Start is an error): the HTTP server may
	// work too, `agenthost worker` always does.
	Work bool
	// Queues maps the queue names this process works to the number of jobs it
	// runs at once from each. Nil means {DefaultQueue: max(4, GOMAXPROCS)}.
	// Only used with Work.
	Queues map[string]int
	// MaxAttempts is the default number of attempts before a failing job is
	// discarded (EnqueueOpts.MaxAttempts overrides it per job). Default 10.
	MaxAttempts int
	// RetryBase is the delay before the first retry; each further retry waits
	// twice as long, up to RetryCap, with ±10% jitter so jobs that failed
	// together do not retry together. Defaults 1 s and 10 min.
	RetryBase, RetryCap time.Duration
	// JobTimeout cancels a job's context after this long. Default 10 min;
	// -1 means no timeout.
	JobTimeout time.Duration
	// RescueAfter is how long a job may stay running before it is taken for
	// the job of a dead worker and retried. It must exceed JobTimeout, or live
	// jobs would be run twice. Default 15 min.
	RescueAfter time.Duration
	// FetchPollInterval overrides the fallback fetch interval (see the package
	// documentation; 1 s on PostgreSQL, 500 ms on SQLite).
	FetchPollInterval time.Duration
	// Periodic lists jobs enqueued at fixed intervals while this Queue
	// works (by River's leader: one per period across processes). Only
	// used with Work.
	Periodic []Periodic
	// HeartbeatInterval is how often a working Queue records that its
	// process is alive, and looks for running jobs of processes that are
	// not; HostLease is how long a process may go without a heartbeat
	// before its running jobs are handed back to be run again (lease.go).
	// Defaults 2 s and 15 s; the lease must be at least twice the interval.
	HeartbeatInterval, HostLease time.Duration
	// HostID is this process's id among the hosts (see NewHostID); empty
	// makes a fresh one.
	HostID string
	// TracerProvider, when set, makes a span of every job insert and every
	// attempt (River's OpenTelemetry middleware); nil makes none.
	TracerProvider trace.TracerProvider
	// Logger receives River's and this package's logs; nil discards them.
	Logger *slog.Logger
}

// Queue enqueues jobs and, with Config.Work, works them. It is safe for
// concurrent use. It holds no resources of its own beyond River's client;
// the DB it was built on must stay open until Stop returns.
type Queue struct {
	client   riverClient
	progress *progressTable
	work     bool
	// lease beats for this process and rescues the jobs of dead ones; nil
	// on a Queue that only enqueues.
	lease *leaseKeeper
}

// riverClient is the part of river.Client this package uses; it hides the
// transaction type that differs between the two drivers.
type riverClient interface {
	Insert(ctx context.Context, args river.JobArgs, opts *river.InsertOpts) (*rivertype.JobInsertResult, error)
	JobCancel(ctx context.Context, id int64) (*rivertype.JobRow, error)
	JobGet(ctx context.Context, id int64) (*rivertype.JobRow, error)
	Start(ctx context.Context) error
	Stop(ctx context.Context) error
	StopAndCancel(ctx context.Context) error
	JobList(ctx context.Context, params *river.JobListParams) (*river.JobListResult, error)
}

// New builds a Queue on db. It does not touch the database; Migrate and
// store.DB.Migrate must have run before the first Enqueue or Start.
func New(db *store.DB, cfg Config) (*Queue, error) {
	if cfg.Registry == nil {
		return nil, errors.New("jobs: Config.Registry is required")
	}
	progress := &progressTable{db: db.SQL(), dialect: db.Dialect()}
	workers, err := cfg.Registry.workers(progress.sweepWorker)
	if err != nil {
		return nil, fmt.Errorf("jobs: %w", err)
	}
	logger := cfg.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	jobTimeout := cfg.JobTimeout
	if jobTimeout == 0 {
		jobTimeout = DefaultJobTimeout
	}
	rescueAfter := cfg.RescueAfter
	if rescueAfter == 0 {
		rescueAfter = max(DefaultRescueAfter, jobTimeout+time.Minute)
	}
	if jobTimeout > 0 && rescueAfter <= jobTimeout {
		return nil, fmt.Errorf("jobs: RescueAfter (%s) must exceed JobTimeout (%s)", rescueAfter, jobTimeout)
	}
	base, retryCap := cfg.RetryBase, cfg.RetryCap
	if base <= 0 {
		base = DefaultRetryBase
	}
	if retryCap <= 0 {
		retryCap = max(DefaultRetryCap, base)
	}
	maxAttempts := cfg.MaxAttempts
	if maxAttempts <= 0 {
		maxAttempts = DefaultMaxAttempts
	}
	rc := &river.Config{
		JobTimeout:           jobTimeout,
		Logger:               logger,
		MaxAttempts:          maxAttempts,
		RescueStuckJobsAfter: rescueAfter,
		RetryPolicy:          backoff{base: base, cap: retryCap},
		Workers:              workers,
	}
	if cfg.Work {
		queues := cfg.Queues
		if queues == nil {
			queues = map[string]int{DefaultQueue: max(4, runtime.GOMAXPROCS(0))}
		}
		if len(queues) == 0 {
			return nil, errors.New("jobs: Config.Work needs at least one queue")
		}
		rc.Queues = make(map[string]river.QueueConfig, len(queues))
		for name, n := range queues {
			rc.Queues[name] = river.QueueConfig{MaxWorkers: n}
		}
		rc.FetchPollInterval = cfg.FetchPollInterval
		if rc.FetchPollInterval == 0 {
			rc.FetchPollInterval = postgresFetchPollInterval
			if db.Dialect() == store.SQLite {
				rc.FetchPollInterval = sqliteFetchPollInterval
			}
		}
		rc.FetchCooldown = fetchCooldown
		rc.Middleware = []rivertype.Middleware{&progressMiddleware{p: progress}}
	}
	if cfg.TracerProvider != nil {
		// River's own job metrics stay off (a no-op meter): /metrics reads
		// the queue's depth from the database.
		rc.Middleware = append(rc.Middleware, otelriver.NewMiddleware(&otelriver.MiddlewareConfig{
			TracerProvider: cfg.TracerProvider, MeterProvider: metricnoop.NewMeterProvider()}))
	}
	if cfg.Work {
		rc.PeriodicJobs = []*river.PeriodicJob{sweepPeriodic()}
		for _, p := range cfg.Periodic {
			if p.Every <= 0 || p.Args == nil {
				return nil, errors.New("jobs: a Periodic job needs Args and a positive Every")
			}
			rc.PeriodicJobs = append(rc.PeriodicJobs, river.NewPeriodicJob(river.PeriodicInterval(p.Every),
				func() (river.JobArgs, *river.InsertOpts) {
					return p.Args, &river.InsertOpts{UniqueOpts: river.UniqueOpts{ByPeriod: p.Every}}
				}, &river.PeriodicJobOpts{RunOnStart: p.RunOnStart}))
		}
	}
	var lease *leaseKeeper
	if cfg.Work {
		interval, leaseFor := cfg.HeartbeatInterval, cfg.HostLease
		if interval <= 0 {
			interval = DefaultHeartbeatInterval
		}
		if leaseFor <= 0 {
			leaseFor = max(DefaultHostLease, 2*interval)
		}
		if leaseFor < 2*interval {
			return nil, fmt.Errorf("jobs: HostLease (%s) must be at least twice HeartbeatInterval (%s)", leaseFor, interval)
		}
		id := cfg.HostID
		if id == "" {
			id = NewHostID()
		}
		lease = &leaseKeeper{db: db.SQL(), dialect: db.Dialect(), id: id, interval: interval, lease: leaseFor, logger: logger}
		// River records its client id in each job's attempted_by: that is
		// how a running job is traced to the host whose heartbeat it lives by.
		rc.ID = lease.id
	}
	var client riverClient
	var exec riverdriver.Executor
	switch db.Dialect() {
	case store.Postgres:
		d := riverpgxv5.New(db.Pool())
		exec = d.GetExecutor()
		client, err = river.NewClient(d, rc)
	case store.SQLite:
		d := riversqlite.New(db.SQL())
		exec = d.GetExecutor()
		client, err = river.NewClient(d, rc)
	default:
		err = fmt.Errorf("unknown dialect %q", db.Dialect())
	}
	if err != nil {
		return nil, fmt.Errorf("jobs: %w", err)
	}
	if lease != nil {
		lease.exec, lease.jobs = exec, client
	}
	return &Queue{client: client, progress: progress, work: cfg.Work, lease: lease}, nil
}

// Start begins working jobs and returns once the workers run (it pings the
// database first and fails if it cannot reach it). The Queue runs until Stop:
// ctx's values reach the jobs, its cancellation does not, so that the one way
// to stop is the graceful one. Start fails on a Queue built without
// Config.Work.
func (q *Queue) Start(ctx context.Context) error {
	if !q.work {
		return errors.New("jobs: Start on a Queue that only enqueues (Config.Work is false)")
	}
	// The first heartbeat precedes the first fetch, so no job of this
	// process is ever seen without one; the first rescue pass runs at once,
	// so the jobs a killed predecessor left are run again within moments
	// of a restart (once their host's lease has run out).
	if err := q.lease.start(ctx); err != nil {
		return fmt.Errorf("jobs: start: %w", err)
	}
	if err := q.client.Start(context.WithoutCancel(ctx)); err != nil {
		q.lease.close(ctx)
		return fmt.Errorf("jobs: start: %w", err)
	}
	return nil
}

// HostID is this process's id among the hosts working the queue (empty
// when the queue does not work jobs): what it stamps on work it owns.
func (q *Queue) HostID() string {
	if q.lease == nil {
		return ""
	}
	return q.lease.id
}

// LiveHosts returns the ids of the hosts whose heartbeat is within the
// lease: work stamped with any other id belongs to a host that died.
func (q *Queue) LiveHosts(ctx context.Context) (map[string]bool, error) {
	if q.lease == nil {
		return nil, errors.New("jobs: this queue does not work jobs, so it knows no hosts")
	}
	return q.lease.liveHosts(ctx)
}

// Stop stops fetching jobs and waits for the running ones to finish until ctx
// is done; then it cancels their contexts and waits up to 5 s more for them
// to return. A job that returns because of that cancellation is made
// available again without losing an attempt (River's soft-stop path), to be
// run later by this or another process. Stop returns nil when
// every job finished in time, and ctx's error wrapped otherwise. Stop on a
// Queue that was not started returns nil.
func (q *Queue) Stop(ctx context.Context) error {
	if q.lease != nil {
		defer q.lease.close(ctx)
	}
	err := q.client.Stop(ctx)
	if err == nil || ctx.Err() == nil {
		if err != nil {
			return fmt.Errorf("jobs: stop: %w", err)
		}
		return nil
	}
	hard, cancel := context.WithTimeout(context.WithoutCancel(ctx), hardStopGrace)
	defer cancel()
	if herr := q.client.StopAndCancel(hard); herr != nil {
		return fmt.Errorf("jobs: stop: jobs still running %s after their contexts were cancelled: %w", hardStopGrace, errors.Join(err, herr))
	}
	return fmt.Errorf("jobs: stop: running jobs were cancelled at the deadline: %w", err)
}

// Periodic is a job enqueued every Every (Config.Periodic).
type Periodic struct {
	Every time.Duration
	Args  Args
	// RunOnStart enqueues it when the Queue starts too.
	RunOnStart bool
}

// EnqueueOpts are the options of one Enqueue; the zero value (or nil) enqueues
// to DefaultQueue, priority 1, Config.MaxAttempts, to run now, not unique.
type EnqueueOpts struct {
	// Queue names the queue; empty is DefaultQueue.
	Queue string
	// Priority 1 (first, the default) to 4 (last) orders available jobs
	// within a queue.
	Priority int
	// MaxAttempts overrides Config.MaxAttempts for this job.
	MaxAttempts int
	// ScheduledAt delays the job until then.
	ScheduledAt time.Time
	// Unique, when non-nil, makes Enqueue skip the job if an equal one exists
	// (see Unique); Enqueued.Duplicate then reports it.
	Unique *Unique
}

// Unique says which jobs count as equal for EnqueueOpts.Unique: always the
// same kind, and further the same args, the same queue, the same period, as
// set. With none set, one job per kind exists at a time. A job counts while
// it is scheduled, available, running, retryable or completed (until River's
// cleaner removes it); a cancelled or discarded one does not. The check is
// done by a unique index in the insert, so it holds across processes.
type Unique struct {
	// ByArgs compares the JSON args (all fields, or only those tagged
	// `river:"unique"`).
	ByArgs bool
	// ByPeriod compares the scheduled time rounded down to this period (e.g.
	// at most one job per hour).
	ByPeriod time.Duration
	// ByQueue compares the queue.
	ByQueue bool
}

// Enqueued is the result of Enqueue.
type Enqueued struct {
	// ID is the job's id; for a duplicate, the id of the existing job.
	ID int64
	// Duplicate reports that EnqueueOpts.Unique matched an existing job and
	// nothing was inserted.
	Duplicate bool
}

// Enqueue stores a job of args' kind, which must be registered. It is
// durable when Enqueue returns: the job survives a restart of every process.
// It costs one insert transaction; working processes are woken at once (a
// NOTIFY on PostgreSQL, an outbox row on SQLite).
func (q *Queue) Enqueue(ctx context.Context, args Args, opts *EnqueueOpts) (Enqueued, error) {
	var o river.InsertOpts
	if opts != nil {
		o = river.InsertOpts{
			MaxAttempts: opts.MaxAttempts,
			Priority:    opts.Priority,
			Queue:       opts.Queue,
			ScheduledAt: opts.ScheduledAt,
		}
		if u := opts.Unique; u != nil {
			o.UniqueOpts = river.UniqueOpts{
				ByArgs:   u.ByArgs,
				ByPeriod: u.ByPeriod,
				ByQueue:  u.ByQueue,
				// Set explicitly (River's default states) so that Unique{}
				// means unique by kind rather than not unique.
				ByState: rivertype.UniqueOptsByStateDefault(),
			}
		}
	}
	res, err := q.client.Insert(ctx, args, &o)
	if err != nil {
		return Enqueued{}, fmt.Errorf("jobs: enqueue %s: %w", args.Kind(), err)
	}
	return Enqueued{ID: res.Job.ID, Duplicate: res.UniqueSkippedAsDuplicate}, nil
}

// Cancel cancels a job. A job that has not started (scheduled, available,
// retryable) is cancelled at once and never runs. A running job is marked,
// and the process running it cancels its context within moments (its worker
// must then return; the job ends cancelled unless it completes first). A
// finished job is left as it is. Cancel returns ErrNotFound for an unknown id.
func (q *Queue) Cancel(ctx context.Context, id int64) error {
	if _, err := q.client.JobCancel(ctx, id); err != nil {
		if errors.Is(err, rivertype.ErrNotFound) {
			return fmt.Errorf("jobs: cancel job %d: %w", id, ErrNotFound)
		}
		return fmt.Errorf("jobs: cancel job %d: %w", id, err)
	}
	return nil
}

// State is where a job is in its life.
type State string

// The states of a job. Available, Scheduled, Retryable and Running are live;
// Completed, Cancelled and Discarded are final.
const (
	StateAvailable State = State(rivertype.JobStateAvailable) // waiting for a worker
	StateScheduled State = State(rivertype.JobStateScheduled) // waiting for its scheduled time
	StateRunning   State = State(rivertype.JobStateRunning)   // being worked
	StateRetryable State = State(rivertype.JobStateRetryable) // failed, waiting to be retried
	StatePending   State = State(rivertype.JobStatePending)   // held back (unused by agenthost today)
	StateCompleted State = State(rivertype.JobStateCompleted) // its worker returned nil
	StateCancelled State = State(rivertype.JobStateCancelled) // cancelled, or failed with Permanent
	StateDiscarded State = State(rivertype.JobStateDiscarded) // failed MaxAttempts times
)

// Final reports whether the job will not run again.
func (s State) Final() bool {
	return s == StateCompleted || s == StateCancelled || s == StateDiscarded
}

// AttemptError is the error of one failed attempt.
type AttemptError struct {
	Attempt int
	At      time.Time
	Error   string
}

// Info is a job as Get sees it.
type Info struct {
	ID          int64
	Kind        string
	Queue       string
	State       State
	Priority    int
	Args        json.RawMessage
	Attempt     int // attempts made so far (including a running one)
	MaxAttempts int
	// Errors lists the failed attempts, oldest first; a rescue from a dead
	// worker is one too.
	Errors      []AttemptError
	Progress    ProgressReport
	CreatedAt   time.Time
	ScheduledAt time.Time
	AttemptedAt time.Time // start of the latest attempt; zero before the first
	FinalizedAt time.Time // when it reached a final state; zero before
}

// Get returns a job's current state, attempts, errors and latest progress.
// It costs two indexed reads. It returns ErrNotFound for an unknown id.
func (q *Queue) Get(ctx context.Context, id int64) (*Info, error) {
	row, err := q.client.JobGet(ctx, id)
	if err != nil {
		if errors.Is(err, rivertype.ErrNotFound) {
			return nil, fmt.Errorf("jobs: get job %d: %w", id, ErrNotFound)
		}
		return nil, fmt.Errorf("jobs: get job %d: %w", id, err)
	}
	p, err := q.progress.get(ctx, id)
	if err != nil {
		return nil, fmt.Errorf("jobs: get progress of job %d: %w", id, err)
	}
	info := &Info{
		ID:          row.ID,
		Kind:        row.Kind,
		Queue:       row.Queue,
		State:       State(row.State),
		Priority:    row.Priority,
		Args:        json.RawMessage(row.EncodedArgs),
		Attempt:     row.Attempt,
		MaxAttempts: row.MaxAttempts,
		Progress:    p,
		CreatedAt:   row.CreatedAt,
		ScheduledAt: row.ScheduledAt,
	}
	if row.AttemptedAt != nil {
		info.AttemptedAt = *row.AttemptedAt
	}
	if row.FinalizedAt != nil {
		info.FinalizedAt = *row.FinalizedAt
	}
	for _, e := range row.Errors {
		info.Errors = append(info.Errors, AttemptError{Attempt: e.Attempt, At: e.At, Error: e.Error})
	}
	return info, nil
}

// backoff is the retry policy: base·2^(failures-1), capped, ±10% jitter.
type backoff struct {
	base, cap time.Duration
}

func (b backoff) NextRetry(job *rivertype.JobRow) time.Time {
	// River counts failures in Errors (the current one not yet included);
	// attempts also move on snoozes, errors do not.
	d := b.base
	for range len(job.Errors) {
		if d >= b.cap/2 {
			d = b.cap
			break
		}
		d *= 2
	}
	d = min(d, b.cap)
	jitter := time.Duration((rand.Float64()*0.2 - 0.1) * float64(d))
	return time.Now().UTC().Add(d + jitter)
}
