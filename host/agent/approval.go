package agent

import (
	"context"
	"errors"
	"fmt"

	"github.com/agenthost/agenthost/host/llm"
	"github.com/agenthost/agenthost/host/tools"
	"github.com/agenthost/agenthost/host/wasm"
)

// Policy says whether a tool call runs (docs/agent.md#approval-policy).
type Policy string

// The policies.
const (
	// PolicyAuto runs the call.
	PolicyAuto Policy = "auto"
	// PolicyAsk pauses the run until a person approves, edits or denies
	// the call (native function calling only; see gate).
	PolicyAsk Policy = "ask"
	// PolicyDeny refuses the call; the model is told so.
	PolicyDeny Policy = "deny"
)

// Valid reports whether p is a known policy.
func (p Policy) Valid() bool { return p == PolicyAuto || p == PolicyAsk || p == PolicyDeny }

// Gate decides the policy of each tool a run calls. A run without one runs
// every call.
type Gate interface {
	Policy(ctx context.Context, t tools.Tool) Policy
}

// WaitingForApproval is the outcome of a run paused for a person's
// decision on tool calls: Result.Paused holds what resuming needs.
const WaitingForApproval Outcome = "waitingForApproval"

// Checkpoint is a run paused before a round's tool calls: the conversation
// up to the model's message asking for them, and the calls. It is plain
// data (JSON), so the run may resume on another host after a restart.
type Checkpoint struct {
	// Round is the loop round whose calls wait.
	Round int `json:"round"`
	// Messages is the conversation, the model's tool-calling message last.
	Messages []llm.Message `json:"messages"`
	Summary  string        `json:"summary,omitempty"`
	// Log is the loop's record of earlier tool calls (progress summaries).
	Log       []string      `json:"log,omitempty"`
	ToolCalls int           `json:"toolCalls"`
	Calls     []PendingCall `json:"calls"`
}

// PendingCall is one call of the paused round.
type PendingCall struct {
	ID        string `json:"id"`
	Tool      string `json:"tool"`
	Arguments string `json:"arguments"`
	// Policy is the gate's answer: the ask calls wait for a decision, the
	// others run (auto) or are refused (deny) when the round resumes.
	Policy Policy `json:"policy"`
	// External is the tool's side effect.
	External string `json:"external,omitempty"`
}

// Reason is what the model said before asking for the calls.
func (c Checkpoint) Reason() string {
	if n := len(c.Messages); n > 0 {
		return c.Messages[n-1].Content
	}
	return ""
}

// Verdict is a person's decision on an asked call.
type Verdict string

// The verdicts.
const (
	Approved Verdict = "approved"
	Denied   Verdict = "denied"
	Expired  Verdict = "expired"
)

// Decision is what was decided of one asked call.
type Decision struct {
	Verdict Verdict
	// Arguments, when set, replace the model's (the person edited them;
	// the caller validated them against the tool's schema).
	Arguments string
	// Reason is the person's reason for a denial; the model receives it.
	Reason string
}

// Resume continues a paused run: its checkpoint and the decisions on its
// asked calls, by call id (an asked call without one counts as expired).
type Resume struct {
	Checkpoint Checkpoint
	Decisions  map[string]Decision
}

// errPaused ends a round whose calls wait for approval.
var errPaused = errors.New("agent: the round waits for approval")

// policy is the gate's answer for a call; unknown tools and runs without a
// gate run (an unknown tool fails as a hallucination).
func (r *run) policy(ctx context.Context, name string) (Policy, string) {
	if r.cfg.Gate == nil {
		return PolicyAuto, ""
	}
	t, ok := r.tools.Lookup(name)
	if !ok {
		return PolicyAuto, ""
	}
	p := r.cfg.Gate.Policy(ctx, t)
	if !p.Valid() {
		p = PolicyAsk // a gate that cannot say is not a yes
	}
	return p, t.External
}

// gate pauses the round when any of its calls needs a person: the
// checkpoint is kept in the result and the round ends with errPaused. It
// also records every call's policy for callTool.
func (r *run) gate(ctx context.Context, round int, calls []call) error {
	if r.cfg.Gate == nil {
		return nil
	}
	var pending []PendingCall
	ask := false
	for _, c := range calls {
		p, ext := r.policy(ctx, c.name)
		pending = append(pending, PendingCall{ID: c.id, Tool: c.name, Arguments: c.args, Policy: p, External: ext})
		ask = ask || p == PolicyAsk
	}
	if !ask {
		return nil
	}
	r.res.Paused = &Checkpoint{Round: round, Messages: append([]llm.Message(nil), r.msgs...), Summary: r.summary,
		Log: append([]string(nil), r.log...), ToolCalls: r.res.ToolCalls, Calls: pending}
	return errPaused
}

// preflight is what a call's policy and decision make of it before it
// runs: the arguments to run it with, or the result the model receives
// instead (a refusal, a denial, an expiry).
func (r *run) preflight(ctx context.Context, c call) (string, *wasm.Result) {
	if d, ok := r.decided[c.id]; ok {
		switch d.Verdict {
		case Approved:
			if d.Arguments != "" {
				return d.Arguments, nil
			}
			return c.args, nil
		case Denied:
			msg := "a person denied this call"
			if d.Reason != "" {
				msg += ": " + d.Reason
			}
			return "", &wasm.Result{Error: &wasm.Error{Code: "denied", Message: msg + ". Do not try it again unchanged; answer the user or take another way."}}
		default:
			return "", &wasm.Result{Error: &wasm.Error{Code: "approval_expired", Message: "nobody approved this call in time, so it did not run; tell the user it needs their approval"}}
		}
	}
	switch p, _ := r.policy(ctx, c.name); p {
	case PolicyDeny:
		return "", &wasm.Result{Error: &wasm.Error{Code: "denied", Message: fmt.Sprintf("the workspace's policy does not allow %s; it did not run", c.name)}}
	case PolicyAsk:
		// Only a run that cannot pause gets here (the text protocol's
		// rounds): an unapproved call does not run.
		return "", &wasm.Result{Error: &wasm.Error{Code: "approval_required", Message: fmt.Sprintf("%s needs a person's approval, which this run cannot wait for; it did not run", c.name)}}
	}
	return c.args, nil
}

// resumed restores a paused run and runs the calls of its paused round as
// decided; it returns the round to go on from, and the error of a call the
// tenant's spending limits refused (refusedCall).
func (r *run) resumed(ctx context.Context, res *Resume) (int, error) {
	cp := res.Checkpoint
	r.msgs = append([]llm.Message(nil), cp.Messages...)
	r.summary, r.log, r.res.ToolCalls = cp.Summary, cp.Log, cp.ToolCalls
	r.decided = map[string]Decision{}
	calls := make([]call, len(cp.Calls))
	for i, c := range cp.Calls {
		calls[i] = call{id: c.ID, name: c.Tool, args: c.Arguments}
		if c.Policy == PolicyAsk {
			d, ok := res.Decisions[c.ID]
			if !ok {
				d = Decision{Verdict: Expired}
			}
			r.decided[c.ID] = d
		}
	}
	before := len(r.msgs) - 1
	outs := r.execute(ctx, cp.Round, calls)
	r.appendResults(calls, outs)
	r.rounds = append(r.rounds, span{max(0, before), len(r.msgs)})
	r.res.Rounds = cp.Round
	return cp.Round + 1, refusedCall(calls, outs)
}
