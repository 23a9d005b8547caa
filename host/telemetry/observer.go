package telemetry

import (
	"context"
	"errors"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/agenthost/agenthost/host/agent"
	"github.com/agenthost/agenthost/host/llm"
	"github.com/agenthost/agenthost/host/llm/modeluse"
	"github.com/agenthost/agenthost/host/wasm"
)

// Observer returns the agent.Observer that makes a span of every run,
// round, model call and tool call (parented as they nest) and updates the
// run, model and tool metrics.
func (t *Telemetry) Observer() agent.Observer { return observer{t} }

type observer struct{ t *Telemetry }

// workflowAttr is the workflow a span belongs to, from the round's
// attribution (every model call and tool call of a round runs under it),
// so that every span of a workflow can be found by its id.
func workflowAttr(ctx context.Context) trace.SpanStartOption {
	if id := llm.AttributionFrom(ctx).WorkflowID; id != "" {
		return trace.WithAttributes(attribute.String(WorkflowIDKey, id))
	}
	return trace.WithAttributes()
}

// continues links a run to the trace it continues (a round taken over from
// a host that stopped), given as a W3C traceparent.
func continues(traceparent string) trace.SpanStartOption {
	if traceparent == "" {
		return trace.WithLinks()
	}
	sc := trace.SpanContextFromContext(propagation.TraceContext{}.Extract(context.Background(),
		propagation.MapCarrier{"traceparent": traceparent}))
	if !sc.IsValid() {
		return trace.WithLinks()
	}
	return trace.WithLinks(trace.Link{SpanContext: sc, Attributes: []attribute.KeyValue{attribute.String("agenthost.link", "continues")}})
}

// WorkflowIDKey is the span attribute that names a span's workflow.
const WorkflowIDKey = "agenthost.workflow.id"

func (o observer) StartRun(ctx context.Context, in agent.Input) (context.Context, func(agent.Result)) {
	ctx, span := o.t.tracer.Start(ctx, "agent.run", trace.WithAttributes(attribute.Int("agenthost.round", in.Round)), workflowAttr(ctx),
		continues(in.Continues))
	return ctx, func(res agent.Result) {
		span.SetAttributes(attribute.String("agenthost.outcome", string(res.Outcome)), attribute.Int("agenthost.rounds", res.Rounds),
			attribute.Int("agenthost.tool_calls", res.ToolCalls), attribute.Float64("agenthost.cost_chf", res.Cost.CHF()))
		if res.Outcome == agent.Failed {
			span.SetStatus(codes.Error, errString(res.Err))
		}
		span.End()
		o.t.m.runs.WithLabelValues(string(res.Outcome)).Inc()
	}
}

func (o observer) StartRound(ctx context.Context, round int) (context.Context, func()) {
	ctx, span := o.t.tracer.Start(ctx, "agent.round", trace.WithAttributes(attribute.Int("agenthost.round", round)), workflowAttr(ctx))
	return ctx, func() {
		span.End()
		o.t.m.rounds.Inc()
	}
}

func (o observer) StartModelCall(ctx context.Context, op modeluse.Operation, model string) (context.Context, func(modeluse.Usage, []llm.Try, error)) {
	start := time.Now()
	ctx, span := o.t.tracer.Start(ctx, "model."+string(op), trace.WithSpanKind(trace.SpanKindClient),
		trace.WithAttributes(attribute.String("gen_ai.operation.name", "chat"), attribute.String("gen_ai.request.model", model)), workflowAttr(ctx))
	return ctx, func(u modeluse.Usage, tries []llm.Try, err error) {
		// Every HTTP attempt (retries, fallback models) is an event of the
		// call's span: which model it went to and how it failed.
		for i, tr := range tries {
			span.AddEvent("model.attempt", trace.WithAttributes(attribute.Int("agenthost.attempt", i+1),
				attribute.String("gen_ai.provider.name", tr.Provider), attribute.String("gen_ai.request.model", tr.Model),
				attribute.Int("http.response.status_code", tr.Status), attribute.String("error.type", string(tr.Kind)),
				attribute.String("agenthost.error", tr.Error), attribute.Int64("agenthost.duration_ms", tr.Duration.Milliseconds()),
				attribute.Int64("agenthost.wait_ms", tr.Wait.Milliseconds())))
		}
		if n := len(tries); n > 0 && u.Model == "" {
			u.Provider, u.Model = tries[n-1].Provider, tries[n-1].Model
		}
		span.SetAttributes(attribute.String("gen_ai.response.model", u.Model), attribute.String("gen_ai.provider.name", u.Provider),
			attribute.Int("gen_ai.usage.input_tokens", u.PromptTokens), attribute.Int("gen_ai.usage.output_tokens", u.CompletionTokens),
			attribute.String("agenthost.cost_chf", u.Cost.String()), attribute.Int("agenthost.attempts", u.Attempts))
		result := "ok"
		switch {
		case errors.Is(err, llm.ErrRefused):
			result = "refused"
		case err != nil:
			result = "error"
		}
		if err != nil {
			span.RecordError(err)
			span.SetStatus(codes.Error, err.Error())
		}
		span.End()
		o.t.m.modelCalls.WithLabelValues(string(op), result).Inc()
		o.t.m.modelSeconds.WithLabelValues(string(op)).Observe(time.Since(start).Seconds())
		o.t.m.modelCost.WithLabelValues(string(op)).Add(u.Cost.CHF())
	}
}

func (o observer) StartToolCall(ctx context.Context, tool string, readOnly bool) (context.Context, func(wasm.Result, int)) {
	start := time.Now()
	ctx, span := o.t.tracer.Start(ctx, "tool "+tool, trace.WithAttributes(attribute.String("gen_ai.tool.name", tool),
		attribute.Bool("agenthost.read_only", readOnly)), workflowAttr(ctx))
	return ctx, func(res wasm.Result, attempts int) {
		result := "ok"
		if res.Error != nil {
			result = res.Error.Code
			span.SetStatus(codes.Error, res.Error.Code+": "+res.Error.Message)
			if result == wasm.CodeUnknownTool {
				// A model may name any tool: its inventions must not
				// become label values.
				tool = "(unknown)"
			}
		}
		span.SetAttributes(attribute.Int("agenthost.attempts", attempts), attribute.String("agenthost.result", result))
		span.End()
		o.t.m.toolCalls.WithLabelValues(tool, result).Inc()
		o.t.m.toolSeconds.WithLabelValues(tool).Observe(time.Since(start).Seconds())
		if res.Error == nil || res.Error.Code != wasm.CodeUnknownTool {
			o.t.m.poolWait.WithLabelValues(tool).Observe(res.Stats.Wait.Seconds())
		}
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
