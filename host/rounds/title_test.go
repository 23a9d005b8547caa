package rounds_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/agenthost/agenthost/host/agent"
	"github.com/agenthost/agenthost/host/llm"
	"github.com/agenthost/agenthost/host/llm/llmtest"
	"github.com/agenthost/agenthost/host/llm/modeluse"
	"github.com/agenthost/agenthost/host/money"
	"github.com/agenthost/agenthost/host/rounds"
	"github.com/agenthost/agenthost/host/store"
	"github.com/agenthost/agenthost/host/tools"
	"github.com/agenthost/agenthost/host/wasm/wasmtest"
	"github.com/agenthost/agenthost/host/workflows"
	"github.com/agenthost/agenthost/host/worldtest"
)

// TestConversationTitle: with a title chain, a new conversation is named
// after its first exchange by one call of the title model (reading the
// prompt and the answer), billed as purpose "title" and counted in the
// workflow's cost, announced by a `renamed` event after `complete`; later
// rounds make no title call. A person's rename made before the title
// arrives wins; a failing title model leaves the prompt's start and the
// round completed. Without a title chain of its own the agent's model
// names it (the client's fallback); with titles off no call is made.
func TestConversationTitle(t *testing.T) {
	const prompt = "Please summarise the travel rules of our 2027 budget for the Zürich team and list what needs approval"
	startName := "Please summarise the travel rules of our 2027 budget for the…" // the first 60 characters
	cases := []struct {
		name      string
		titled    bool                                                    // a title chain is configured
		off       bool                                                    // titles are off (no WithTitles)
		title     func(*testing.T, *worldtest.World, string) llmtest.Step // the title model's answer (wf id known by then)
		wantName  string
		wantCalls int
	}{
		{name: "titled", titled: true, title: func(*testing.T, *worldtest.World, string) llmtest.Step {
			return llmtest.Reply("Title: \"Travel rules of the 2027 budget.\"\n")
		}, wantName: "Travel rules of the 2027 budget", wantCalls: 1},
		{name: "renamed by the person first", titled: true, title: func(t *testing.T, w *worldtest.World, id string) llmtest.Step {
			mine := "My travel questions"
			if _, err := w.Workflows.Update(context.Background(), w.P, id, workflows.Update{Name: &mine}); err != nil {
				t.Error(err)
			}
			return llmtest.Reply("Travel rules of the 2027 budget")
		}, wantName: "My travel questions", wantCalls: 1},
		{name: "title model fails", titled: true, title: func(*testing.T, *worldtest.World, string) llmtest.Step {
			return llmtest.Fail(500, "internal error")
		}, wantName: startName, wantCalls: 1},
		{name: "no title chain", title: func(*testing.T, *worldtest.World, string) llmtest.Step {
			return llmtest.Reply("Budget travel rules")
		}, wantName: "Budget travel rules", wantCalls: 1},
		{name: "titles off", off: true, wantName: startName},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ctx := context.Background()
			models := map[modeluse.Operation][]llm.ModelConfig{
				modeluse.OpAgent: {{Model: "scripted", InputCHFPer1M: 1, OutputCHFPer1M: 2}},
			}
			if c.titled {
				models[modeluse.OpTitle] = []llm.ModelConfig{{Model: "namer", InputCHFPer1M: 100, OutputCHFPer1M: 400}}
			}
			var world *worldtest.World
			var wfID string
			world = worldtest.New(t, worldtest.Options{Model: &worldtest.Model{
				Models: models,
				Server: []llmtest.Option{llmtest.WithDefault(llmtest.Decide(func(r llmtest.ChatRequest) llmtest.Step {
					if isTitleRequest(r) {
						return c.title(t, world, wfID)
					}
					return llmtest.Reply("Travel is approved by the team lead; flights over CHF 800 need the CFO.")
				}))},
				Retry: llm.RetryConfig{Attempts: 1},
			}})
			db, p, ws, srv, client, wf, fileSvc := world.DB, world.P, world.Workspace, world.Server, world.Client, world.Workflows, world.Files
			h := wasmtest.HostWith(t, nil)
			svc := rounds.New(wf, fileSvc, agent.New(client, agent.Config{}, nil), tools.NewRegistry(h, nil), db, rounds.Config{}, nil)
			if !c.off {
				svc.WithTitles(client)
			}
			defer svc.Close()

			// The title model is asked from the round's goroutine, after
			// Start returned: wfID is set before any model call is made,
			// since the round's agent call comes first.
			w, err := svc.Start(ctx, p, ws, rounds.StartRequest{Prompt: prompt})
			if err != nil {
				t.Fatal(err)
			}
			wfID = w.ID
			svc.Wait()
			if w, err = wf.Get(ctx, p, w.ID); err != nil {
				t.Fatal(err)
			}
			if w.Status != workflows.StatusCompleted || w.Name != c.wantName {
				t.Fatalf("status %s, name %q; want completed, %q", w.Status, w.Name, c.wantName)
			}
			calls := titleRequests(t, srv, prompt)
			if calls != c.wantCalls {
				t.Fatalf("%d title calls, want %d", calls, c.wantCalls)
			}
			evs, err := wf.Events(ctx, p, w.ID, 0, 1000)
			if err != nil {
				t.Fatal(err)
			}
			renamed, afterComplete := "", false
			for i, ev := range evs {
				if ev.Type == workflows.EventRenamed {
					var d workflows.RenamedData
					if err := json.Unmarshal(ev.Data, &d); err != nil {
						t.Fatal(err)
					}
					renamed, afterComplete = d.Name, i > 0 && evs[i-1].Type == workflows.EventComplete
				}
			}
			if want := c.wantName != startName && c.name != "renamed by the person first"; (renamed != "") != want || (want && (renamed != c.wantName || !afterComplete)) {
				t.Fatalf("renamed event %q (right after complete: %v); want one: %v", renamed, afterComplete, want)
			}

			// What the title cost is billed to the workflow and in its figures.
			// (A refused call is not billed.)
			billed := c.wantCalls
			if c.name == "title model fails" {
				billed = 0
			}
			n, cost := usageOf(t, db, w.ID, "title")
			if n != billed || (billed > 0) != (cost > 0) {
				t.Fatalf("%d title usage records costing CHF %v; want %d", n, cost, billed)
			}
			_, total := usageOf(t, db, w.ID, "")
			if got := w.Stats.CostCHF; got != money.FromCHF(total) {
				t.Fatalf("workflow cost %s, usage records CHF %v", got, total)
			}

			// A second round makes no title call and keeps the name.
			if _, err := svc.Start(ctx, p, ws, rounds.StartRequest{WorkflowID: w.ID, Prompt: "And for trains?"}); err != nil {
				t.Fatal(err)
			}
			svc.Wait()
			if got := titleRequests(t, srv, prompt); got != c.wantCalls {
				t.Fatalf("%d title calls after the second round, want %d", got, c.wantCalls)
			}
			if w, err = wf.Get(ctx, p, w.ID); err != nil || w.Name != c.wantName {
				t.Fatalf("name after the second round %q (%v), want %q", w.Name, err, c.wantName)
			}
		})
	}
}

// titleRequests counts the title model's requests and checks each reads
// the first prompt and the first answer.
func titleRequests(t *testing.T, srv *llmtest.Server, prompt string) int {
	t.Helper()
	n := 0
	for _, r := range srv.ChatRequests() {
		if !isTitleRequest(r) {
			continue
		}
		n++
		last := r.Messages[len(r.Messages)-1].Content
		if !strings.Contains(last, prompt) || !strings.Contains(last, "flights over CHF 800") || len(r.Tools) > 0 {
			t.Fatalf("the title request reads %q with %d tools", last, len(r.Tools))
		}
	}
	return n
}

// usageOf sums a workflow's usage records of a purpose ("" for all).
func usageOf(t *testing.T, db *store.DB, workflowID, purpose string) (int, float64) {
	t.Helper()
	var n int
	var cost float64
	if err := db.SQL().QueryRowContext(context.Background(), `SELECT COUNT(*), COALESCE(SUM(cost_nchf), 0) / 1000000000.0 FROM usage_records
		WHERE workflow_id = ? AND (? = '' OR purpose = ?)`, workflowID, purpose, purpose).Scan(&n, &cost); err != nil {
		t.Fatal(err)
	}
	return n, cost
}

// isTitleRequest: the round's title call, told apart from the agent's by
// its instruction (the agent's model answers it when no title chain is
// configured).
func isTitleRequest(r llmtest.ChatRequest) bool {
	return r.Model == "namer" || (len(r.Messages) > 0 && strings.Contains(r.Messages[0].Content, "Write a short title"))
}
