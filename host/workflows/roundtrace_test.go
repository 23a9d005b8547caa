package workflows_test

import (
	"context"
	"testing"

	"go.opentelemetry.io/otel/trace"

	"github.com/agenthost/agenthost/host/workflows"
)

// traced is a context whose span is in the trace of the given id.
func traced(traceID string) context.Context {
	tid, _ := trace.TraceIDFromHex(traceID)
	sid, _ := trace.SpanIDFromHex("00f067aa0ba902b7")
	return trace.ContextWithSpanContext(context.Background(),
		trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: sid, TraceFlags: trace.FlagsSampled}))
}

// TestRoundTrace: the trace of the request that starts a round (a start or
// a resume) is kept with the running round, so that a host taking it over
// can link to it; an untraced start keeps none.
func TestRoundTrace(t *testing.T) {
	dialects(t, func(t *testing.T, c *cluster) {
		const first, second = "4bf92f3577b34da6a3ce929d0e0e4736", "0af7651916cd43dd8448eb211c80319c"
		round := func(id string) string {
			t.Helper()
			if err := c.a.db.SetRoundHost(context.Background(), id, "host-a"); err != nil {
				t.Fatal(err)
			}
			rounds, err := c.a.db.HostedRounds(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range rounds {
				if r.Workflow.ID == id {
					return r.Workflow.RoundTrace
				}
			}
			t.Fatalf("workflow %s is not a hosted round", id)
			return ""
		}
		wf, err := c.a.svc.Start(traced(first), c.alice, workflows.NewWorkflow{WorkspaceID: c.workspaceID})
		if err != nil {
			t.Fatal(err)
		}
		if got, want := round(wf.ID), "00-"+first+"-00f067aa0ba902b7-01"; got != want {
			t.Fatalf("started round's trace %q, want %q", got, want)
		}
		if _, err := c.a.svc.Complete(context.Background(), c.alice, wf.ID, "completed"); err != nil {
			t.Fatal(err)
		}
		if _, err := c.a.svc.Resume(traced(second), c.alice, wf.ID); err != nil {
			t.Fatal(err)
		}
		if got, want := round(wf.ID), "00-"+second+"-00f067aa0ba902b7-01"; got != want {
			t.Fatalf("resumed round's trace %q, want %q", got, want)
		}
		plain := c.start(t)
		if got := round(plain.ID); got != "" {
			t.Fatalf("untraced round's trace %q", got)
		}
	})
}
