package agent

import (
	"context"

	"github.com/agenthost/agenthost/host/llm"
	"github.com/agenthost/agenthost/host/llm/modeluse"
	"github.com/agenthost/agenthost/host/wasm"
)

// Observer is told of a run's steps as they start, and returns the function
// to call when each ends: telemetry (trace spans, metrics) hangs here, so
// the loop knows nothing of exporters. Contexts it returns carry the step
// (a span) to what the step calls. A Config without one observes nothing.
type Observer interface {
	// StartRun opens a run; end receives its result.
	StartRun(ctx context.Context, in Input) (context.Context, func(Result))
	// StartRound opens a loop round (1, 2, …).
	StartRound(ctx context.Context, round int) (context.Context, func())
	// StartModelCall opens a model call of the loop (rounds, summaries);
	// end receives its usage (Model: the model that answered), every
	// HTTP attempt it made (retries, fallback models) and its error.
	StartModelCall(ctx context.Context, op modeluse.Operation, model string) (context.Context, func(modeluse.Usage, []llm.Try, error))
	// StartToolCall opens a tool call (all its attempts).
	StartToolCall(ctx context.Context, tool string, readOnly bool) (context.Context, func(res wasm.Result, attempts int))
}

// nopObserver observes nothing.
type nopObserver struct{}

func (nopObserver) StartRun(ctx context.Context, _ Input) (context.Context, func(Result)) {
	return ctx, func(Result) {}
}

func (nopObserver) StartRound(ctx context.Context, _ int) (context.Context, func()) {
	return ctx, func() {}
}

func (nopObserver) StartModelCall(ctx context.Context, _ modeluse.Operation, _ string) (context.Context, func(modeluse.Usage, []llm.Try, error)) {
	return ctx, func(modeluse.Usage, []llm.Try, error) {}
}

func (nopObserver) StartToolCall(ctx context.Context, _ string, _ bool) (context.Context, func(wasm.Result, int)) {
	return ctx, func(wasm.Result, int) {}
}
