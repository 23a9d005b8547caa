// Package agenttrace reconstructs the trace of a workflow
// (its runs, their rounds with the model, tokens, cost and duration of
// each, and every tool call with its arguments, result and duration) from
// what is already stored: the workflow's persisted events and its usage
// records. Nothing is recorded twice for it.
package agenttrace

import (
	"encoding/json"
	"time"

	"github.com/agenthost/agenthost/host/billing/ledger"
	"github.com/agenthost/agenthost/host/llm/modeluse"
	"github.com/agenthost/agenthost/host/money"
	"github.com/agenthost/agenthost/host/workflows"
)

// Trace is the AgentTrace of a workflow: one Run per user request.
type Trace struct {
	WorkflowID     string `json:"workflowId"`
	TotalRuns      int    `json:"totalRuns"`
	TotalRounds    int    `json:"totalRounds"`
	TotalToolCalls int    `json:"totalToolCalls"`
	// TotalCostCHF is every usage record of the workflow (model calls of
	// the loop and of its tools, plugin runs), exact.
	TotalCostCHF string `json:"totalCostCHF"`
	Runs         []Run  `json:"runs"`
}

// Run is one agent run (one request of the user).
type Run struct {
	StartedAt   time.Time  `json:"startedAt"`
	CompletedAt *time.Time `json:"completedAt,omitempty"`
	// Status: running, completed, maxRoundsReached, budgetExceeded,
	// stopped, failed.
	Status      string `json:"status"`
	AbortReason string `json:"abortReason,omitempty"`
	// ChosenModel is the model the conversation chose for the run
	// (provider/model; empty: the default), Model the one that answered
	// its last call (another after a fallback).
	ChosenModel string  `json:"chosenModel,omitempty"`
	Model       string  `json:"model,omitempty"`
	Rounds      []Round `json:"rounds"`
}

// Round is one model round of a trace.
type Round struct {
	RoundNumber  int        `json:"roundNumber"`
	AIModel      string     `json:"aiModel"`
	InputTokens  int64      `json:"inputTokens"`
	OutputTokens int64      `json:"outputTokens"`
	CostCHF      string     `json:"costCHF"`
	DurationMS   int64      `json:"durationMs"`
	ToolCalls    []ToolCall `json:"toolCalls"`
}

// ToolCall is one tool call of a round.
type ToolCall struct {
	ToolName   string          `json:"toolName"`
	Args       json.RawMessage `json:"args"`
	Success    bool            `json:"success"`
	DurationMS int64           `json:"durationMs"`
	Attempts   int             `json:"attempts,omitempty"`
	ErrorCode  string          `json:"errorCode,omitempty"`
	Error      string          `json:"error,omitempty"`
}

// Build reconstructs the trace from the workflow's events (in sequence
// order) and usage records. A round spans the time from the end of the
// previous round (or the run's start) to its agentProgress event; the
// records of the loop's model calls made in that span are its model,
// tokens and cost.
func Build(workflowID string, events []workflows.Event, records []ledger.Record) Trace {
	t := Trace{WorkflowID: workflowID, Runs: []Run{}}
	var total money.Amount
	for _, r := range records {
		total += r.Usage.Cost
	}
	t.TotalCostCHF = total.String()

	var run *Run
	var roundStart time.Time
	startRun := func(at time.Time) {
		t.Runs = append(t.Runs, Run{StartedAt: at, Status: "running", Rounds: []Round{}})
		run, roundStart = &t.Runs[len(t.Runs)-1], at
	}
	calls := map[string]*ToolCall{} // the current round's, by call id
	var order []string              // their ids in the order they were called
	for _, e := range events {
		switch e.Type {
		case workflows.EventAgentProgress, workflows.EventToolCall, workflows.EventToolResult, workflows.EventAgentSummary:
			if run == nil {
				startRun(e.Time)
			}
		case workflows.EventStatus:
			var d workflows.StatusData
			if json.Unmarshal(e.Data, &d) == nil && d.Status == workflows.StatusRunning && run == nil {
				startRun(e.Time)
			}
			continue
		default:
			continue
		}
		switch e.Type {
		case workflows.EventToolCall:
			var d workflows.ToolCallData
			if json.Unmarshal(e.Data, &d) != nil {
				continue
			}
			if _, seen := calls[d.CallID]; !seen {
				order = append(order, d.CallID)
			}
			calls[d.CallID] = &ToolCall{ToolName: d.Tool, Args: d.Arguments}
		case workflows.EventToolResult:
			var d workflows.ToolResultData
			if json.Unmarshal(e.Data, &d) != nil {
				continue
			}
			c, ok := calls[d.CallID]
			if !ok {
				c = &ToolCall{ToolName: d.Tool, Args: json.RawMessage("null")}
				calls[d.CallID] = c
				order = append(order, d.CallID)
			}
			c.Success, c.DurationMS, c.Attempts, c.ErrorCode, c.Error = d.OK, d.DurationMS, d.Attempts, d.ErrorCode, d.Error
		case workflows.EventAgentProgress:
			var d workflows.AgentProgressData
			if json.Unmarshal(e.Data, &d) != nil {
				continue
			}
			rd := Round{RoundNumber: d.Round, DurationMS: e.Time.Sub(roundStart).Milliseconds(), ToolCalls: make([]ToolCall, 0, len(order))}
			for _, id := range order {
				rd.ToolCalls = append(rd.ToolCalls, *calls[id])
			}
			fill(&rd, records, roundStart, e.Time)
			run.Rounds = append(run.Rounds, rd)
			t.TotalRounds++
			t.TotalToolCalls += len(rd.ToolCalls)
			roundStart = e.Time
			calls, order = map[string]*ToolCall{}, nil
		case workflows.EventAgentSummary:
			var d workflows.AgentSummaryData
			if json.Unmarshal(e.Data, &d) == nil {
				run.Status = d.Reason
				run.ChosenModel, run.Model = d.ChosenModel, d.Model
				if d.Reason != "completed" {
					run.AbortReason = d.Reason
				}
			}
			end := e.Time
			run.CompletedAt = &end
			run = nil
		}
	}
	t.TotalRuns = len(t.Runs)
	return t
}

// fill sums the loop's model calls recorded in (from, to] into the round.
func fill(rd *Round, records []ledger.Record, from, to time.Time) {
	var cost money.Amount
	for _, r := range records {
		if r.Purpose != "agent" || r.CreatedAt.Before(from) || r.CreatedAt.After(to) {
			continue
		}
		if r.Usage.Operation == modeluse.OpAgent || rd.AIModel == "" {
			rd.AIModel = r.Usage.Model
		}
		rd.InputTokens += int64(r.Usage.PromptTokens)
		rd.OutputTokens += int64(r.Usage.CompletionTokens)
		cost += r.Usage.Cost
	}
	rd.CostCHF = cost.String()
}
