package agenttrace

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/agenthost/agenthost/host/billing/ledger"
	"github.com/agenthost/agenthost/host/llm/modeluse"
	"github.com/agenthost/agenthost/host/money"
	"github.com/agenthost/agenthost/host/workflows"
)

// TestBuildTwoRuns: two requests in one workflow, the second stopped in
// its first round: each run keeps its rounds, records outside the loop's
// rounds (a tool's model call) count in the total only.
func TestBuildTwoRuns(t *testing.T) {
	t0 := time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	var seq int64
	ev := func(s int, typ workflows.EventType, data any) workflows.Event {
		seq++
		b, _ := json.Marshal(data)
		return workflows.Event{WorkflowID: "wf", Seq: seq, Type: typ, Data: b, Time: at(s)}
	}
	rec := func(s int, purpose string, in, out int, cost money.Amount) ledger.Record {
		return ledger.Record{WorkflowID: "wf", Purpose: purpose, CreatedAt: at(s),
			Usage: modeluse.Usage{Operation: modeluse.OpAgent, Model: "m", PromptTokens: in, CompletionTokens: out, Cost: cost}}
	}
	events := []workflows.Event{
		ev(0, workflows.EventStatus, workflows.StatusData{Status: workflows.StatusRunning}),
		ev(2, workflows.EventToolCall, workflows.ToolCallData{Round: 1, CallID: "a", Tool: "lookup", Arguments: json.RawMessage(`{"q":1}`)}),
		ev(3, workflows.EventToolResult, workflows.ToolResultData{Round: 1, CallID: "a", Tool: "lookup", OK: true, DurationMS: 900}),
		ev(3, workflows.EventAgentProgress, workflows.AgentProgressData{Round: 1}),
		ev(5, workflows.EventAgentProgress, workflows.AgentProgressData{Round: 2}),
		ev(5, workflows.EventAgentSummary, workflows.AgentSummaryData{Reason: "completed"}),
		ev(5, workflows.EventComplete, map[string]string{"reason": "completed"}),
		ev(10, workflows.EventStatus, workflows.StatusData{Status: workflows.StatusRunning}),
		ev(12, workflows.EventAgentProgress, workflows.AgentProgressData{Round: 1}),
		ev(12, workflows.EventAgentSummary, workflows.AgentSummaryData{Reason: "stopped"}),
	}
	records := []ledger.Record{
		rec(1, "agent", 100, 10, 7), rec(3, "tool:summarizeContent", 500, 50, 1000), rec(4, "agent", 200, 20, 11), rec(11, "agent", 300, 0, 13),
	}
	tr := Build("wf", events, records)
	if tr.TotalRuns != 2 || tr.TotalRounds != 3 || tr.TotalToolCalls != 1 || tr.TotalCostCHF != money.Amount(1031).String() {
		t.Fatalf("totals %+v", tr)
	}
	r1, r2 := tr.Runs[0], tr.Runs[1]
	if r1.Status != "completed" || r1.AbortReason != "" || len(r1.Rounds) != 2 || r1.Rounds[0].InputTokens != 100 ||
		r1.Rounds[0].DurationMS != 3000 || r1.Rounds[1].InputTokens != 200 || r1.Rounds[1].CostCHF != money.Amount(11).String() ||
		len(r1.Rounds[0].ToolCalls) != 1 || r1.Rounds[0].ToolCalls[0].DurationMS != 900 {
		t.Fatalf("first run %+v", r1)
	}
	if r2.Status != "stopped" || r2.AbortReason != "stopped" || len(r2.Rounds) != 1 || r2.Rounds[0].InputTokens != 300 ||
		!r2.StartedAt.Equal(at(10)) || r2.Rounds[0].DurationMS != 2000 {
		t.Fatalf("second run %+v", r2)
	}
}
