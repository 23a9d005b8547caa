package rounds_test

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agenthost/agenthost/host/agent"
	"github.com/agenthost/agenthost/host/figure"
	"github.com/agenthost/agenthost/host/files"
	"github.com/agenthost/agenthost/host/llm"
	"github.com/agenthost/agenthost/host/llm/llmtest"
	"github.com/agenthost/agenthost/host/llm/modeluse"
	"github.com/agenthost/agenthost/host/rounds"
	"github.com/agenthost/agenthost/host/store"
	"github.com/agenthost/agenthost/host/tenancy"
	"github.com/agenthost/agenthost/host/tools"
	"github.com/agenthost/agenthost/host/wasm/wasmtest"
	"github.com/agenthost/agenthost/host/workflows"
	"github.com/agenthost/agenthost/host/worldtest"
)

// timedModel measures the time spent in model calls, so benchmarks can
// report the host's own time.
type timedModel struct {
	inner agent.Model
	ns    atomic.Int64
}

func (m *timedModel) Chat(ctx context.Context, req llm.ChatRequest, onDelta func(llm.Delta)) (llm.ChatResponse, error) {
	start := time.Now()
	defer func() { m.ns.Add(int64(time.Since(start))) }()
	return m.inner.Chat(ctx, req, onDelta)
}

func (m *timedModel) Model(op modeluse.Operation) (llm.ModelInfo, bool) { return m.inner.Model(op) }

type benchEnv struct {
	db     *store.DB
	wf     *workflows.Service
	files  *files.Service
	set    *tools.Set
	reg    *tools.Registry
	model  *timedModel
	p      tenancy.Principal
	wsID   string
	server *llmtest.Server
}

// newBenchEnv: the embedded store, the toolbox plugin's twenty tools as the
// workspace's set, and a scripted model (context window: window tokens, 0
// for the default) that calls one tool, then answers.
func newBenchEnv(b *testing.B, window int) benchEnv {
	w := worldtest.New(b, worldtest.Options{})
	h := wasmtest.Host(b, "toolbox")
	reg := tools.NewRegistry(h, map[string][]string{"core": {tools.AllTools}})
	set, _, err := reg.Set("core")
	if err != nil || len(set.Tools()) != 20 {
		b.Fatalf("tool set: %v", err)
	}
	srv := llmtest.New(b, llmtest.WithDefault(llmtest.Decide(func(r llmtest.ChatRequest) llmtest.Step {
		if last := r.Messages[len(r.Messages)-1]; last.Role == "tool" {
			return llmtest.Reply("Found it.")
		}
		return llmtest.CallTools(llmtest.Call("tool07", `{"query":"invoices 2026","limit":5}`))
	})))
	client, err := llm.New(llm.Config{
		Providers: []llm.ProviderConfig{{Name: "test", BaseURL: srv.URL(), Timeout: 30 * time.Second}},
		Models:    map[modeluse.Operation][]llm.ModelConfig{modeluse.OpAgent: {{Provider: "test", Model: "scripted", ContextWindow: window}}},
	}, nil, nil)
	if err != nil {
		b.Fatal(err)
	}
	// Unmetered (no Meter): the figure is the host's own time.
	return benchEnv{db: w.DB, wf: w.Workflows, files: w.Files, set: set, reg: reg, model: &timedModel{inner: client},
		p: w.P, wsID: w.Workspace, server: srv}
}

// BenchmarkRoundOverhead reports agent.round.overhead.p50 ms: the host's
// time per agent round with 20 tools offered — building the request,
// dispatching the tool call to its plugin, and persisting every event to the
// embedded store — with the model's time (HTTP to the scripted server)
// excluded.
func BenchmarkRoundOverhead(b *testing.B) {
	e := newBenchEnv(b, 0)
	ctx := context.Background()
	ag := agent.New(e.model, agent.Config{}, nil)
	var per []time.Duration
	for i := range 200 {
		w, err := e.wf.Start(ctx, e.p, workflows.NewWorkflow{WorkspaceID: e.wsID, Name: "bench " + strconv.Itoa(i)})
		if err != nil {
			b.Fatal(err)
		}
		sink := func(_ context.Context, ev agent.Event) {
			if _, err := e.wf.Append(ctx, e.p, w.ID, ev.Type, ev.Data); err != nil {
				b.Error(err)
			}
		}
		before := e.model.ns.Load()
		res := ag.Run(ctx, agent.Input{Prompt: "find the invoices"}, e.set, sink)
		if res.Outcome != agent.Completed || res.Rounds != 2 || res.ToolCalls != 1 {
			b.Fatalf("run: %+v", res)
		}
		model := time.Duration(e.model.ns.Load() - before)
		if i >= 10 { // warm-up: first calls of pooled instances
			per = append(per, (res.Duration-model)/time.Duration(res.Rounds))
		}
	}
	figure.Report("agent.round.overhead.p50", figure.Millis(figure.Percentile(per, 50)), "ms")
}

// staticContext is a ContextSource that gives every round the same text: the
// benchmark measures the loop's own work for a round's context (sizing its
// budget against the conversation), not the knowledge store's.
type staticContext string

func (s staticContext) RoundContext(context.Context, agent.ContextRequest) (agent.RoundContext, error) {
	return agent.RoundContext{Text: string(s)}, nil
}

// BenchmarkRoundOverheadLongContext reports agent.round.overhead.longctx.p50
// ms: as agent.round.overhead, but the workflow has a long history (100
// earlier messages of 2 KB, about 50,000 tokens, in a 128,000-token
// window) and a context source, so every round sizes the context against
// the whole conversation, as a served round does.
func BenchmarkRoundOverheadLongContext(b *testing.B) {
	e := newBenchEnv(b, 128000)
	ctx := context.Background()
	ag := agent.New(e.model, agent.Config{}, nil)
	history := make([]llm.Message, 100)
	for i := range history {
		var sb strings.Builder
		for j := 0; sb.Len() < 2048; j++ {
			fmt.Fprintf(&sb, "Invoice %d-%d of supplier %d was paid on 2026-%02d-%02d for CHF %d.%02d; ", i, j, i*7+j, 1+j%12, 1+j%28, 100+i*j, j%100)
		}
		role := "user"
		if i%2 == 1 {
			role = "assistant"
		}
		history[i] = llm.Message{Role: role, Content: sb.String()}
	}
	var per []time.Duration
	for i := range 60 {
		w, err := e.wf.Start(ctx, e.p, workflows.NewWorkflow{WorkspaceID: e.wsID, Name: "bench long " + strconv.Itoa(i)})
		if err != nil {
			b.Fatal(err)
		}
		sink := func(_ context.Context, ev agent.Event) {
			if _, err := e.wf.Append(ctx, e.p, w.ID, ev.Type, ev.Data); err != nil {
				b.Error(err)
			}
		}
		before := e.model.ns.Load()
		res := ag.Run(ctx, agent.Input{Prompt: "find the invoices", History: history, ContextSource: staticContext(strings.Repeat("context ", 128))}, e.set, sink)
		if res.Outcome != agent.Completed || res.Rounds != 2 || res.ToolCalls != 1 {
			b.Fatalf("run: %+v", res)
		}
		model := time.Duration(e.model.ns.Load() - before)
		if i >= 5 {
			per = append(per, (res.Duration-model)/time.Duration(res.Rounds))
		}
	}
	figure.Report("agent.round.overhead.longctx.p50", figure.Millis(figure.Percentile(per, 50)), "ms")
}

// BenchmarkConcurrent200 reports agent.concurrent200.completed count and
// agent.concurrent200.round.p99 ms: 200 workflows started at once through
// the workspace service on the scripted model, each a tool round and an
// answer round, events persisted to the embedded store.
func BenchmarkConcurrent200(b *testing.B) {
	e := newBenchEnv(b, 0)
	ctx := context.Background()
	svc := rounds.New(e.wf, e.files, agent.New(e.model, agent.Config{}, nil), e.reg, e.db, rounds.Config{}, nil)
	defer svc.Close()
	ids := make([]string, 200)
	var wg sync.WaitGroup
	for i := range ids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w, err := svc.Start(ctx, e.p, e.wsID, rounds.StartRequest{Prompt: "find the invoices " + strconv.Itoa(i)})
			if err != nil {
				b.Error(err)
				return
			}
			ids[i] = w.ID
		}()
	}
	wg.Wait()
	svc.Wait()
	completed := 0
	var rounds []time.Duration
	for _, id := range ids {
		if id == "" {
			continue
		}
		w, err := e.wf.Get(ctx, e.p, id)
		if err != nil {
			b.Fatal(err)
		}
		if w.Status == workflows.StatusCompleted {
			completed++
		}
		evs, err := e.wf.Events(ctx, e.p, id, 0, 1000)
		if err != nil {
			b.Fatal(err)
		}
		// A round runs from the previous mark (the user's message, then
		// each agentProgress) to its agentProgress event.
		var mark time.Time
		for _, ev := range evs {
			switch ev.Type {
			case workflows.EventMessage:
				if mark.IsZero() {
					mark = ev.Time
				}
			case workflows.EventAgentProgress:
				rounds = append(rounds, ev.Time.Sub(mark))
				mark = ev.Time
			}
		}
	}
	figure.Report("agent.concurrent200.completed", float64(completed), "count")
	figure.Report("agent.concurrent200.round.p99", figure.Millis(figure.Percentile(rounds, 99)), "ms")
}
