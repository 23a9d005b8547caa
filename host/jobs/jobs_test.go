package jobs_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agenthost/agenthost/host/jobs"
	"github.com/agenthost/agenthost/host/store"
)

type echoArgs struct {
	Name string `json:"name"`
	N    int    `json:"n"`
}

func (echoArgs) Kind() string { return "test.echo" }

func TestEnqueueAndWork(t *testing.T) {
	dialects(t, func(t *testing.T, sc store.Config) {
		db := openDB(t, sc)
		got := make(chan *jobs.Job[echoArgs], 10)
		reg := jobs.NewRegistry()
		jobs.Register(reg, func(ctx context.Context, job *jobs.Job[echoArgs]) error {
			got <- job
			return nil
		})
		q := startQueue(t, db, testConfig(t, reg, true))
		ctx := context.Background()

		tests := []struct {
			name  string
			args  echoArgs
			opts  *jobs.EnqueueOpts
			delay time.Duration // scheduled this long after enqueueing
		}{
			{"no options", echoArgs{Name: "a", N: 1}, nil, 0},
			{"priority and attempts", echoArgs{Name: "b", N: 2}, &jobs.EnqueueOpts{Priority: 3, MaxAttempts: 7}, 0},
			{"scheduled soon", echoArgs{Name: "c", N: 3}, &jobs.EnqueueOpts{}, 300 * time.Millisecond},
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				before := time.Now()
				if tc.delay > 0 {
					// Scheduled from now, not from when the table was
					// built: earlier cases may take any time.
					tc.opts.ScheduledAt = before.Add(tc.delay)
				}
				res, err := q.Enqueue(ctx, tc.args, tc.opts)
				if err != nil {
					t.Fatal(err)
				}
				if res.Duplicate || res.ID == 0 {
					t.Fatalf("Enqueue = %+v", res)
				}
				job := recv(t, got, 10*time.Second, "job")
				if job.ID != res.ID || job.Args != tc.args || job.Attempt != 1 || job.Queue != jobs.DefaultQueue {
					t.Fatalf("worker got %+v, want id %d args %+v attempt 1", job, res.ID, tc.args)
				}
				if tc.opts != nil && !tc.opts.ScheduledAt.IsZero() && time.Since(before) < 250*time.Millisecond {
					t.Errorf("scheduled job ran after %s, before its time", time.Since(before))
				}
				info := waitState(t, q, res.ID, 5*time.Second, jobs.StateCompleted)
				var args echoArgs
				if err := json.Unmarshal(info.Args, &args); err != nil || args != tc.args {
					t.Errorf("Info.Args = %s (%v), want %+v", info.Args, err, tc.args)
				}
				if info.Kind != "test.echo" || info.Attempt != 1 || len(info.Errors) != 0 || !info.State.Final() ||
					info.FinalizedAt.IsZero() || info.AttemptedAt.IsZero() {
					t.Errorf("Info = %+v", info)
				}
				if tc.opts != nil && tc.opts.MaxAttempts != 0 && info.MaxAttempts != tc.opts.MaxAttempts {
					t.Errorf("MaxAttempts = %d, want %d", info.MaxAttempts, tc.opts.MaxAttempts)
				}
				if tc.opts != nil && tc.opts.Priority != 0 && info.Priority != tc.opts.Priority {
					t.Errorf("Priority = %d, want %d", info.Priority, tc.opts.Priority)
				}
			})
		}
	})
}

type flakyArgs struct {
	Failures int `json:"failures"` // attempts that fail before one succeeds
}

func (flakyArgs) Kind() string { return "test.flaky" }

func TestRetries(t *testing.T) {
	dialects(t, func(t *testing.T, sc store.Config) {
		db := openDB(t, sc)
		var (
			mu       sync.Mutex
			attempts = map[int64][]time.Time{}
		)
		reg := jobs.NewRegistry()
		jobs.Register(reg, func(ctx context.Context, job *jobs.Job[flakyArgs]) error {
			mu.Lock()
			attempts[job.ID] = append(attempts[job.ID], time.Now())
			mu.Unlock()
			if job.Attempt <= job.Args.Failures {
				return fmt.Errorf("attempt %d: %w", job.Attempt, errBoom)
			}
			return nil
		})
		cfg := testConfig(t, reg, true)
		q := startQueue(t, db, cfg)

		tests := []struct {
			name        string
			failures    int
			maxAttempts int
			want        jobs.State
			wantAttempt int
		}{
			{"fails twice then succeeds", 2, 5, jobs.StateCompleted, 3},
			{"max attempts exhausted", 10, 3, jobs.StateDiscarded, 3},
			{"one attempt only", 1, 1, jobs.StateDiscarded, 1},
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				res, err := q.Enqueue(context.Background(), flakyArgs{Failures: tc.failures}, &jobs.EnqueueOpts{MaxAttempts: tc.maxAttempts})
				if err != nil {
					t.Fatal(err)
				}
				info := waitFor(t, q, res.ID, 10*time.Second, "final", func(i *jobs.Info) bool { return i.State.Final() })
				if info.State != tc.want || info.Attempt != tc.wantAttempt {
					t.Fatalf("state %s attempt %d, want %s attempt %d", info.State, info.Attempt, tc.want, tc.wantAttempt)
				}
				wantErrors := min(tc.failures, tc.maxAttempts)
				if len(info.Errors) != wantErrors {
					t.Fatalf("errors = %+v, want %d", info.Errors, wantErrors)
				}
				for i, e := range info.Errors {
					if e.Attempt != i+1 || !strings.Contains(e.Error, fmt.Sprintf("attempt %d: boom", i+1)) || e.At.IsZero() {
						t.Errorf("error %d = %+v", i, e)
					}
				}
				// Backoff: base·2^(n-1) with ±10% jitter between attempts.
				mu.Lock()
				times := attempts[res.ID]
				mu.Unlock()
				if len(times) != tc.wantAttempt {
					t.Fatalf("worker ran %d times, want %d", len(times), tc.wantAttempt)
				}
				for i := 1; i < len(times); i++ {
					want := min(cfg.RetryBase<<(i-1), cfg.RetryCap)
					if gap := times[i].Sub(times[i-1]); gap < want*9/10 {
						t.Errorf("retry %d after %s, want at least %s", i, gap, want*9/10)
					}
				}
			})
		}
	})
}

type permanentArgs struct{}

func (permanentArgs) Kind() string { return "test.permanent" }

func TestPermanentFailure(t *testing.T) {
	dialects(t, func(t *testing.T, sc store.Config) {
		db := openDB(t, sc)
		reg := jobs.NewRegistry()
		jobs.Register(reg, func(ctx context.Context, job *jobs.Job[permanentArgs]) error {
			return jobs.Permanent(fmt.Errorf("not a PDF: %w", errBoom))
		})
		q := startQueue(t, db, testConfig(t, reg, true))
		res, err := q.Enqueue(context.Background(), permanentArgs{}, nil)
		if err != nil {
			t.Fatal(err)
		}
		info := waitState(t, q, res.ID, 5*time.Second, jobs.StateCancelled)
		if info.Attempt != 1 || len(info.Errors) != 1 || !strings.Contains(info.Errors[0].Error, "not a PDF") {
			t.Fatalf("Info = %+v", info)
		}
	})
}

type uniqueArgs struct {
	Key   string `json:"key" river:"unique"`
	Extra string `json:"extra"`
}

func (uniqueArgs) Kind() string { return "test.unique" }

func TestUnique(t *testing.T) {
	dialects(t, func(t *testing.T, sc store.Config) {
		db := openDB(t, sc)
		reg := jobs.NewRegistry()
		jobs.Register(reg, func(ctx context.Context, job *jobs.Job[uniqueArgs]) error { return nil })
		// Enqueue only, so the jobs stay available while the test looks.
		q, err := jobs.New(db, testConfig(t, reg, false))
		if err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		later := time.Now().Add(time.Hour)

		tests := []struct {
			name          string
			first, second uniqueArgs
			opts1, opts2  *jobs.EnqueueOpts
			wantDuplicate bool
		}{
			{"same args", uniqueArgs{Key: "a"}, uniqueArgs{Key: "a"},
				&jobs.EnqueueOpts{Unique: &jobs.Unique{ByArgs: true}}, &jobs.EnqueueOpts{Unique: &jobs.Unique{ByArgs: true}}, true},
			{"unique field equal, other differs", uniqueArgs{Key: "b", Extra: "1"}, uniqueArgs{Key: "b", Extra: "2"},
				&jobs.EnqueueOpts{Unique: &jobs.Unique{ByArgs: true}}, &jobs.EnqueueOpts{Unique: &jobs.Unique{ByArgs: true}}, true},
			{"different args", uniqueArgs{Key: "c"}, uniqueArgs{Key: "d"},
				&jobs.EnqueueOpts{Unique: &jobs.Unique{ByArgs: true}}, &jobs.EnqueueOpts{Unique: &jobs.Unique{ByArgs: true}}, false},
			{"same period", uniqueArgs{Key: "e"}, uniqueArgs{Key: "e"},
				&jobs.EnqueueOpts{ScheduledAt: later, Unique: &jobs.Unique{ByArgs: true, ByPeriod: 24 * time.Hour}},
				&jobs.EnqueueOpts{ScheduledAt: later.Add(time.Second), Unique: &jobs.Unique{ByArgs: true, ByPeriod: 24 * time.Hour}}, true},
			{"other period", uniqueArgs{Key: "f"}, uniqueArgs{Key: "f"},
				&jobs.EnqueueOpts{ScheduledAt: later, Unique: &jobs.Unique{ByArgs: true, ByPeriod: time.Hour}},
				&jobs.EnqueueOpts{ScheduledAt: later.Add(2 * time.Hour), Unique: &jobs.Unique{ByArgs: true, ByPeriod: time.Hour}}, false},
			{"other queue, by queue", uniqueArgs{Key: "g"}, uniqueArgs{Key: "g"},
				&jobs.EnqueueOpts{Unique: &jobs.Unique{ByArgs: true, ByQueue: true}},
				&jobs.EnqueueOpts{Queue: "other", Unique: &jobs.Unique{ByArgs: true, ByQueue: true}}, false},
			{"second not unique", uniqueArgs{Key: "h"}, uniqueArgs{Key: "h"},
				&jobs.EnqueueOpts{Unique: &jobs.Unique{ByArgs: true}}, nil, false},
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				r1, err := q.Enqueue(ctx, tc.first, tc.opts1)
				if err != nil {
					t.Fatal(err)
				}
				r2, err := q.Enqueue(ctx, tc.second, tc.opts2)
				if err != nil {
					t.Fatal(err)
				}
				if r1.Duplicate || r2.Duplicate != tc.wantDuplicate || (r1.ID == r2.ID) != tc.wantDuplicate {
					t.Fatalf("first %+v, second %+v; want duplicate %v", r1, r2, tc.wantDuplicate)
				}
			})
		}

		// Unique{} with nothing else: one live job per kind.
		r1, err := q.Enqueue(ctx, uniqueArgs{Key: "x"}, &jobs.EnqueueOpts{Queue: "kind", Unique: &jobs.Unique{}})
		if err != nil {
			t.Fatal(err)
		}
		r2, err := q.Enqueue(ctx, uniqueArgs{Key: "y"}, &jobs.EnqueueOpts{Queue: "kind", Unique: &jobs.Unique{}})
		if err != nil || !r2.Duplicate || r2.ID != r1.ID {
			t.Fatalf("unique by kind: %+v %+v %v", r1, r2, err)
		}
		// Once cancelled, the job no longer blocks a new one.
		if err := q.Cancel(ctx, r1.ID); err != nil {
			t.Fatal(err)
		}
		r3, err := q.Enqueue(ctx, uniqueArgs{Key: "z"}, &jobs.EnqueueOpts{Queue: "kind", Unique: &jobs.Unique{}})
		if err != nil || r3.Duplicate {
			t.Fatalf("after cancel: %+v %v", r3, err)
		}
	})
}

// TestUniqueWorked: a unique job enqueued twice, with a worker running, is
// worked once.
func TestUniqueWorked(t *testing.T) {
	dialects(t, func(t *testing.T, sc store.Config) {
		db := openDB(t, sc)
		var (
			mu   sync.Mutex
			runs = map[string]int{}
		)
		reg := jobs.NewRegistry()
		jobs.Register(reg, func(ctx context.Context, job *jobs.Job[uniqueArgs]) error {
			mu.Lock()
			runs[job.Args.Key]++
			mu.Unlock()
			return nil
		})
		q := startQueue(t, db, testConfig(t, reg, true))
		opts := &jobs.EnqueueOpts{Unique: &jobs.Unique{ByArgs: true}}
		r1, err := q.Enqueue(context.Background(), uniqueArgs{Key: "once"}, opts)
		if err != nil {
			t.Fatal(err)
		}
		r2, err := q.Enqueue(context.Background(), uniqueArgs{Key: "once"}, opts)
		if err != nil {
			t.Fatal(err)
		}
		if !r2.Duplicate || r2.ID != r1.ID {
			t.Fatalf("second enqueue %+v, want duplicate of %d", r2, r1.ID)
		}
		waitState(t, q, r1.ID, 5*time.Second, jobs.StateCompleted)
		// A completed unique job still counts (until River's cleaner removes it).
		r3, err := q.Enqueue(context.Background(), uniqueArgs{Key: "once"}, opts)
		if err != nil || !r3.Duplicate {
			t.Fatalf("after completion: %+v %v", r3, err)
		}
		time.Sleep(200 * time.Millisecond)
		mu.Lock()
		defer mu.Unlock()
		if runs["once"] != 1 {
			t.Fatalf("worked %d times, want 1", runs["once"])
		}
	})
}

type blockArgs struct {
	Tag string `json:"tag"`
}

func (blockArgs) Kind() string { return "test.block" }

func TestCancel(t *testing.T) {
	dialects(t, func(t *testing.T, sc store.Config) {
		db := openDB(t, sc)
		started := make(chan int64, 10)
		ended := make(chan error, 10)
		reg := jobs.NewRegistry()
		jobs.Register(reg, func(ctx context.Context, job *jobs.Job[blockArgs]) error {
			started <- job.ID
			<-ctx.Done()
			ended <- context.Cause(ctx)
			return ctx.Err()
		})
		q := startQueue(t, db, testConfig(t, reg, true))
		ctx := context.Background()

		t.Run("scheduled", func(t *testing.T) {
			res, err := q.Enqueue(ctx, blockArgs{Tag: "scheduled"}, &jobs.EnqueueOpts{ScheduledAt: time.Now().Add(time.Hour)})
			if err != nil {
				t.Fatal(err)
			}
			if info, err := q.Get(ctx, res.ID); err != nil || info.State != jobs.StateScheduled {
				t.Fatalf("before cancel: %+v %v", info, err)
			}
			if err := q.Cancel(ctx, res.ID); err != nil {
				t.Fatal(err)
			}
			info, err := q.Get(ctx, res.ID)
			if err != nil || info.State != jobs.StateCancelled || info.Attempt != 0 {
				t.Fatalf("after cancel: %+v %v", info, err)
			}
			// Cancelling a finished job changes nothing.
			if err := q.Cancel(ctx, res.ID); err != nil {
				t.Fatal(err)
			}
		})

		t.Run("running", func(t *testing.T) {
			res, err := q.Enqueue(ctx, blockArgs{Tag: "running"}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if id := recv(t, started, 5*time.Second, "start"); id != res.ID {
				t.Fatalf("started %d, want %d", id, res.ID)
			}
			begin := time.Now()
			if err := q.Cancel(ctx, res.ID); err != nil {
				t.Fatal(err)
			}
			cause := recv(t, ended, time.Second, "cancelled context (before the 2 s job timeout)")
			t.Logf("worker saw cancellation after %s: %v", time.Since(begin), cause)
			if errors.Is(cause, context.DeadlineExceeded) {
				t.Fatalf("the job timed out instead of being cancelled: %v", cause)
			}
			info := waitState(t, q, res.ID, 5*time.Second, jobs.StateCancelled)
			if info.Attempt != 1 {
				t.Errorf("attempt %d", info.Attempt)
			}
		})

		t.Run("unknown", func(t *testing.T) {
			if err := q.Cancel(ctx, 1<<40); !errors.Is(err, jobs.ErrNotFound) {
				t.Fatalf("Cancel = %v, want ErrNotFound", err)
			}
			if _, err := q.Get(ctx, 1<<40); !errors.Is(err, jobs.ErrNotFound) {
				t.Fatalf("Get = %v, want ErrNotFound", err)
			}
		})
	})
}

type progressArgs struct{}

func (progressArgs) Kind() string { return "test.progress" }

func TestProgress(t *testing.T) {
	if err := jobs.Progress(context.Background(), 0.5, "x"); !errors.Is(err, jobs.ErrNotInJob) {
		t.Fatalf("Progress outside a job = %v, want ErrNotInJob", err)
	}
	dialects(t, func(t *testing.T, sc store.Config) {
		db := openDB(t, sc)
		reported := make(chan struct{})
		release := make(chan struct{})
		reg := jobs.NewRegistry()
		jobs.Register(reg, func(ctx context.Context, job *jobs.Job[progressArgs]) error {
			if err := jobs.Progress(ctx, 0.25, "reading"); err != nil {
				return err
			}
			if err := jobs.Progress(ctx, 0.5, "half way"); err != nil {
				return err
			}
			close(reported)
			select {
			case <-release:
			case <-ctx.Done():
				return ctx.Err()
			}
			return jobs.Progress(ctx, 7, "done") // clamped to 1
		})
		q := startQueue(t, db, testConfig(t, reg, true))
		ctx := context.Background()
		res, err := q.Enqueue(ctx, progressArgs{}, nil)
		if err != nil {
			t.Fatal(err)
		}
		info, err := q.Get(ctx, res.ID)
		if err != nil {
			t.Fatal(err)
		}
		// On a busy machine the job may run between Enqueue and Get (state
		// and progress are two reads): then the progress is one it made,
		// never one from nowhere.
		if p := info.Progress; p != (jobs.ProgressReport{}) && (p.Attempt != 1 || (p.Message != "reading" && p.Message != "half way")) {
			t.Fatalf("progress the job did not report: %+v (state %s)", p, info.State)
		}
		recv(t, reported, 5*time.Second, "progress report")
		info, err = q.Get(ctx, res.ID)
		if err != nil {
			t.Fatal(err)
		}
		p := info.Progress
		if info.State != jobs.StateRunning || p.Fraction != 0.5 || p.Message != "half way" || p.Attempt != 1 ||
			time.Since(p.At) > 10*time.Second || p.At.After(time.Now()) {
			t.Fatalf("while running: state %s, progress %+v", info.State, p)
		}
		close(release)
		info = waitState(t, q, res.ID, 5*time.Second, jobs.StateCompleted)
		if info.Progress.Fraction != 1 || info.Progress.Message != "done" {
			t.Fatalf("after completion: %+v", info.Progress)
		}
	})
}

// TestRestart: a job enqueued before the process "restarts" (Queue and DB
// closed, reopened) is worked after it.
func TestRestart(t *testing.T) {
	dialects(t, func(t *testing.T, sc store.Config) {
		ctx := context.Background()
		got := make(chan *jobs.Job[echoArgs], 1)
		reg := jobs.NewRegistry()
		jobs.Register(reg, func(ctx context.Context, job *jobs.Job[echoArgs]) error {
			got <- job
			return nil
		})

		db := openDB(t, sc)
		q, err := jobs.New(db, testConfig(t, reg, false))
		if err != nil {
			t.Fatal(err)
		}
		res, err := q.Enqueue(ctx, echoArgs{Name: "survivor", N: 42}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := q.Stop(ctx); err != nil { // not started: a no-op
			t.Fatal(err)
		}
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}

		db = openDB(t, sc)
		q = startQueue(t, db, testConfig(t, reg, true))
		job := recv(t, got, 10*time.Second, "job after restart")
		if job.ID != res.ID || job.Args.Name != "survivor" || job.Attempt != 1 {
			t.Fatalf("worked %+v", job)
		}
		waitState(t, q, res.ID, 5*time.Second, jobs.StateCompleted)
	})
}

type slowArgs struct {
	Millis int `json:"millis"`
}

func (slowArgs) Kind() string { return "test.slow" }

// TestStop: Stop waits for running jobs up to its deadline and cancels them
// after it.
func TestStop(t *testing.T) {
	dialects(t, func(t *testing.T, sc store.Config) {
		db := openDB(t, sc)
		started := make(chan int64, 4)
		reg := jobs.NewRegistry()
		jobs.Register(reg, func(ctx context.Context, job *jobs.Job[slowArgs]) error {
			started <- job.ID
			select {
			case <-time.After(time.Duration(job.Args.Millis) * time.Millisecond):
				return nil
			case <-ctx.Done():
				return ctx.Err()
			}
		})
		cfg := testConfig(t, reg, true)
		cfg.JobTimeout = 10 * time.Second
		cfg.RescueAfter = 20 * time.Second
		ctx := context.Background()

		t.Run("graceful", func(t *testing.T) {
			q, err := jobs.New(db, cfg)
			if err != nil {
				t.Fatal(err)
			}
			if err := q.Start(ctx); err != nil {
				t.Fatal(err)
			}
			res, err := q.Enqueue(ctx, slowArgs{Millis: 300}, nil)
			if err != nil {
				t.Fatal(err)
			}
			recv(t, started, 5*time.Second, "start")
			stopCtx, cancel := context.WithTimeout(ctx, 5*time.Second)
			defer cancel()
			if err := q.Stop(stopCtx); err != nil {
				t.Fatalf("Stop = %v", err)
			}
			if info, err := q.Get(ctx, res.ID); err != nil || info.State != jobs.StateCompleted {
				t.Fatalf("after Stop: %+v %v", info, err)
			}
		})

		t.Run("deadline", func(t *testing.T) {
			q, err := jobs.New(db, cfg)
			if err != nil {
				t.Fatal(err)
			}
			if err := q.Start(ctx); err != nil {
				t.Fatal(err)
			}
			res, err := q.Enqueue(ctx, slowArgs{Millis: 60_000}, nil)
			if err != nil {
				t.Fatal(err)
			}
			recv(t, started, 5*time.Second, "start")
			stopCtx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
			defer cancel()
			begin := time.Now()
			err = q.Stop(stopCtx)
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("Stop = %v, want DeadlineExceeded", err)
			}
			// Stop gave up on the 60 s job instead of waiting for it; a
			// bound well under that holds however busy the machine is.
			if d := time.Since(begin); d > 30*time.Second {
				t.Fatalf("Stop took %s: it waited for the job", d)
			}
			// The interrupted job is not lost, nor its attempt: it is
			// available to run again.
			info, err := q.Get(ctx, res.ID)
			if err != nil || info.State != jobs.StateAvailable || info.Attempt != 0 {
				t.Fatalf("after hard stop: %+v %v", info, err)
			}
		})
	})
}

func TestConfigErrors(t *testing.T) {
	db := openDB(t, freshStore(t, store.SQLite))
	reg := jobs.NewRegistry()
	jobs.Register(reg, func(ctx context.Context, job *jobs.Job[echoArgs]) error { return nil })
	tests := []struct {
		name string
		cfg  jobs.Config
		want string
	}{
		{"no registry", jobs.Config{}, "Registry is required"},
		{"rescue before timeout", jobs.Config{Registry: reg, JobTimeout: time.Minute, RescueAfter: time.Second}, "must exceed JobTimeout"},
		{"no queues", jobs.Config{Registry: reg, Work: true, Queues: map[string]int{}}, "at least one queue"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := jobs.New(db, tc.cfg)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("New = %v, want %q", err, tc.want)
			}
		})
	}
	q, err := jobs.New(db, jobs.Config{Registry: reg})
	if err != nil {
		t.Fatal(err)
	}
	if err := q.Start(context.Background()); err == nil {
		t.Fatal("Start of an enqueue-only Queue succeeded")
	}
	if _, err := q.Enqueue(context.Background(), flakyArgs{}, nil); err == nil {
		t.Fatal("Enqueue of an unregistered kind succeeded")
	}
}

func TestRegisterTwicePanics(t *testing.T) {
	reg := jobs.NewRegistry()
	jobs.Register(reg, func(ctx context.Context, job *jobs.Job[echoArgs]) error { return nil })
	defer func() {
		if recover() == nil {
			t.Fatal("no panic")
		}
	}()
	jobs.Register(reg, func(ctx context.Context, job *jobs.Job[echoArgs]) error { return nil })
}

func TestMigrateIdempotent(t *testing.T) {
	dialects(t, func(t *testing.T, sc store.Config) {
		db := openDB(t, sc) // migrated once
		if err := jobs.Migrate(context.Background(), db); err != nil {
			t.Fatal(err)
		}
	})
}

type periodicArgs struct{}

func (periodicArgs) Kind() string { return "test.periodic" }

// TestPeriodic: a Config.Periodic job with RunOnStart is enqueued when the
// queue starts, and runs.
func TestPeriodic(t *testing.T) {
	dialects(t, func(t *testing.T, sc store.Config) {
		db := openDB(t, sc)
		ran := make(chan struct{}, 1)
		reg := jobs.NewRegistry()
		jobs.Register(reg, func(ctx context.Context, _ *jobs.Job[periodicArgs]) error {
			select {
			case ran <- struct{}{}:
			default:
			}
			return nil
		})
		cfg := testConfig(t, reg, true)
		cfg.Periodic = []jobs.Periodic{{Every: time.Hour, Args: periodicArgs{}, RunOnStart: true}}
		startQueue(t, db, cfg)
		recv(t, ran, time.Minute, "the periodic job's run")
		cfg.Periodic = []jobs.Periodic{{Args: periodicArgs{}}}
		if _, err := jobs.New(db, cfg); err == nil {
			t.Fatal("a Periodic job without an interval was accepted")
		}
	})
}
