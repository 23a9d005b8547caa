package rounds_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/agenthost/agenthost/host/agent"
	"github.com/agenthost/agenthost/host/files"
	"github.com/agenthost/agenthost/host/knowledge"
	"github.com/agenthost/agenthost/host/llm"
	"github.com/agenthost/agenthost/host/llm/llmtest"
	"github.com/agenthost/agenthost/host/llm/modeluse"
	"github.com/agenthost/agenthost/host/money"
	"github.com/agenthost/agenthost/host/rounds"
	"github.com/agenthost/agenthost/host/tenancy"
	"github.com/agenthost/agenthost/host/toolcall"
	"github.com/agenthost/agenthost/host/tools"
	"github.com/agenthost/agenthost/host/wasm"
	"github.com/agenthost/agenthost/host/wasm/wasmtest"
	"github.com/agenthost/agenthost/host/workflows"
	"github.com/agenthost/agenthost/host/worldtest"
)

// TestBudgetCountsToolModelCalls: a tool's model calls (the analysis
// plugin's analyzeContent through the model capability) count toward the
// workflow's budget within the round that makes them. The tool's first
// call spends more than the budget left; its next call is refused by the
// capability, and the loop's next round does not call the model but ends
// in budgetExceeded with the progress summary. The loop, the capability
// and the workflow's statistics agree on the figure, which is the sum of
// the workflow's usage records; after the run, a direct call of the tool
// is refused on the recorded figure.
func TestBudgetCountsToolModelCalls(t *testing.T) {
	ctx := context.Background()
	// The long text needs several parts of the summary model's 1,024-token
	// context. The agent's first call (the text in the tool's arguments)
	// costs some CHF 0.006, the first part's call some CHF 0.01: together
	// more than the budget of CHF 0.01, within one round.
	var text strings.Builder
	for i := 0; text.Len() < 12000; i++ {
		fmt.Fprintf(&text, "Invoice %d of supplier %d was paid on 2026-03-%02d for CHF %d.\n\n", i, i*7, 1+i%28, 100+i)
	}
	args := fmt.Sprintf(`{"text": %q, "instruction": "List the invoices over CHF 150."}`, text.String())
	const budget = 0.01
	world := worldtest.New(t, worldtest.Options{Model: &worldtest.Model{
		Models: map[modeluse.Operation][]llm.ModelConfig{
			modeluse.OpAgent:   {{Model: "scripted", InputCHFPer1M: 1, OutputCHFPer1M: 2}},
			modeluse.OpSummary: {{Model: "small-model", ContextWindow: 1024, InputCHFPer1M: 20, OutputCHFPer1M: 20}},
		},
		Server: []llmtest.Option{llmtest.WithDefault(llmtest.Decide(func(r llmtest.ChatRequest) llmtest.Step {
			if r.Model == "small-model" {
				return llmtest.Reply("Invoices 51 to 60 are over CHF 150.")
			}
			if last := r.Messages[len(r.Messages)-1]; last.Role == "tool" {
				return llmtest.Reply("Done.")
			}
			return llmtest.CallTools(llmtest.Call("analyzeContent", args))
		}))},
		Retry: llm.RetryConfig{Attempts: 1},
	}})
	db, p, ws, srv, client, wf, fileSvc := world.DB, world.P, world.Workspace, world.Server, world.Client, world.Workflows, world.Files
	fc := &files.Capability{Files: fileSvc, Workflows: wf}
	kc := &knowledge.Capability{}
	mc := &llm.Capabilities{Client: client, Workflows: wf, MaxWorkflowCost: money.FromCHF(budget)}
	h := wasmtest.HostWith(t, []wasm.Capability{fc.Wasm(), mc.ModelCapability(), kc.Wasm()}, "analysis")
	toolReg := tools.NewRegistry(h, map[string][]string{"core": {"analyzeContent"}})
	svc := rounds.New(wf, fileSvc, agent.New(client, agent.Config{MaxCost: money.FromCHF(budget)}, nil), toolReg, db, rounds.Config{}, nil)
	defer svc.Close()

	w, err := svc.Start(ctx, p, ws, rounds.StartRequest{Prompt: "Which invoices are over CHF 150?"})
	if err != nil {
		t.Fatal(err)
	}
	svc.Wait()
	if w, err = wf.Get(ctx, p, w.ID); err != nil {
		t.Fatal(err)
	}

	var agentCalls, toolCalls int
	for _, r := range srv.ChatRequests() {
		switch r.Model {
		case "scripted":
			agentCalls++
		case "small-model":
			toolCalls++
		}
	}
	if agentCalls != 1 || toolCalls != 1 {
		t.Fatalf("%d agent model calls (want 1: the second round must not call the model), %d tool model calls (want 1: the capability refuses the second part)", agentCalls, toolCalls)
	}
	evs, err := wf.Events(ctx, p, w.ID, 0, 1000)
	if err != nil {
		t.Fatal(err)
	}
	var reason, toolResult string
	for _, ev := range evs {
		switch ev.Type {
		case workflows.EventComplete:
			var d workflows.EndData
			if err := json.Unmarshal(ev.Data, &d); err != nil {
				t.Fatal(err)
			}
			reason = d.Reason
		case workflows.EventToolResult:
			var d workflows.ToolResultData
			if err := json.Unmarshal(ev.Data, &d); err != nil {
				t.Fatal(err)
			}
			toolResult = d.Content
		}
	}
	if w.Status != workflows.StatusCompleted || reason != string(agent.BudgetExceeded) {
		t.Fatalf("status %s, reason %q; events: %d", w.Status, reason, len(evs))
	}
	if !strings.Contains(toolResult, "error (budget_exceeded)") {
		t.Fatalf("the tool's second part was not refused for the budget: %q", toolResult)
	}

	// One figure: the usage records, the workflow's statistics and the
	// progress summary.
	var recorded float64
	if err := db.SQL().QueryRowContext(ctx, `SELECT COALESCE(SUM(cost_nchf), 0) / 1000000000.0 FROM usage_records WHERE workflow_id = ?`, w.ID).Scan(&recorded); err != nil {
		t.Fatal(err)
	}
	if recorded < budget || abs(w.Stats.CostCHF.CHF()-recorded) > 1e-9 {
		t.Fatalf("workflow cost %s, usage records %g (budget %g)", w.Stats.CostCHF, recorded, budget)
	}
	answer := lastAnswer(t, wf, p, w.ID)
	if want := fmt.Sprintf("The cost budget of CHF %.2f is spent (CHF %.4f,", budget, recorded); !strings.HasPrefix(answer, want) {
		t.Fatalf("answer %q, want it to start with %q", answer, want)
	}

	// Outside a run the capability judges by the recorded figure, and
	// refuses as the loop did.
	set, _, err := toolReg.Set("core")
	if err != nil {
		t.Fatal(err)
	}
	res := set.Call(toolcall.With(ctx, toolcall.Caller{Principal: p, WorkspaceID: ws, WorkflowID: w.ID}), "analyzeContent", []byte(args), nil)
	if res.OK || res.Error == nil || !strings.Contains(res.Error.Code+res.Error.Message, "budget") {
		t.Fatalf("a direct call after the run: %+v", res)
	}
	if n := len(srv.ChatRequests()); n != 2 {
		t.Fatalf("%d model requests after the direct call, want still 2", n)
	}
}

func abs(f float64) float64 {
	if f < 0 {
		return -f
	}
	return f
}

// lastAnswer is the last assistant message of workflow id.
func lastAnswer(t *testing.T, wf *workflows.Service, p tenancy.Principal, id string) string {
	t.Helper()
	msgs, err := wf.Messages(context.Background(), p, id, workflows.After{}, 100)
	if err != nil {
		t.Fatal(err)
	}
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == workflows.RoleAssistant {
			return msgs[i].Content
		}
	}
	t.Fatal("no answer")
	return ""
}
