package jobs_test

import (
	"context"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/agenthost/agenthost/host/figure"
	"github.com/agenthost/agenthost/host/jobs"
	"github.com/agenthost/agenthost/host/store"
)

type startArgs struct{}

func (startArgs) Kind() string { return "bench.start" }

// BenchmarkJobStart measures enqueue-to-start latency: from just before
// Enqueue to the first line of the worker, in one process that enqueues and
// works with the server's settings (Config defaults: River's notifications,
// fetch cooldown 20 ms, fallback poll 1 s on PostgreSQL and 500 ms on
// SQLite). Jobs arrive one at a time at random gaps of 100-150 ms, so each
// finds an idle queue (as indexing jobs usually do) and the gaps do not beat
// in step with SQLite's 50 ms outbox poll. It reports the median of 200.
func BenchmarkJobStart(b *testing.B) {
	const jobsN = 200
	for _, d := range []store.Dialect{store.SQLite, store.Postgres} {
		b.Run(string(d), func(b *testing.B) {
			db := openDB(b, freshStore(b, d))
			started := make(chan time.Time, 1)
			reg := jobs.NewRegistry()
			jobs.Register(reg, func(ctx context.Context, job *jobs.Job[startArgs]) error {
				started <- time.Now()
				return nil
			})
			q := startQueue(b, db, jobs.Config{Registry: reg, Work: true, Logger: testLogger(b)})
			ctx := context.Background()
			// Let River elect its leader and settle before measuring.
			time.Sleep(time.Second)
			for b.Loop() {
				lat := make([]time.Duration, 0, jobsN)
				for range jobsN {
					time.Sleep(100*time.Millisecond + rand.N(50*time.Millisecond))
					t0 := time.Now()
					if _, err := q.Enqueue(ctx, startArgs{}, nil); err != nil {
						b.Fatal(err)
					}
					lat = append(lat, recv(b, started, 10*time.Second, "job start").Sub(t0))
				}
				p50 := figure.Percentile(lat, 50)
				b.ReportMetric(figure.Millis(p50), "ms/p50")
				b.Logf("%s: p50 %s, p90 %s, max %s", d, p50, figure.Percentile(lat, 90), figure.Percentile(lat, 100))
				figure.Report("store."+string(d)+".job.start.p50", figure.Millis(p50), "ms")
			}
		})
	}
}
