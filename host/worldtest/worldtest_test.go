package worldtest_test

import (
	"context"
	"slices"
	"testing"

	"github.com/agenthost/agenthost/host/llm"
	"github.com/agenthost/agenthost/host/llm/llmtest"
	"github.com/agenthost/agenthost/host/llm/modeluse"
	"github.com/agenthost/agenthost/host/worldtest"
)

// TestNew checks what each option builds against the store: the user's
// workspaces (by name, in order), the started workflow, and a model client
// whose calls reach the scripted server and are metered into the store.
func TestNew(t *testing.T) {
	summary := map[modeluse.Operation][]llm.ModelConfig{modeluse.OpSummary: {{Model: "small-model", InputCHFPer1M: 1000, OutputCHFPer1M: 2000}}}
	for _, tc := range []struct {
		name       string
		o          worldtest.Options
		workspaces []string
		workflow   bool
	}{
		{name: "defaults", o: worldtest.Options{}, workspaces: []string{"w"}},
		{name: "two workspaces and a workflow", o: worldtest.Options{Workspaces: []string{"w1", "w2"}, Workflow: "report"}, workspaces: []string{"w1", "w2"}, workflow: true},
		{name: "model", o: worldtest.Options{Workflow: "w", Model: &worldtest.Model{Models: summary, Server: []llmtest.Option{llmtest.WithDefault(llmtest.Reply("ok"))}}}, workspaces: []string{"w"}, workflow: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			w := worldtest.New(t, tc.o)
			if w.P.TenantID != w.Tenant.ID || w.P.UserID != w.User.ID || w.P.Admin {
				t.Fatalf("principal %+v for tenant %s, user %s", w.P, w.Tenant.ID, w.User.ID)
			}
			wss, err := w.DB.Workspaces(ctx, w.P)
			if err != nil {
				t.Fatal(err)
			}
			var names, ids []string
			for _, ws := range wss {
				names = append(names, ws.Name)
				ids = append(ids, ws.ID)
			}
			slices.Sort(names)
			if !slices.Equal(names, tc.workspaces) || len(w.Workspaces) != len(ids) || w.Workspace != w.Workspaces[0] {
				t.Fatalf("the user's workspaces %v (%v), want %v; world: %v", names, ids, tc.workspaces, w.Workspaces)
			}
			for _, id := range w.Workspaces {
				if !slices.Contains(ids, id) {
					t.Fatalf("workspace %s is not the user's (%v)", id, ids)
				}
			}
			if !tc.workflow {
				if w.Workflow != "" {
					t.Fatalf("workflow %q started unasked", w.Workflow)
				}
			} else {
				wf, err := w.Workflows.Get(ctx, w.P, w.Workflow)
				if err != nil {
					t.Fatal(err)
				}
				if wf.WorkspaceID != w.Workspace || wf.Name != tc.o.Workflow {
					t.Fatalf("workflow %+v, want %q in %s", wf, tc.o.Workflow, w.Workspace)
				}
			}
			if tc.o.Model == nil {
				if w.Server != nil || w.Client != nil {
					t.Fatal("a model was built unasked")
				}
				return
			}
			actx := llm.WithAttribution(ctx, llm.Attribution{TenantID: w.P.TenantID, WorkspaceID: w.Workspace, UserID: w.P.UserID, WorkflowID: w.Workflow, Purpose: "test"})
			res, err := w.Client.Chat(actx, llm.ChatRequest{Operation: modeluse.OpSummary, Messages: []llm.Message{{Role: "user", Content: "hello"}}}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if res.Message.Content != "ok" || len(w.Server.ChatRequests()) != 1 || w.Server.ChatRequests()[0].Model != "small-model" {
				t.Fatalf("reply %q, requests %+v", res.Message.Content, w.Server.ChatRequests())
			}
			var n int
			var cost float64
			if err := w.DB.SQL().QueryRowContext(ctx, `SELECT COUNT(*), COALESCE(SUM(cost_nchf), 0) / 1000000000.0 FROM usage_records WHERE workflow_id = ?`, w.Workflow).Scan(&n, &cost); err != nil {
				t.Fatal(err)
			}
			if n != 1 || cost <= 0 {
				t.Fatalf("%d usage records costing CHF %g, want 1 priced", n, cost)
			}
		})
	}
}

// TestNewModelNeedsModels: a Model without models is a mistake of the
// test that asks for it, reported as such.
func TestNewModelNeedsModels(t *testing.T) {
	db, _ := worldtest.Store(t)
	ft := &fatalTB{TB: t}
	func() {
		defer func() { _ = recover() }()
		worldtest.NewModel(ft, db, worldtest.Model{})
	}()
	if !ft.failed {
		t.Fatal("NewModel without models did not fail the test")
	}
}

// fatalTB records a Fatal instead of ending the test (it panics to stop
// the caller, as Fatal's Goexit would).
type fatalTB struct {
	testing.TB
	failed bool
}

func (f *fatalTB) Fatal(args ...any) { f.failed = true; panic("fatal") }
