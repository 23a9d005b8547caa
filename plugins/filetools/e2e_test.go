//go:build !wasip1

package main

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/agenthost/agenthost/host/files"
	"github.com/agenthost/agenthost/host/files/filemeta"
	"github.com/agenthost/agenthost/host/llm/llmtest"
	"github.com/agenthost/agenthost/host/workflows"
)

// TestAgentProposesUserAccepts is the whole flow over HTTP with a scripted
// model: the agent lists the files, reads one, proposes an edit; the user
// sees the proposal with its diff, accepts it; the new version is there,
// announced on the workflow's stream, and the old one is restorable.
func TestAgentProposesUserAccepts(t *testing.T) {
	s := newStack(t)
	const original = "# Handbook\n\nVacation: 20 days.\nSick leave: as needed.\n"
	f := s.upload(t, s.p, s.ws, "handbook.md", original)

	s.w.Server.SetDefault(llmtest.EndpointChat, llmtest.Decide(func(r llmtest.ChatRequest) llmtest.Step {
		res := toolResults(r)
		switch len(res) {
		case 0:
			return llmtest.CallTools(llmtest.Call("listFiles", `{"name":"*.md"}`))
		case 1:
			if !strings.Contains(res[0], "handbook.md (file "+f.ID) {
				return llmtest.Reply("listFiles did not show the handbook: " + res[0])
			}
			return llmtest.CallTools(llmtest.Call("readFile", `{"file":"`+f.ID+`"}`))
		case 2:
			args, _ := json.Marshal(map[string]any{"file": f.ID, "description": "25 days from 2027",
				"edits": []map[string]string{{"old": "Vacation: 20 days.", "new": "Vacation: 25 days."}}})
			return llmtest.CallTools(llmtest.Call("applyFileEdit", string(args)))
		}
		return llmtest.Reply("I proposed the change; accept it to apply.")
	}))

	var started workflows.Workflow
	if code, raw := s.do(t, s.token, "POST", "/workspaces/"+s.ws+"/workflows", map[string]any{"prompt": "Raise the vacation to 25 days in @handbook.md"}, &started); code != http.StatusAccepted {
		t.Fatalf("start: %d %s", code, raw)
	}
	var wf workflows.Workflow
	for deadline := time.Now().Add(2 * time.Minute); ; time.Sleep(25 * time.Millisecond) {
		s.do(t, s.token, "GET", "/workflows/"+started.ID, nil, &wf)
		if wf.Status != workflows.StatusRunning || time.Now().After(deadline) {
			break
		}
	}
	if wf.Status != workflows.StatusCompleted {
		t.Fatalf("workflow %s", wf.Status)
	}
	s.flow = wf.ID
	// The prompt's @reference reached the model as the file it names.
	if reqs := s.w.Server.ChatRequests(); len(reqs) == 0 || !strings.Contains(reqs[0].LastUser(), "@handbook.md: file handbook.md (file id "+f.ID) {
		t.Fatalf("the model was not told what @handbook.md is: %+v", reqs)
	}
	props := events[workflows.FileEditProposalData](t, s.env, workflows.EventFileEditProposal)
	if len(props) != 1 || props[0].FileID != f.ID || !strings.Contains(props[0].Diff, "-Vacation: 20 days.\n+Vacation: 25 days.") {
		t.Fatalf("fileEditProposal events: %+v", props)
	}
	pid := props[0].ProposalID

	// The user sees it; the file is unchanged until a decision.
	var x filemeta.Proposal
	if code, raw := s.do(t, s.token, "GET", "/proposals/"+pid, nil, &x); code != 200 || x.Status != filemeta.ProposalPending || x.Diff != props[0].Diff ||
		x.WorkflowID != wf.ID {
		t.Fatalf("proposal: %d %s", code, raw)
	}
	if it, _ := s.current(t, f.ID); it.Version != 1 {
		t.Fatalf("changed before the decision: %+v", it)
	}
	// A colleague who may read the file may not decide for its owner.
	if code, raw := s.do(t, s.bobToken, "POST", "/proposals/"+pid+"/accept", nil, nil); code != http.StatusForbidden {
		t.Fatalf("bob accepts: %d %s", code, raw)
	}

	var d files.Decided
	if code, raw := s.do(t, s.token, "POST", "/proposals/"+pid+"/accept", nil, &d); code != 200 || d.File.Version != 2 ||
		d.Proposal.Status != filemeta.ProposalAccepted {
		t.Fatalf("accept: %d %s", code, raw)
	}
	if code, _ := s.do(t, s.token, "POST", "/proposals/"+pid+"/accept", nil, nil); code != http.StatusConflict {
		t.Fatalf("accepted twice: %d", code)
	}
	if code, _ := s.do(t, s.token, "POST", "/proposals/"+pid+"/reject", nil, nil); code != http.StatusConflict {
		t.Fatalf("rejected after accepting: %d", code)
	}
	_, now := s.do(t, s.token, "GET", "/files/"+f.ID+"/content", nil, nil)
	if string(now) != strings.Replace(original, "20 days", "25 days", 1) {
		t.Fatalf("content after accept: %q", now)
	}
	vers := events[workflows.FileVersionData](t, s.env, workflows.EventFileVersion)
	if len(vers) != 1 || vers[0].ProposalID != pid || vers[0].Version != 2 || vers[0].SHA256 != d.File.SHA256 {
		t.Fatalf("fileVersion events: %+v", vers)
	}

	// The old version is kept and restorable.
	var list []filemeta.Version
	if code, raw := s.do(t, s.token, "GET", "/files/"+f.ID+"/versions", nil, &list); code != 200 || len(list) != 2 || list[1].Version != 1 {
		t.Fatalf("versions: %d %s", code, raw)
	}
	if _, old := s.do(t, s.token, "GET", "/files/"+f.ID+"/versions/1/content", nil, nil); string(old) != original {
		t.Fatalf("version 1: %q", old)
	}
	var restored struct {
		File    filemeta.Item    `json:"file"`
		Version filemeta.Version `json:"version"`
	}
	if code, raw := s.do(t, s.token, "POST", "/files/"+f.ID+"/versions/1/restore", nil, &restored); code != http.StatusCreated ||
		restored.File.Version != 3 || restored.Version.Note != "restore of version 1" {
		t.Fatalf("restore: %d %s", code, raw)
	}
	if _, back := s.do(t, s.token, "GET", "/files/"+f.ID+"/content", nil, nil); string(back) != original {
		t.Fatalf("restored content: %q", back)
	}
	for _, c := range []struct {
		token, method, path string
		want                int
	}{
		{s.token, "POST", "/files/" + f.ID + "/versions/0/restore", http.StatusBadRequest},
		{s.token, "POST", "/files/" + f.ID + "/versions/x/restore", http.StatusBadRequest},
		{s.token, "POST", "/files/" + f.ID + "/versions/9/restore", http.StatusNotFound},
		{s.bobToken, "POST", "/files/" + f.ID + "/versions/2/restore", http.StatusForbidden},
		{s.token, "POST", "/proposals/nope/accept", http.StatusNotFound},
	} {
		if code, raw := s.do(t, c.token, c.method, c.path, nil, nil); code != c.want {
			t.Errorf("%s %s: %d %s, want %d", c.method, c.path, code, raw, c.want)
		}
	}
}
