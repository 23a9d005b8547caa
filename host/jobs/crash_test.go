package jobs_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agenthost/agenthost/host/jobs"
	"github.com/agenthost/agenthost/host/store"
)

// The crash test re-executes the test binary as a worker process; these
// variables tell TestMain to run crashChild instead of the tests.
const (
	envCrashChild = "AGENTHOST_JOBS_TEST_CRASH_CHILD"
	envCrashURL   = "AGENTHOST_JOBS_TEST_DATABASE_URL"
	envCrashDir   = "AGENTHOST_JOBS_TEST_DATA"
)

type crashArgs struct{}

func (crashArgs) Kind() string { return "test.crash" }

// crashRegistry is the worker of crash jobs. It reports progress, holds for
// hold (the child process is killed while it does), and records its
// completion in crash_completions: a table without a unique constraint, so a
// job completed twice would show as two rows.
func crashRegistry(db *store.DB, hold time.Duration) *jobs.Registry {
	reg := jobs.NewRegistry()
	jobs.Register(reg, func(ctx context.Context, job *jobs.Job[crashArgs]) error {
		if err := jobs.Progress(ctx, 0.5, fmt.Sprintf("working, pid %d", os.Getpid())); err != nil {
			return err
		}
		select {
		case <-time.After(hold):
		case <-ctx.Done():
			return ctx.Err()
		}
		q := `INSERT INTO crash_completions (job_id, attempt, pid) VALUES (?, ?, ?)`
		if db.Dialect() == store.Postgres {
			q = `INSERT INTO crash_completions (job_id, attempt, pid) VALUES ($1, $2, $3)`
		}
		_, err := db.SQL().ExecContext(ctx, q, job.ID, job.Attempt, os.Getpid())
		return err
	})
	return reg
}

// crashChild is the worker process of TestWorkerKilledMidJob: it works crash
// jobs, holding each for a minute, until it is killed.
func crashChild() error {
	ctx := context.Background()
	db, err := store.Open(ctx, store.Config{URL: os.Getenv(envCrashURL), Dir: os.Getenv(envCrashDir)})
	if err != nil {
		return err
	}
	defer db.Close()
	cfg := testConfig(nil, crashRegistry(db, time.Minute), true)
	cfg.JobTimeout = -1 // only the kill ends this attempt
	q, err := jobs.New(db, cfg)
	if err != nil {
		return err
	}
	if err := q.Start(ctx); err != nil {
		return err
	}
	select {} // until SIGKILL
}

// TestWorkerKilledMidJob: a worker in another process is killed with SIGKILL
// while it works a job; a new worker rescues the job, retries it and
// completes it exactly once.
func TestWorkerKilledMidJob(t *testing.T) {
	dialects(t, func(t *testing.T, sc store.Config) {
		ctx := context.Background()
		db := openDB(t, sc)
		if _, err := db.SQL().ExecContext(ctx,
			`CREATE TABLE crash_completions (job_id BIGINT NOT NULL, attempt INTEGER NOT NULL, pid INTEGER NOT NULL)`); err != nil {
			t.Fatal(err)
		}
		// The test process enqueues only until the child is dead, so the
		// child is the one that takes the job (and the leader).
		q, err := jobs.New(db, testConfig(t, crashRegistry(db, 0), false))
		if err != nil {
			t.Fatal(err)
		}
		res, err := q.Enqueue(ctx, crashArgs{}, nil)
		if err != nil {
			t.Fatal(err)
		}

		child := exec.Command(os.Args[0], "-test.run=^$")
		child.Env = append(os.Environ(), envCrashChild+"=1", envCrashURL+"="+sc.URL, envCrashDir+"="+sc.Dir)
		child.Stdout, child.Stderr = t.Output(), t.Output()
		if err := child.Start(); err != nil {
			t.Fatal(err)
		}
		exited := make(chan error, 1)
		go func() { exited <- child.Wait() }()
		t.Cleanup(func() { child.Process.Kill() })

		pid := child.Process.Pid
		waitFor(t, q, res.ID, 20*time.Second, "running in the child", func(i *jobs.Info) bool {
			select {
			case err := <-exited:
				t.Fatalf("worker process exited early: %v", err)
			default:
			}
			return i.State == jobs.StateRunning && i.Progress.Message == fmt.Sprintf("working, pid %d", pid)
		})
		if err := child.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		err = recv(t, exited, 5*time.Second, "child exit")
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
			t.Fatalf("child ended with %v, want killed by SIGKILL", err)
		}
		killed := time.Now()
		if info, err := q.Get(ctx, res.ID); err != nil || info.State != jobs.StateRunning || info.Attempt != 1 {
			t.Fatalf("after the kill: %+v %v", info, err)
		}

		// A new worker. The dead process stopped beating: the new one hands
		// its job back once the lease (1 s) has run out, without waiting
		// for a new River leader (up to ~15 s) and River's rescue.
		w := startQueue(t, db, testConfig(t, crashRegistry(db, 0), true))
		info := waitState(t, w, res.ID, 45*time.Second, jobs.StateCompleted)
		t.Logf("completed %s after the kill", time.Since(killed).Round(time.Millisecond))
		if info.Attempt != 2 || len(info.Errors) != 1 || info.Progress.Attempt != 2 {
			t.Errorf("completed job: attempt %d, errors %+v, progress %+v", info.Attempt, info.Errors, info.Progress)
		}
		if len(info.Errors) > 0 && !strings.HasPrefix(info.Errors[0].Error, jobs.RescueMessage) {
			t.Errorf("attempt 1's error %q, want the heartbeat rescue (%q)", info.Errors[0].Error, jobs.RescueMessage)
		}

		q1 := `SELECT COUNT(*), MIN(attempt), MIN(pid) FROM crash_completions WHERE job_id = ?`
		if db.Dialect() == store.Postgres {
			q1 = `SELECT COUNT(*), MIN(attempt), MIN(pid) FROM crash_completions WHERE job_id = $1`
		}
		var n, attempt, byPid int
		// Give a second completion, if there were one, time to show.
		time.Sleep(500 * time.Millisecond)
		if err := db.SQL().QueryRowContext(ctx, q1, res.ID).Scan(&n, &attempt, &byPid); err != nil {
			t.Fatal(err)
		}
		if n != 1 || attempt != 2 || byPid != os.Getpid() {
			t.Fatalf("completions: %d (attempt %d, pid %d), want 1 by attempt 2 in this process", n, attempt, byPid)
		}
	})
}
