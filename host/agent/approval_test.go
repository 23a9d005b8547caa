package agent_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/agenthost/agenthost/host/agent"
	"github.com/agenthost/agenthost/host/llm"
	"github.com/agenthost/agenthost/host/llm/llmtest"
	"github.com/agenthost/agenthost/host/tools"
	"github.com/agenthost/agenthost/host/workflows"
)

// policies is a gate by tool name; unnamed tools run.
type policies map[string]agent.Policy

func (p policies) Policy(_ context.Context, t tools.Tool) agent.Policy {
	if pol, ok := p[t.Name]; ok {
		return pol
	}
	return agent.PolicyAuto
}

// TestApprovalPauseAndResume: the model asks for a read-only lookup and a
// writing writeNote in one round; writeNote's policy is ask, so the run
// pauses before either runs, with a checkpoint that is plain JSON. A
// second agent (another host) resumes it from the decoded checkpoint: the
// decision reaches the model as writeNote's result, and the model answers.
func TestApprovalPauseAndResume(t *testing.T) {
	cases := []struct {
		name     string
		decision agent.Decision
		decided  bool   // false: no decision is passed (it expired)
		want     string // in the model's tool message for writeNote
		ran      bool   // writeNote ran
	}{
		{"approved", agent.Decision{Verdict: agent.Approved}, true, ": alpha", true},
		{"edited", agent.Decision{Verdict: agent.Approved, Arguments: `{"text":"edited by a person"}`}, true, ": edited by a person", true},
		{"denied", agent.Decision{Verdict: agent.Denied, Reason: "not to the board"}, true, "error (denied): a person denied this call: not to the board", false},
		{"expired", agent.Decision{}, false, "error (approval_expired)", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, llm.ModelConfig{})
			e.srv.Script(
				llmtest.Step{Content: "I will note it for the board.",
					ToolCalls: []llmtest.ToolCall{llmtest.Call("lookup", lookupArgs("alpha", 0)), llmtest.Call("writeNote", `{"text":"alpha"}`)}},
				llmtest.Reply("Done as decided."),
			)
			cfg := agent.Config{Gate: policies{"writeNote": agent.PolicyAsk}}
			rec := &recorder{}
			res := agent.New(e.model, cfg, nil).Run(context.Background(), agent.Input{Prompt: "note alpha", Round: 1}, e.tools, rec.sink)
			if res.Outcome != agent.WaitingForApproval || res.Paused == nil {
				t.Fatalf("result: %+v", res)
			}
			for _, ev := range rec.events {
				if ev.Type == workflows.EventToolCall || ev.Type == workflows.EventToolResult {
					t.Fatalf("a tool ran before the decision: %+v", ev)
				}
			}
			cp := res.Paused
			if len(cp.Calls) != 2 || cp.Calls[1].Policy != agent.PolicyAsk || cp.Calls[0].Policy != agent.PolicyAuto || cp.Reason() != "I will note it for the board." {
				t.Fatalf("checkpoint: %+v (reason %q)", cp.Calls, cp.Reason())
			}
			b, err := json.Marshal(cp)
			if err != nil {
				t.Fatal(err)
			}
			var back agent.Checkpoint
			if err := json.Unmarshal(b, &back); err != nil {
				t.Fatal(err)
			}
			decisions := map[string]agent.Decision{}
			if tc.decided {
				decisions[back.Calls[1].ID] = tc.decision
			}
			rec2 := &recorder{}
			res2 := agent.New(e.model, cfg, nil).Run(context.Background(), agent.Input{Round: 1,
				Resume: &agent.Resume{Checkpoint: back, Decisions: decisions}}, e.tools, rec2.sink)
			if res2.Outcome != agent.Completed || res2.Answer != "Done as decided." || res2.ToolCalls != 2 {
				t.Fatalf("resumed: %+v", res2)
			}
			reqs := e.srv.ChatRequests()
			if len(reqs) != 2 {
				t.Fatalf("%d model calls, want 2 (none while waiting)", len(reqs))
			}
			var note, lookup string
			for _, m := range reqs[1].Messages {
				switch {
				case m.Role == "tool" && m.Name == "writeNote":
					note = m.Content
				case m.Role == "tool" && m.Name == "lookup":
					lookup = m.Content
				}
			}
			if !strings.Contains(note, tc.want) {
				t.Errorf("writeNote's result for the model = %q, want %q in it", note, tc.want)
			}
			if lookup == "" || strings.HasPrefix(lookup, "error") {
				t.Errorf("the auto lookup's result = %q", lookup)
			}
			if got := strings.HasPrefix(note, "saved note"); got != tc.ran {
				t.Errorf("writeNote ran = %v, want %v (%q)", got, tc.ran, note)
			}
		})
	}
}

// TestApprovalDenyPolicy: a tool whose policy is deny never runs and the
// run does not pause: the model is told and answers.
func TestApprovalDenyPolicy(t *testing.T) {
	e := newEnv(t, llm.ModelConfig{})
	e.srv.Script(
		llmtest.CallTools(llmtest.Call("writeNote", `{"text":"alpha"}`)),
		llmtest.Reply("I may not write notes here."),
	)
	res := agent.New(e.model, agent.Config{Gate: policies{"writeNote": agent.PolicyDeny}}, nil).
		Run(context.Background(), agent.Input{Prompt: "note alpha", Round: 1}, e.tools, nil)
	if res.Outcome != agent.Completed || res.Paused != nil {
		t.Fatalf("result: %+v", res)
	}
	reqs := e.srv.ChatRequests()
	last := reqs[len(reqs)-1].Messages
	if m := last[len(last)-1]; m.Role != "tool" || !strings.Contains(m.Content, "error (denied): the workspace's policy does not allow writeNote") {
		t.Fatalf("the model was told %+v", m)
	}
}
