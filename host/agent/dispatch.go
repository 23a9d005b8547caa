package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/agenthost/agenthost/host/llm"
	"github.com/agenthost/agenthost/host/wasm"
	"github.com/agenthost/agenthost/host/workflows"
)

// call is one tool call a model asked for.
type call struct {
	id, name, args string
}

// outcome is a tool call's result as the loop keeps it.
type outcome struct {
	res      wasm.Result
	attempts int
	// fit is the result as fitted to the model's context (fit.go).
	fit fitted
}

// forModel renders a result for the model: the text (or data) of a success,
// the code and message of a failure, so the model can correct itself.
func (o outcome) forModel() string {
	if o.fit.text != "" {
		return o.fit.text
	}
	return o.raw()
}

// raw is the result's text before fitting.
func (o outcome) raw() string {
	if o.res.OK {
		if o.res.Text != "" {
			return o.res.Text
		}
		if len(o.res.Data) > 0 {
			return string(o.res.Data)
		}
		return "(the tool returned nothing)"
	}
	if o.res.Error == nil {
		return "error: the tool failed without saying why"
	}
	return fmt.Sprintf("error (%s): %s", o.res.Error.Code, o.res.Error.Message)
}

// execute runs a round's tool calls: read-only tools concurrently (bounded),
// then writing tools one after another in the order the model gave, so no
// two calls race on the state a writing tool changes; results come back in
// call order.
func (r *run) execute(ctx context.Context, round int, calls []call) []outcome {
	out := make([]outcome, len(calls))
	readOnly := make([]bool, len(calls))
	for i, c := range calls {
		t, ok := r.tools.Lookup(c.name)
		readOnly[i] = ok && t.ReadOnly
		r.emit(ctx, workflows.EventToolCall, workflows.ToolCallData{Round: round, CallID: c.id, Tool: c.name, Arguments: jsonOrString(c.args),
			CostCHF: r.res.Cost.String()})
	}
	// What each result may take of the model's context is decided once
	// for the round, before any runs: the results share the room.
	limit := r.resultRoom(len(calls))
	sem := make(chan struct{}, r.cfg.ToolParallelism)
	var wg sync.WaitGroup
	for i, c := range calls {
		if !readOnly[i] {
			continue
		}
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			out[i] = r.callTool(ctx, round, c, true, limit)
		}()
	}
	wg.Wait()
	for i, c := range calls {
		if !readOnly[i] {
			out[i] = r.callTool(ctx, round, c, false, limit)
		}
	}
	r.res.ToolCalls += len(calls)
	for i, c := range calls {
		state := "ok"
		if !out[i].res.OK && out[i].res.Error != nil {
			state = out[i].res.Error.Code
		}
		r.log = append(r.log, fmt.Sprintf("round %d: %s → %s", round, c.name, state))
	}
	return out
}

// refusedCall is the error of a round whose tool call the tenant's
// spending limits refused: the run ends as after a refused model call, for
// the next round's model call would be refused too, and the tools' retries
// would only repeat the refusal.
func refusedCall(calls []call, outs []outcome) error {
	for i, o := range outs {
		if !o.res.OK && o.res.Error != nil && o.res.Error.Code == wasm.CodeSpendingLimit {
			return fmt.Errorf("agent: tool %s: %w: %s", calls[i].name, llm.ErrRefused, o.res.Error.Message)
		}
	}
	return nil
}

// transient reports failures worth another attempt. A writing tool is tried
// again only when it cannot have run (plugin unavailable), so a time-out
// never makes it write twice.
func transient(res wasm.Result, readOnly bool) bool {
	if res.OK || res.Error == nil {
		return false
	}
	switch res.Error.Code {
	case wasm.CodeUnavailable:
		return true
	case wasm.CodeTimeout, wasm.CodeHTTPFailed, wasm.CodeNotReachable:
		// An MCP server may go away while the call runs, so it may have run.
		return readOnly
	}
	return false
}

// callTool runs one call with retries, fits its result to the model's
// context (every tool's result passes here: plugins, MCP tools, connector
// downloads, model-backed tools) and reports it.
func (r *run) callTool(ctx context.Context, round int, c call, readOnly bool, limit *room) outcome {
	runArgs, refused := r.preflight(ctx, c)
	args := []byte(runArgs)
	if len(args) == 0 {
		args = []byte("{}")
	}
	start := time.Now()
	var o outcome
	delay := r.cfg.RetryBase
	tctx, endTool := r.cfg.Observer.StartToolCall(ctx, c.name, readOnly)
	defer func() { endTool(o.res, o.attempts) }()
	for o.attempts = 1; ; o.attempts++ {
		if refused != nil {
			o.res = *refused // the policy or a person said no: nothing runs
			break
		}
		o.res = r.tools.Call(tctx, c.name, args, nil)
		if !transient(o.res, readOnly) || o.attempts >= r.cfg.ToolAttempts || ctx.Err() != nil {
			break
		}
		select {
		case <-time.After(delay):
		case <-ctx.Done():
		}
		delay *= 2
	}
	o.fit = r.fit(tctx, c, o.raw(), limit)
	ev := workflows.ToolResultData{Round: round, CallID: c.id, Tool: c.name, OK: o.res.OK, Content: preview(o.forModel()),
		Attempts: o.attempts, DurationMS: time.Since(start).Milliseconds(), Bytes: int64(o.fit.bytes)}
	if o.fit.over {
		ev.Fitted = true
		ev.Document, ev.FileID = o.fit.kept.Ref, o.fit.kept.FileID
	}
	if o.res.Error != nil {
		ev.ErrorCode, ev.Error = o.res.Error.Code, o.res.Error.Message
	}
	r.emit(ctx, workflows.EventToolResult, ev)
	return o
}

// jsonOrString keeps a model's arguments as JSON when they are JSON, and as
// a JSON string when they are not (a model may send broken arguments; the
// event still records them).
func jsonOrString(args string) json.RawMessage {
	if json.Valid([]byte(args)) {
		return json.RawMessage(args)
	}
	b, _ := json.Marshal(args)
	return b
}
