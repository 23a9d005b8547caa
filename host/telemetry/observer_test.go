package telemetry_test

import (
	"context"
	"testing"

	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/agenthost/agenthost/host/agent"
	"github.com/agenthost/agenthost/host/llm"
	"github.com/agenthost/agenthost/host/telemetry"
)

// TestRunSpans: a run's span carries its workflow's id and the process's
// instance and version; a run that continues another host's round links to
// that round's trace, and a malformed traceparent links to nothing.
func TestRunSpans(t *testing.T) {
	const parent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	for _, c := range []struct {
		name, continues, wantTrace string
	}{
		{"fresh", "", ""},
		{"taken over", parent, "4bf92f3577b34da6a3ce929d0e0e4736"},
		{"malformed", "00-nonsense", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			exp := tracetest.NewInMemoryExporter()
			tel, err := telemetry.New(context.Background(), telemetry.Config{Exporter: exp, InstanceID: "host-1", Version: "v9"})
			if err != nil {
				t.Fatal(err)
			}
			ctx := llm.WithAttribution(context.Background(), llm.Attribution{WorkflowID: "wf-1"})
			_, end := tel.Observer().StartRun(ctx, agent.Input{Round: 2, Continues: c.continues})
			end(agent.Result{Outcome: agent.Completed})
			// Flushed, not shut down: the in-memory exporter forgets its
			// spans when it is shut down.
			if err := tel.TracerProvider().(interface{ ForceFlush(context.Context) error }).ForceFlush(context.Background()); err != nil {
				t.Fatal(err)
			}
			spans := exp.GetSpans()
			if len(spans) != 1 {
				t.Fatalf("%d spans", len(spans))
			}
			s := spans[0]
			attrs := map[string]string{}
			for _, kv := range s.Attributes {
				attrs[string(kv.Key)] = kv.Value.AsString()
			}
			res := map[string]string{}
			for _, kv := range s.Resource.Attributes() {
				res[string(kv.Key)] = kv.Value.AsString()
			}
			if attrs[telemetry.WorkflowIDKey] != "wf-1" || res["service.instance.id"] != "host-1" || res["service.version"] != "v9" {
				t.Errorf("attributes %v, resource %v", attrs, res)
			}
			switch {
			case c.wantTrace == "" && len(s.Links) != 0:
				t.Errorf("links %v, want none", s.Links)
			case c.wantTrace != "" && (len(s.Links) != 1 || s.Links[0].SpanContext.TraceID().String() != c.wantTrace):
				t.Errorf("links %v, want one to trace %s", s.Links, c.wantTrace)
			}
		})
	}
}
