package jobs_test

import (
	"context"
	"strings"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/agenthost/agenthost/host/jobs"
	"github.com/agenthost/agenthost/host/store"
)

// TestJobSpans: with a tracer provider, enqueueing a job and working it
// are spans, the work's named by the job's kind.
func TestJobSpans(t *testing.T) {
	dialects(t, func(t *testing.T, sc store.Config) {
		db := openDB(t, sc)
		exp := tracetest.NewInMemoryExporter()
		tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
		got := make(chan *jobs.Job[echoArgs], 1)
		reg := jobs.NewRegistry()
		jobs.Register(reg, func(ctx context.Context, job *jobs.Job[echoArgs]) error {
			got <- job
			return nil
		})
		cfg := testConfig(t, reg, true)
		cfg.TracerProvider = tp
		q := startQueue(t, db, cfg)
		if _, err := q.Enqueue(context.Background(), echoArgs{Name: "traced"}, nil); err != nil {
			t.Fatal(err)
		}
		recv(t, got, 10*time.Second, "job")
		var names []string
		deadline := time.Now().Add(10 * time.Second) // the work span ends just after the worker returns
		for time.Now().Before(deadline) {
			names = names[:0]
			for _, s := range exp.GetSpans() {
				names = append(names, s.Name)
			}
			joined := strings.Join(names, ",")
			if strings.Contains(joined, "insert") && strings.Contains(joined, "work") {
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
		t.Fatalf("spans %v: want an insert and a work span", names)
	})
}
