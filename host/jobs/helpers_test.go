package jobs_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"testing"
	"time"

	"github.com/agenthost/agenthost/host/jobs"
	"github.com/agenthost/agenthost/host/store"
	"github.com/agenthost/agenthost/host/testenv"
)

// dialects runs fn once per database, in parallel subtests named after the
// dialect, each on a fresh database.
func dialects(t *testing.T, fn func(t *testing.T, sc store.Config)) {
	t.Helper()
	for _, d := range []store.Dialect{store.SQLite, store.Postgres} {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			fn(t, freshStore(t, d))
		})
	}
}

// freshStore returns the configuration of a new, empty database.
func freshStore(tb testing.TB, d store.Dialect) store.Config {
	tb.Helper()
	if d == store.Postgres {
		return store.Config{URL: testenv.Postgres(tb)}
	}
	return store.Config{Dir: tb.TempDir()}
}

// openDB opens and migrates (agenthost's schema and River's) a database; it
// is closed when the test ends unless the test closes it first.
func openDB(tb testing.TB, sc store.Config) *store.DB {
	tb.Helper()
	ctx := context.Background()
	db, err := store.Open(ctx, sc)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { db.Close() })
	if err := db.Migrate(ctx); err != nil {
		tb.Fatal(err)
	}
	if err := jobs.Migrate(ctx, db); err != nil {
		tb.Fatal(err)
	}
	return db
}

// testConfig is the configuration tests run with: short backoff, a job
// timeout of 2 s and rescue after 3 s, heartbeats every 200 ms and a host
// lease of 1 s.
func testConfig(tb testing.TB, reg *jobs.Registry, work bool) jobs.Config {
	return jobs.Config{
		Registry:    reg,
		Work:        work,
		Queues:      map[string]int{jobs.DefaultQueue: 4},
		RetryBase:   50 * time.Millisecond,
		RetryCap:    200 * time.Millisecond,
		JobTimeout:  2 * time.Second,
		RescueAfter: 3 * time.Second,
		// A short lease, so that the crash test sees the heartbeat rescue
		// (River's own rescue after RescueAfter would come much later,
		// once a new leader is elected).
		HeartbeatInterval: 200 * time.Millisecond,
		HostLease:         time.Second,
		Logger:            testLogger(tb),
	}
}

// testLogger logs warnings and errors to the test's output (to stderr
// without a test, in the crash test's worker process).
func testLogger(tb testing.TB) *slog.Logger {
	var w io.Writer = os.Stderr
	if tb != nil {
		w = tb.Output()
	}
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelWarn}))
}

// startQueue builds a working Queue, starts it, and stops it when the test
// ends.
func startQueue(tb testing.TB, db *store.DB, cfg jobs.Config) *jobs.Queue {
	tb.Helper()
	q, err := jobs.New(db, cfg)
	if err != nil {
		tb.Fatal(err)
	}
	if err := q.Start(context.Background()); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := q.Stop(ctx); err != nil {
			tb.Error(err)
		}
	})
	return q
}

// waitFor polls Get until cond holds or the timeout passes.
func waitFor(tb testing.TB, q *jobs.Queue, id int64, timeout time.Duration, what string, cond func(*jobs.Info) bool) *jobs.Info {
	tb.Helper()
	deadline := time.Now().Add(timeout)
	for {
		info, err := q.Get(context.Background(), id)
		if err != nil {
			tb.Fatal(err)
		}
		if cond(info) {
			return info
		}
		if time.Now().After(deadline) {
			tb.Fatalf("job %d: not %s after %s: state %s, attempt %d, errors %v, progress %+v",
				id, what, timeout, info.State, info.Attempt, info.Errors, info.Progress)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func waitState(tb testing.TB, q *jobs.Queue, id int64, timeout time.Duration, want jobs.State) *jobs.Info {
	tb.Helper()
	return waitFor(tb, q, id, timeout, string(want), func(i *jobs.Info) bool { return i.State == want })
}

// recv waits for a value on ch.
func recv[T any](tb testing.TB, ch <-chan T, timeout time.Duration, what string) T {
	tb.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(timeout):
		tb.Fatalf("no %s after %s", what, timeout)
	}
	panic("unreachable")
}

var errBoom = errors.New("boom")
