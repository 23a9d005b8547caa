package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/agenthost/agenthost/host/llm/llmtest"
)

// approvalRequested waits on h for the workflow's approvalRequested event
// and returns its payload.
func approvalRequested(t *testing.T, h host, token, workflowID string) (ev struct {
	ApprovalID string          `json:"approvalId"`
	Tool       string          `json:"tool"`
	Arguments  json.RawMessage `json:"arguments"`
	Reason     string          `json:"reason"`
}) {
	t.Helper()
	evs := h.events(t, token, workflowID, func(e hostEvent) bool { return e.typ == "approvalRequested" || roundEnd(e) })
	last := evs[len(evs)-1]
	if last.typ != "approvalRequested" {
		t.Fatalf("the round ended %s %s without asking", last.typ, last.data)
	}
	if err := json.Unmarshal([]byte(last.data), &ev); err != nil {
		t.Fatal(err)
	}
	return ev
}

// askForLookup makes lookup's policy ask in the workspace and scripts the
// model: it looks a topic up (saying why), then answers.
func askForLookup(t *testing.T, h host, model *llmtest.Server, token, ws, answer string) {
	t.Helper()
	if st := h.call(t, token, "PUT", "/workspaces/"+ws+"/tool-policies/lookup", `{"policy":"ask"}`, nil); st != 200 {
		t.Fatalf("setting the policy: %d", st)
	}
	model.Script(
		llmtest.Step{Content: "I need the fact about alpha.", ToolCalls: []llmtest.ToolCall{llmtest.Call("lookup", `{"topic":"alpha"}`)}},
		llmtest.Reply(answer),
	)
}

// toolMessage is the content the model received for a tool in its last
// request.
func toolMessage(t *testing.T, model *llmtest.Server, tool string) (string, int) {
	t.Helper()
	reqs := model.ChatRequests()
	for _, m := range reqs[len(reqs)-1].Messages {
		if m.Role == "tool" && m.Name == tool {
			return m.Content, len(reqs)
		}
	}
	t.Fatalf("the model's last request has no %s result", tool)
	return "", 0
}

// TestTwoHostsApprovalSurvivesKill (issue 27 item 4): a round asks for
// approval on host A; A is killed (SIGKILL) while the round waits; the
// person approves with edited arguments on host B, which runs the call
// with them and completes the round. The model was called once before and
// once after: nothing ran, and nothing was billed, while waiting.
func TestTwoHostsApprovalSurvivesKill(t *testing.T) {
	if testing.Short() {
		t.Skip("starts two servers")
	}
	a, b, model, token, ws := twoHostsSetup(t)
	askForLookup(t, a, model, token, ws, "Approved and done.")
	var w struct {
		ID string `json:"id"`
	}
	if st := a.call(t, token, "POST", "/workspaces/"+ws+"/workflows", `{"prompt":"look alpha up"}`, &w); st != 202 {
		t.Fatalf("start on A: %d", st)
	}
	req := approvalRequested(t, b, token, w.ID)
	if req.Tool != "lookup" || string(req.Arguments) != `{"topic":"alpha"}` || req.Reason != "I need the fact about alpha." {
		t.Fatalf("approvalRequested %+v", req)
	}
	if err := a.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	<-a.done
	var got struct {
		Status  string `json:"status"`
		Outcome string `json:"outcome"`
	}
	b.call(t, token, "GET", "/workflows/"+w.ID, "", &got)
	if got.Status != "running" || got.Outcome != "waitingForApproval" {
		t.Fatalf("waiting workflow %+v", got)
	}
	var decided struct {
		State string `json:"state"`
	}
	if st := b.call(t, token, "POST", "/workflows/"+w.ID+"/approvals/"+req.ApprovalID, `{"approve":true,"arguments":{"topic":"beta"}}`, &decided); st != 200 || decided.State != "approved" {
		t.Fatalf("approve on B: %d %+v", st, decided)
	}
	// A second decision conflicts.
	if st := b.call(t, token, "POST", "/workflows/"+w.ID+"/approvals/"+req.ApprovalID, `{"approve":false}`, nil); st != 409 {
		t.Fatalf("second decision: %d, want 409", st)
	}
	evs := b.events(t, token, w.ID, roundEnd)
	if last := evs[len(evs)-1]; last.typ != "complete" {
		t.Fatalf("the round ended %s %s", last.typ, last.data)
	}
	content, calls := toolMessage(t, model, "lookup")
	if !strings.Contains(content, "the fact about beta") || calls != 2 {
		t.Fatalf("the model got %q after %d calls; want the edited call's result after 2", content, calls)
	}
	var msgs []struct {
		Content string `json:"content"`
	}
	b.call(t, token, "GET", "/workflows/"+w.ID+"/messages", "", &msgs)
	if len(msgs) == 0 || msgs[len(msgs)-1].Content != "Approved and done." {
		t.Fatalf("messages %+v", msgs)
	}
	var audit struct {
		Entries []struct {
			Action   string `json:"action"`
			TargetID string `json:"targetId"`
		} `json:"entries"`
	}
	if st := b.call(t, token, "GET", "/audit?action=approval.approved", "", &audit); st != 200 {
		t.Fatalf("audit: %d", st)
	}
	found := false
	for _, e := range audit.Entries {
		found = found || e.Action == "approval.approved" && e.TargetID == req.ApprovalID
	}
	if !found {
		t.Fatalf("the approval is not in the audit log: %+v", audit.Entries)
	}
	noCrash(t, b.child)
}

// TestApprovalDeniedAndExpired (issue 27 item 4): a denied call does not
// run and the model answers to the person's reason; a call nobody decides
// expires (AGENTHOST_APPROVAL_TTL) and the model is told it did not run.
func TestApprovalDeniedAndExpired(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a server")
	}
	start, model, token, ws := hostsSetup(t)
	t.Setenv("AGENTHOST_APPROVAL_TTL", "1s")
	t.Setenv("AGENTHOST_APPROVAL_SWEEP", "200ms")
	h := start()
	run := func(answer string) (string, string) {
		askForLookup(t, h, model, token, ws, answer)
		var w struct {
			ID string `json:"id"`
		}
		if st := h.call(t, token, "POST", "/workspaces/"+ws+"/workflows", `{"prompt":"look alpha up"}`, &w); st != 202 {
			t.Fatalf("start: %d", st)
		}
		return w.ID, approvalRequested(t, h, token, w.ID).ApprovalID
	}
	ended := func(id, answer string) {
		t.Helper()
		evs := h.events(t, token, id, roundEnd)
		if last := evs[len(evs)-1]; last.typ != "complete" {
			t.Fatalf("the round ended %s %s", last.typ, last.data)
		}
		var msgs []struct {
			Content string `json:"content"`
		}
		h.call(t, token, "GET", "/workflows/"+id+"/messages", "", &msgs)
		if msgs[len(msgs)-1].Content != answer {
			t.Fatalf("answer %q", msgs[len(msgs)-1].Content)
		}
	}

	id, aid := run("I did not look it up, as you asked.")
	if st := h.call(t, token, "POST", "/workflows/"+id+"/approvals/"+aid, `{"approve":false,"reason":"alpha is confidential"}`, nil); st != 200 {
		t.Fatalf("deny: %d", st)
	}
	ended(id, "I did not look it up, as you asked.")
	if content, _ := toolMessage(t, model, "lookup"); !strings.Contains(content, "a person denied this call: alpha is confidential") {
		t.Fatalf("the model got %q", content)
	}

	id, _ = run("The lookup needs your approval.")
	ended(id, "The lookup needs your approval.")
	if content, _ := toolMessage(t, model, "lookup"); !strings.Contains(content, "approval_expired") {
		t.Fatalf("the model got %q", content)
	}
	var as []struct {
		State string `json:"state"`
	}
	if st := h.call(t, token, "GET", "/workflows/"+id+"/approvals", "", &as); st != 200 || len(as) != 1 || as[0].State != "expired" {
		t.Fatalf("approvals: %d %+v", st, as)
	}
	noCrash(t, h.child)
}
