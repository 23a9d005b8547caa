//go:build !wasip1

package main

import (
	"context"
	"encoding/json"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/agenthost/agenthost/host/agent"
	"github.com/agenthost/agenthost/host/llm/llmtest"
	"github.com/agenthost/agenthost/host/rounds"
	"github.com/agenthost/agenthost/host/tools"
	"github.com/agenthost/agenthost/host/workflows"
)

var docItemRe = regexp.MustCompile(`docItem:[0-9a-f-]+`)

// TestAgentRoundBridge is the file bridge's chain in a real workflow round: the
// agent calls generateDocument, whose file the bridge binds to the
// workflow; the agent hands the docItem reference from the tool's result to
// summarizeContent, which reads the file through it and asks the model.
func TestAgentRoundBridge(t *testing.T) {
	e := newEnv(t, "docgen", "analysis")
	e.srv.SetDefault(llmtest.EndpointChat, llmtest.Decide(func(r llmtest.ChatRequest) llmtest.Step {
		if len(r.Tools) == 0 {
			// The analysis plugin's one direct call.
			if strings.Contains(r.LastUser(), "Revenue grew by twelve percent") {
				return llmtest.Reply("The memo reports twelve percent revenue growth.")
			}
			return llmtest.Reply("the document was not in the request")
		}
		var toolMsgs []string
		for _, m := range r.Messages {
			if m.Role == "tool" {
				toolMsgs = append(toolMsgs, m.Content)
			}
		}
		switch len(toolMsgs) {
		case 0:
			args, _ := json.Marshal(GenerateArgs{Format: "markdown", Title: "Memo", Blocks: []Block{{Type: "paragraph", Text: "Revenue grew by twelve percent."}}})
			return llmtest.CallTools(llmtest.Call("generateDocument", string(args)))
		case 1:
			ref := docItemRe.FindString(toolMsgs[0])
			return llmtest.CallTools(llmtest.Call("summarizeContent", `{"documents":["`+ref+`"],"length":"short"}`))
		}
		return llmtest.Reply("Done: " + toolMsgs[1])
	}))
	ag := agent.New(e.client, agent.Config{MaxRounds: 5}, nil)
	runner := rounds.New(e.wf, e.svc, ag, tools.NewRegistry(e.host, nil), e.db, rounds.Config{}, nil)
	t.Cleanup(runner.Close)
	w, err := runner.Start(context.Background(), e.p, e.ws, rounds.StartRequest{Prompt: "Write a memo and summarise it."})
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(2 * time.Minute)
	for {
		w, err = e.wf.Get(context.Background(), e.p, w.ID)
		if err != nil {
			t.Fatal(err)
		}
		if w.Status != workflows.StatusRunning || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if w.Status != workflows.StatusCompleted {
		t.Fatalf("workflow %s", w.Status)
	}
	evs, err := e.wf.Events(context.Background(), e.p, w.ID, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	var created []workflows.FileCreatedData
	var results []string
	for _, ev := range evs {
		switch ev.Type {
		case workflows.EventFileCreated:
			var d workflows.FileCreatedData
			_ = json.Unmarshal(ev.Data, &d)
			created = append(created, d)
		case workflows.EventToolResult:
			results = append(results, string(ev.Data))
		}
	}
	if len(created) != 1 || created[0].Name != "Memo.md" || created[0].Tool != "generateDocument" {
		t.Fatalf("fileCreated events %+v", created)
	}
	if len(results) != 2 || !strings.Contains(results[0], "docItem:"+created[0].DocumentID) || !strings.Contains(results[1], "twelve percent revenue growth") {
		t.Fatalf("tool results %q", results)
	}
	msgs, err := e.wf.Messages(context.Background(), e.p, w.ID, workflows.After{}, 0)
	if err != nil {
		t.Fatal(err)
	}
	last := msgs[len(msgs)-1]
	if last.Status != workflows.MessageLast || !strings.Contains(last.Content, "twelve percent revenue growth") {
		t.Fatalf("answer %+v", last)
	}
	// The tool's model call is billed to the round's user and workflow.
	var n int
	if err := e.db.SQL().QueryRow(`SELECT COUNT(*) FROM usage_records WHERE workflow_id = ? AND purpose = 'tool:summarizeContent/direct'`, w.ID).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 1 {
		t.Fatalf("%d usage records of the tool's model call", n)
	}
}
