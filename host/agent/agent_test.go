package agent_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agenthost/agenthost/host/agent"
	"github.com/agenthost/agenthost/host/llm"
	"github.com/agenthost/agenthost/host/llm/llmtest"
	"github.com/agenthost/agenthost/host/llm/modeluse"
	"github.com/agenthost/agenthost/host/money"
	"github.com/agenthost/agenthost/host/tools"
	"github.com/agenthost/agenthost/host/wasm"
	"github.com/agenthost/agenthost/host/wasm/wasmtest"
	"github.com/agenthost/agenthost/host/workflows"
)

// env is a scripted model server, a model client on it and a tool set of
// real plugins (notebook: lookup read-only and slow, writeNote writing).
type env struct {
	srv   *llmtest.Server
	model *llm.Client
	tools *tools.Set
}

// sharedPlugins is the test plugins' host, built once for every test here.
var sharedPlugins = wasmtest.NewShared("notebook", "echo")

func newEnv(t *testing.T, model llm.ModelConfig, opts ...llmtest.Option) env {
	t.Helper()
	srv := llmtest.New(t, opts...)
	if model.Model == "" {
		model.Model = "scripted"
	}
	model.Provider = "test"
	summary := llm.ModelConfig{Provider: "test", Model: "summarizer", InputCHFPer1M: model.InputCHFPer1M, OutputCHFPer1M: model.OutputCHFPer1M}
	c, err := llm.New(llm.Config{
		Providers: []llm.ProviderConfig{{Name: "test", BaseURL: srv.URL(), Timeout: 10 * time.Second}},
		Models:    map[modeluse.Operation][]llm.ModelConfig{modeluse.OpAgent: {model}, modeluse.OpSummary: {summary}},
		Retry:     llm.RetryConfig{Attempts: 1},
	}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	set, missing, err := tools.NewRegistry(sharedPlugins.Host(t), map[string][]string{"test": {"lookup", "writeNote", "echo"}}).Set("test")
	if err != nil || len(missing) > 0 {
		t.Fatalf("tool set: %v (missing %s)", err, strings.Join(missing, ","))
	}
	return env{srv: srv, model: c, tools: set}
}

// recorder keeps a run's events.
type recorder struct {
	mu     sync.Mutex
	events []agent.Event
}

func (r *recorder) sink(_ context.Context, e agent.Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, e)
}

func (r *recorder) types() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, e := range r.events {
		if e.Type != workflows.EventChunk || len(out) == 0 || out[len(out)-1] != string(workflows.EventChunk) {
			out = append(out, string(e.Type))
		}
	}
	return out
}

func (r *recorder) results() []workflows.ToolResultData {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []workflows.ToolResultData
	for _, e := range r.events {
		if tr, ok := e.Data.(workflows.ToolResultData); ok {
			out = append(out, tr)
		}
	}
	return out
}

func lookupArgs(topic string, ms int) string {
	b, _ := json.Marshal(map[string]any{"topic": topic, "sleepMs": ms})
	return string(b)
}

// TestNativeThreeRounds: round 1 calls two read-only tools (which overlap in
// time), round 2 a writing tool, a hallucinated tool and one with invalid
// arguments (both errors go back to the model), round 3 answers.
func TestNativeThreeRounds(t *testing.T) {
	e := newEnv(t, llm.ModelConfig{})
	e.srv.Script(
		llmtest.CallTools(llmtest.Call("lookup", lookupArgs("alpha", 400)), llmtest.Call("lookup", lookupArgs("beta", 400))),
		llmtest.CallTools(llmtest.Call("writeNote", `{"text":"alpha and beta"}`), llmtest.Call("deleteEverything", `{}`), llmtest.Call("lookup", `{"topic":5}`)),
		llmtest.Reply("Alpha and beta are noted."),
	)
	rec := &recorder{}
	res := agent.New(e.model, agent.Config{}, nil).Run(context.Background(), agent.Input{Prompt: "note alpha and beta", Round: 1}, e.tools, rec.sink)
	if res.Outcome != agent.Completed || res.Answer != "Alpha and beta are noted." || res.Rounds != 3 || res.ToolCalls != 5 {
		t.Fatalf("result: %+v", res)
	}
	want := []string{"toolCall", "toolCall", "toolResult", "toolResult", "agentProgress",
		"toolCall", "toolCall", "toolCall", "toolResult", "toolResult", "toolResult", "agentProgress",
		"chunk", "agentProgress", "agentSummary"}
	if got := rec.types(); !slices.Equal(got, want) {
		t.Fatalf("events:\n got %v\nwant %v", got, want)
	}
	rs := rec.results()
	var a, b struct{ StartUs, EndUs int64 }
	json.Unmarshal([]byte(rs[0].Content), &a)
	json.Unmarshal([]byte(rs[1].Content), &b)
	if a.StartUs == 0 || b.StartUs == 0 || !(a.StartUs < b.EndUs && b.StartUs < a.EndUs) {
		t.Errorf("read-only lookups did not overlap: %+v %+v", a, b)
	}
	byTool := map[string]workflows.ToolResultData{}
	for _, r := range rs[2:] {
		byTool[r.Tool] = r
	}
	if r := byTool["writeNote"]; !r.OK || !strings.Contains(r.Content, "saved note") {
		t.Errorf("writeNote: %+v", r)
	}
	if r := byTool["deleteEverything"]; r.OK || r.ErrorCode != "unknown_tool" || !strings.Contains(r.Error, "lookup") {
		t.Errorf("hallucinated tool: %+v", r)
	}
	if r := byTool["lookup"]; r.OK || r.ErrorCode != "invalid_arguments" {
		t.Errorf("invalid arguments: %+v", r)
	}
	// The model saw every result, in call order, as tool messages.
	reqs := e.srv.ChatRequests()
	if len(reqs) != 3 {
		t.Fatalf("%d model calls", len(reqs))
	}
	var toolMsgs []string
	for _, m := range reqs[2].Messages {
		if m.Role == "tool" {
			toolMsgs = append(toolMsgs, m.Name+": "+m.Content)
		}
	}
	if len(toolMsgs) != 5 || !strings.HasPrefix(toolMsgs[2], "writeNote: saved note") ||
		!strings.Contains(toolMsgs[3], "error (unknown_tool)") || !strings.Contains(toolMsgs[4], "error (invalid_arguments)") {
		t.Fatalf("tool messages: %q", toolMsgs)
	}
	if len(reqs[0].Tools) != 3 || !reqs[0].Stream {
		t.Errorf("first request: %d tools, stream %v", len(reqs[0].Tools), reqs[0].Stream)
	}
}

// TestTextProtocol runs the same kind of work with a model that has no
// function calling: selection, parameters, observation as JSON text.
func TestTextProtocol(t *testing.T) {
	e := newEnv(t, llm.ModelConfig{Model: "plain", NoFunctionCalling: true}, llmtest.WithNoFunctionCalling("plain"))
	e.srv.Script(
		llmtest.Reply(`I will look it up. {"decision":"continue","action":{"name":"lookup"},"reason":"need the fact"}`),
		llmtest.Reply("```json\n{\"parameters\":{\"topic\":\"gamma\"}}\n```"),
		llmtest.Reply(`{"decision":"continue","action":{"name":"shredFiles"}}`),
		llmtest.Reply(`{"decision":"continue","action":{"name":"writeNote","parameters":{"text":"gamma"}}}`),
		llmtest.Reply(`{"decision":"continue","action":{"name":"lookup","parameters":{"topic":7}}}`),
		llmtest.Reply(`{"decision":"stop","answer":"Gamma is noted."}`),
	)
	rec := &recorder{}
	res := agent.New(e.model, agent.Config{}, nil).Run(context.Background(), agent.Input{Prompt: "note gamma"}, e.tools, rec.sink)
	if res.Outcome != agent.Completed || res.Answer != "Gamma is noted." {
		t.Fatalf("result: %+v", res)
	}
	rs := rec.results()
	if len(rs) != 3 || !rs[0].OK || !strings.Contains(rs[0].Content, "the fact about gamma") || !rs[1].OK || rs[2].ErrorCode != "invalid_arguments" {
		t.Fatalf("results: %+v", rs)
	}
	reqs := e.srv.ChatRequests()
	if len(reqs) != 6 {
		t.Fatalf("%d model calls, want 6", len(reqs))
	}
	for _, r := range reqs {
		if len(r.Tools) > 0 {
			t.Fatal("tools sent to a model without function calling")
		}
	}
	last := reqs[5].Messages
	joined := ""
	for _, m := range last {
		joined += m.Content + "\n"
	}
	for _, want := range []string{`There is no tool named "shredFiles"`, `"success":true`, `"resultLabel":"round1_action1_results"`, "invalid_arguments", "writeNote (writes)"} {
		if !strings.Contains(joined, want) {
			t.Errorf("the model never saw %q", want)
		}
	}
}

// alwaysLookup calls lookup whenever tools are offered, and otherwise
// summarises; each reply reports promptTokens (0: the server's estimate).
func alwaysLookup(promptTokens int) llmtest.Step {
	usage := func(s llmtest.Step) llmtest.Step {
		if promptTokens > 0 {
			return s.WithUsage(promptTokens, 0)
		}
		return s
	}
	return llmtest.Decide(func(r llmtest.ChatRequest) llmtest.Step {
		if len(r.Tools) == 0 {
			return usage(llmtest.Reply("So far: looked up delta several times."))
		}
		return usage(llmtest.CallTools(llmtest.Call("lookup", lookupArgs("delta", 0))))
	})
}

func TestMaxRoundsEndsWithSummary(t *testing.T) {
	e := newEnv(t, llm.ModelConfig{}, llmtest.WithDefault(alwaysLookup(0)))
	res := agent.New(e.model, agent.Config{MaxRounds: 3, KeepRounds: 5}, nil).Run(context.Background(), agent.Input{Prompt: "loop"}, e.tools, nil)
	if res.Outcome != agent.MaxRounds || res.Rounds != 3 || !strings.Contains(res.Answer, "round limit (3)") || !strings.Contains(res.Answer, "looked up delta") {
		t.Fatalf("result: %+v", res)
	}
	if n := len(e.srv.ChatRequests()); n != 4 {
		t.Fatalf("%d model calls, want 3 rounds + 1 summary", n)
	}
}

func TestBudgetEndsWithSummary(t *testing.T) {
	// Each call: ~1,000 prompt tokens at CHF 200 per 1M = CHF 0.2.
	e := newEnv(t, llm.ModelConfig{InputCHFPer1M: 200, OutputCHFPer1M: 200}, llmtest.WithDefault(alwaysLookup(1000)))
	res := agent.New(e.model, agent.Config{MaxCost: money.FromCHF(0.5)}, nil).Run(context.Background(), agent.Input{Prompt: "spend", Spent: money.FromCHF(0.1)}, e.tools, nil)
	if res.Outcome != agent.BudgetExceeded || !strings.Contains(res.Answer, "budget of CHF 0.50") || !strings.Contains(res.Answer, "lookup") {
		t.Fatalf("result: %+v", res)
	}
	if n := len(e.srv.ChatRequests()); n != 2 {
		t.Fatalf("%d model calls, want 2 (0.1 spent before, 0.2 each, budget 0.5)", n)
	}
}

func TestStopMidRun(t *testing.T) {
	e := newEnv(t, llm.ModelConfig{})
	e.srv.Script(llmtest.CallTools(llmtest.Call("lookup", lookupArgs("epsilon", 120_000))))
	ctx, cancel := context.WithCancel(context.Background())
	rec := &recorder{}
	done := make(chan agent.Result)
	go func() {
		done <- agent.New(e.model, agent.Config{}, nil).Run(ctx, agent.Input{Prompt: "slow"}, e.tools, rec.sink)
	}()
	for !slices.Contains(rec.types(), string(workflows.EventToolCall)) {
		time.Sleep(10 * time.Millisecond)
	}
	started := time.Now()
	cancel()
	select {
	case res := <-done:
		if res.Outcome != agent.Stopped || !strings.Contains(res.Answer, "Stopped") {
			t.Fatalf("result: %+v", res)
		}
		// The tool sleeps for two minutes unless the stop cuts it short; a
		// bound well under that holds however busy the machine is.
		if took := time.Since(started); took > time.Minute {
			t.Fatalf("stopping took %v", took)
		}
	case <-time.After(90 * time.Second):
		t.Fatal("run did not stop")
	}
}

// TestModelFailure: a provider that answers HTTP 500 was reached: the answer
// says it answered with an error, not that it could not be reached.
func TestModelFailure(t *testing.T) {
	e := newEnv(t, llm.ModelConfig{}, llmtest.WithDefault(llmtest.Fail(500, "upstream broke")))
	res := agent.New(e.model, agent.Config{}, nil).Run(context.Background(), agent.Input{Prompt: "x"}, e.tools, nil)
	if res.Outcome != agent.Failed || res.Err == nil || !strings.Contains(res.Answer, "answered with an error") {
		t.Fatalf("result: %+v", res)
	}
}

// TestProgressiveSummary: with KeepRounds 1, older rounds are folded into a
// running summary by the summary model, and later requests carry it.
func TestProgressiveSummary(t *testing.T) {
	var mu sync.Mutex
	rounds := 0
	e := newEnv(t, llm.ModelConfig{}, llmtest.WithDefault(llmtest.Decide(func(r llmtest.ChatRequest) llmtest.Step {
		if r.Model == "summarizer" {
			return llmtest.Reply("Looked up zeta twice; the fact is known.")
		}
		mu.Lock()
		defer mu.Unlock()
		rounds++
		if rounds <= 4 {
			return llmtest.CallTools(llmtest.Call("lookup", lookupArgs("zeta", 0)))
		}
		return llmtest.Reply("done")
	})))
	res := agent.New(e.model, agent.Config{KeepRounds: 1}, nil).Run(context.Background(), agent.Input{Prompt: "zeta"}, e.tools, nil)
	if res.Outcome != agent.Completed || res.Summary == "" {
		t.Fatalf("result: %+v", res)
	}
	var summaries int
	var last llmtest.ChatRequest
	for _, r := range e.srv.ChatRequests() {
		if r.Model == "summarizer" {
			summaries++
		} else {
			last = r
		}
	}
	if summaries == 0 || summaries > 3 {
		t.Fatalf("%d summary calls", summaries)
	}
	if !strings.Contains(last.Messages[1].Content, "Looked up zeta twice") {
		t.Fatalf("last request does not carry the summary: %+v", last.Messages[1])
	}
	tool := 0
	for _, m := range last.Messages {
		if m.Role == "tool" {
			tool++
		}
	}
	if tool > 2 {
		t.Fatalf("%d verbatim tool results after summarising, want at most the kept round's", tool)
	}
}

// refusingTools is a tool set whose every call the tenant's spending limits
// refuse before it runs, as the billing meter's runner does.
type refusingTools struct{ *tools.Set }

func (refusingTools) Call(context.Context, string, []byte, *wasm.CallOptions) wasm.Result {
	return wasm.Result{Error: &wasm.Error{Code: wasm.CodeSpendingLimit,
		Message: "billing: the tenant is over its spending limit: credit exhausted (CHF 2.00 spent of CHF 2.00 credit)"}}
}

// A tool call refused by the tenant's limits ends the run budgetExceeded,
// with the reason, after the round that asked for it: no further model
// call, no retry of the tool.
func TestRefusedToolEndsRun(t *testing.T) {
	for _, c := range []struct {
		name   string
		model  llm.ModelConfig
		opts   []llmtest.Option
		script []llmtest.Step
	}{
		{"function calling", llm.ModelConfig{}, []llmtest.Option{llmtest.WithDefault(alwaysLookup(0))}, nil},
		{"text protocol", llm.ModelConfig{Model: "plain", NoFunctionCalling: true}, []llmtest.Option{llmtest.WithNoFunctionCalling("plain")},
			[]llmtest.Step{llmtest.Reply(`{"decision":"continue","action":{"name":"lookup","parameters":{"topic":"delta"}}}`)}},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t, c.model, c.opts...)
			if c.script != nil {
				e.srv.Script(c.script...)
			}
			rec := &recorder{}
			res := agent.New(e.model, agent.Config{MaxRounds: 5}, nil).Run(context.Background(), agent.Input{Prompt: "loop"}, refusingTools{e.tools}, rec.sink)
			if res.Outcome != agent.BudgetExceeded || !errors.Is(res.Err, llm.ErrRefused) ||
				!strings.Contains(res.Answer, "spending limit is reached") || !strings.Contains(res.Answer, "credit exhausted (CHF 2.00 spent") {
				t.Fatalf("result: %+v", res)
			}
			if n := len(e.srv.ChatRequests()); n != 1 {
				t.Fatalf("%d model calls, want 1 (the round that asked for the tool)", n)
			}
			if rs := rec.results(); len(rs) != 1 || rs[0].ErrorCode != wasm.CodeSpendingLimit || rs[0].Attempts != 1 {
				t.Fatalf("tool results: %+v", rs)
			}
		})
	}
}
