package jobs_test

import (
	"context"
	"testing"
	"time"

	"github.com/agenthost/agenthost/host/jobs"
	"github.com/agenthost/agenthost/host/store"
)

func TestBackoff(t *testing.T) {
	tests := []struct {
		failures int
		want     time.Duration
	}{
		{1, time.Second},
		{2, 2 * time.Second},
		{3, 4 * time.Second},
		{10, 512 * time.Second},
		{11, 10 * time.Minute}, // capped
		{400, 10 * time.Minute},
	}
	for _, tc := range tests {
		for range 20 {
			got := jobs.RetryDelay(time.Second, 10*time.Minute, tc.failures)
			if got < tc.want*9/10-time.Millisecond || got > tc.want*11/10 {
				t.Fatalf("after %d failures: %s, want %s ±10%%", tc.failures, got, tc.want)
			}
		}
	}
}

func TestProgressSweep(t *testing.T) {
	dialects(t, func(t *testing.T, sc store.Config) {
		db := openDB(t, sc)
		ctx := context.Background()
		reg := jobs.NewRegistry()
		jobs.Register(reg, func(ctx context.Context, job *jobs.Job[progressArgs]) error {
			return jobs.Progress(ctx, 1, "done")
		})
		q := startQueue(t, db, testConfig(t, reg, true))
		res, err := q.Enqueue(ctx, progressArgs{}, nil)
		if err != nil {
			t.Fatal(err)
		}
		waitFor(t, q, res.ID, 5*time.Second, "reported", func(i *jobs.Info) bool { return i.Progress.Message == "done" })
		// A progress row whose job River's cleaner has removed.
		if _, err := db.SQL().ExecContext(ctx, rebind(db, `INSERT INTO job_progress (job_id, attempt, fraction, message, updated_at) VALUES (?, 1, 0.5, 'gone', 0)`), res.ID+1000); err != nil {
			t.Fatal(err)
		}
		n, err := q.SweepProgress(ctx)
		if err != nil || n != 1 {
			t.Fatalf("sweep removed %d rows (%v), want 1", n, err)
		}
		if info, err := q.Get(ctx, res.ID); err != nil || info.Progress.Message != "done" {
			t.Fatalf("live job's progress after sweep: %+v %v", info, err)
		}
	})
}

// rebind turns the single ? of a test query into $1 on PostgreSQL.
func rebind(db *store.DB, q string) string {
	if db.Dialect() == store.Postgres {
		for i, c := range q {
			if c == '?' {
				return q[:i] + "$1" + q[i+1:]
			}
		}
	}
	return q
}
