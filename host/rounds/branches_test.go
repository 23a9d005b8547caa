package rounds_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/agenthost/agenthost/host/agent"
	"github.com/agenthost/agenthost/host/llm"
	"github.com/agenthost/agenthost/host/llm/llmtest"
	"github.com/agenthost/agenthost/host/llm/modeluse"
	"github.com/agenthost/agenthost/host/rounds"
	"github.com/agenthost/agenthost/host/tools"
	"github.com/agenthost/agenthost/host/wasm/wasmtest"
	"github.com/agenthost/agenthost/host/workflows"
	"github.com/agenthost/agenthost/host/worldtest"
)

// TestBranches: an edited prompt and a regenerated answer are new
// branches of the conversation, and each round's model sees only the
// branch above its prompt; selecting an older branch continues from it.
func TestBranches(t *testing.T) {
	ctx := context.Background()
	var mu sync.Mutex
	var seen []string // what each agent call saw: its user and assistant turns
	world := worldtest.New(t, worldtest.Options{Model: &worldtest.Model{
		Models: map[modeluse.Operation][]llm.ModelConfig{modeluse.OpAgent: {{Model: "scripted"}}},
		Server: []llmtest.Option{llmtest.WithDefault(llmtest.Decide(func(r llmtest.ChatRequest) llmtest.Step {
			var turns []string
			for _, m := range r.Messages {
				if m.Role == "user" || m.Role == "assistant" {
					turns = append(turns, strings.SplitN(m.Content, "\n", 2)[0])
				}
			}
			mu.Lock()
			seen = append(seen, strings.Join(turns, " | "))
			n := len(seen)
			mu.Unlock()
			return llmtest.Reply("re:" + turns[len(turns)-1] + "#" + string(rune('0'+n)))
		}))},
	}})
	p, ws, wf := world.P, world.Workspace, world.Workflows
	reg := tools.NewRegistry(wasmtest.Host(t, "notebook"), map[string][]string{tools.CoreSet: {"lookup"}})
	svc := rounds.New(wf, world.Files, agent.New(world.Client, agent.Config{}, nil), reg, world.DB, rounds.Config{}, nil)
	defer svc.Close()

	run := func(req rounds.StartRequest) workflows.Workflow {
		t.Helper()
		w, err := svc.Start(ctx, p, ws, req)
		if err != nil {
			t.Fatal(err)
		}
		svc.Wait()
		return w
	}
	shown := func(id string) string {
		t.Helper()
		w, tree, err := wf.Thread(ctx, p, id)
		if err != nil {
			t.Fatal(err)
		}
		var s []string
		for _, m := range tree.Path(w.Branch) {
			s = append(s, m.Content)
		}
		return strings.Join(s, " | ")
	}
	turnID := func(id, content string) string {
		t.Helper()
		msgs, err := wf.Messages(ctx, p, id, workflows.After{}, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range msgs {
			if m.Content == content {
				return m.ID
			}
		}
		t.Fatalf("no message %q", content)
		return ""
	}

	w := run(rounds.StartRequest{Prompt: "one"})
	run(rounds.StartRequest{WorkflowID: w.ID, Prompt: "two"})
	run(rounds.StartRequest{WorkflowID: w.ID, Prompt: "two bis", EditOf: turnID(w.ID, "two")})
	if got := shown(w.ID); got != "one | re:one#1 | two bis | re:two bis#3" {
		t.Fatalf("after the edit: %s", got)
	}
	if _, err := svc.Regenerate(ctx, p, w.ID, turnID(w.ID, "re:one#1"), ""); err != nil {
		t.Fatal(err)
	}
	svc.Wait()
	if got := shown(w.ID); got != "one | re:one#4" {
		t.Fatalf("after regenerating the first answer: %s", got)
	}
	if _, err := wf.SelectBranch(ctx, p, w.ID, turnID(w.ID, "two")); err != nil {
		t.Fatal(err)
	}
	run(rounds.StartRequest{WorkflowID: w.ID, Prompt: "three"})
	if got := shown(w.ID); got != "one | re:one#1 | two | re:two#2 | three | re:three#5" {
		t.Fatalf("continuing the older branch: %s", got)
	}
	run(rounds.StartRequest{WorkflowID: w.ID, Prompt: "one bis", EditOf: turnID(w.ID, "one")})
	if got := shown(w.ID); got != "one bis | re:one bis#6" {
		t.Fatalf("after editing the first prompt: %s", got)
	}
	want := []string{
		"one",
		"one | re:one#1 | two",
		"one | re:one#1 | two bis", // not the replaced prompt nor its answer
		"one",                      // the regenerated answer sees the prompt alone
		"one | re:one#1 | two | re:two#2 | three", // the selected branch, not the edit's
		"one bis", // an edit of the first prompt starts afresh
	}
	mu.Lock()
	defer mu.Unlock()
	if strings.Join(seen, "\n") != strings.Join(want, "\n") {
		t.Fatalf("the model saw\n%s\nwant\n%s", strings.Join(seen, "\n"), strings.Join(want, "\n"))
	}

	for _, c := range []struct {
		name string
		req  rounds.StartRequest
	}{
		{"editOf an answer", rounds.StartRequest{WorkflowID: w.ID, Prompt: "x", EditOf: turnID(w.ID, "re:two#2")}},
		{"editOf without a workflow", rounds.StartRequest{Prompt: "x", EditOf: turnID(w.ID, "two")}},
	} {
		if _, err := svc.Start(ctx, p, ws, c.req); err == nil {
			t.Errorf("%s: accepted", c.name)
		}
	}
}
