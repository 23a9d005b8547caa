package api_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/agenthost/agenthost/host/agenttrace"
	"github.com/agenthost/agenthost/host/llm"
	"github.com/agenthost/agenthost/host/llm/llmtest"
	"github.com/agenthost/agenthost/host/rounds"
	"github.com/agenthost/agenthost/host/tenancy"
)

// manager adds a manager of workspace A and returns their token.
func manager(t *testing.T, ts testServer) string {
	t.Helper()
	ctx := context.Background()
	var tenant string
	if err := ts.db.SQL().QueryRowContext(ctx, `SELECT tenant_id FROM workspaces WHERE id = ?`, ts.wsA).Scan(&tenant); err != nil {
		t.Fatal(err)
	}
	u, err := ts.db.CreateUser(ctx, tenancy.User{TenantID: tenant, Email: "mia@acme"})
	if err != nil {
		t.Fatal(err)
	}
	if err := ts.db.SetMembership(ctx, tenancy.Membership{WorkspaceID: ts.wsA, UserID: u.ID, Role: tenancy.RoleManager}); err != nil {
		t.Fatal(err)
	}
	_, tok, err := ts.db.CreateToken(ctx, u.ID, "test", nil)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

func threeModels(o *serverOptions) {
	o.model = llm.ModelConfig{Model: "scripted", InputCHFPer1M: 2.5, OutputCHFPer1M: 10}
	o.more = []llm.ModelConfig{
		{Provider: "test", Model: "cheap", InputCHFPer1M: 0.1, OutputCHFPer1M: 0.4},
		{Provider: "test", Model: "vision", Images: true, ContextWindow: 128000, InputCHFPer1M: 2, OutputCHFPer1M: 8},
	}
}

// TestModelChoiceAPI: the workspace's models are listed with their prices;
// its manager narrows them, members may not; a conversation started with a
// model is answered by that model (the scripted server is asked for it),
// keeps it for its next round, changes it, and is refused one the
// workspace does not allow.
func TestModelChoiceAPI(t *testing.T) {
	ts := server(t, threeModels)
	mia := manager(t, ts)
	models := "/workspaces/" + ts.wsA + "/models"
	jsonCall := func(method, path, token, body string) call {
		return call{method, path, token, "application/json", strings.NewReader(body)}
	}
	for _, c := range []struct {
		name    string
		c       call
		status  int
		allowed []string
	}{
		{"a member lists", call{"GET", models, ts.alice, "", nil}, 200, []string{"test/scripted", "test/cheap", "test/vision"}},
		{"an outsider", call{"GET", models, ts.carol, "", nil}, 404, nil},
		{"a member may not narrow", jsonCall("PUT", models, ts.alice, `{"allowed":["test/cheap"]}`), 403, nil},
		{"a model not configured", jsonCall("PUT", models, mia, `{"allowed":["test/gpt-9"]}`), 400, nil},
		{"an unknown field", jsonCall("PUT", models, mia, `{"models":["test/cheap"]}`), 400, nil},
		{"the manager narrows", jsonCall("PUT", models, mia, `{"allowed":["test/scripted","test/cheap"]}`), 200, []string{"test/scripted", "test/cheap"}},
		{"a member sees the narrowed list", call{"GET", models, ts.alice, "", nil}, 200, []string{"test/scripted", "test/cheap"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			status, _, raw := do(t, ts.base, c.c)
			if status != c.status {
				t.Fatalf("status %d, want %d: %s", status, c.status, raw)
			}
			if status != 200 {
				return
			}
			var got rounds.WorkspaceModels
			if err := json.Unmarshal(raw, &got); err != nil {
				t.Fatal(err)
			}
			var ids []string
			for _, m := range got.Allowed {
				ids = append(ids, m.ID)
			}
			if !slices.Equal(ids, c.allowed) || len(got.Configured) != 3 {
				t.Fatalf("allowed %v, want %v; configured %d", ids, c.allowed, len(got.Configured))
			}
			if cheap := got.Allowed[1]; cheap.InputCHFPer1M != "0.10" || cheap.OutputCHFPer1M != "0.40" || cheap.Default || !got.Allowed[0].Default {
				t.Fatalf("prices or default: %+v", got.Allowed)
			}
		})
	}

	// Refused before a workflow exists: a model the workspace does not allow.
	if status, _, raw := do(t, ts.base, jsonCall("POST", "/workspaces/"+ts.wsA+"/workflows", ts.alice, `{"prompt":"hi","model":"test/vision"}`)); status != 400 {
		t.Fatalf("a disallowed model: %d %s", status, raw)
	}
	ts.model.Script(llmtest.Reply("cheaply"), llmtest.Reply("again"), llmtest.Reply("dearly"))
	w := startWorkflow(t, ts, ts.alice, `{"prompt":"hi","model":"test/cheap"}`)
	if _, end := waitDone(t, ts, w.ID); !strings.Contains(end, `"completed"`) {
		t.Fatalf("round ended %s", end)
	}
	status, _, raw := do(t, ts.base, call{"GET", "/workflows/" + w.ID + "/model", ts.alice, "", nil})
	if status != 200 || !strings.Contains(string(raw), `"test/cheap"`) {
		t.Fatalf("kept model: %d %s", status, raw)
	}
	// The next round keeps the choice without naming it.
	startWorkflow(t, ts, ts.alice, `{"prompt":"more","workflowId":"`+w.ID+`"}`)
	waitRounds(t, ts, w.ID, 2)
	for _, c := range []struct {
		name, token, body string
		status            int
	}{
		{"another person", ts.carol, `{"model":"test/scripted"}`, 404},
		{"not allowed here", ts.alice, `{"model":"test/vision"}`, 400},
		{"not configured", ts.alice, `{"model":"test/gpt-9"}`, 400},
		{"the owner", ts.alice, `{"model":"test/scripted"}`, 200},
	} {
		if status, _, raw := do(t, ts.base, jsonCall("PUT", "/workflows/"+w.ID+"/model", c.token, c.body)); status != c.status {
			t.Errorf("%s: %d %s, want %d", c.name, status, raw, c.status)
		}
	}
	startWorkflow(t, ts, ts.alice, `{"prompt":"once more","workflowId":"`+w.ID+`"}`)
	waitRounds(t, ts, w.ID, 3)
	var asked []string
	for _, r := range ts.model.ChatRequests() {
		asked = append(asked, r.Model)
	}
	if want := []string{"cheap", "cheap", "scripted"}; !slices.Equal(asked, want) {
		t.Errorf("the scripted server was asked for %v, want %v", asked, want)
	}
	// The trace shows each run's chosen model and the one that answered.
	var tr agenttrace.Trace
	getJSON(t, ts, "/workflows/"+w.ID+"/trace", &tr)
	var chosen []string
	for _, r := range tr.Runs {
		chosen = append(chosen, r.ChosenModel+" answered by "+r.Model)
	}
	if want := []string{"test/cheap answered by cheap", "test/cheap answered by cheap", "test/scripted answered by scripted"}; !slices.Equal(chosen, want) {
		t.Errorf("trace runs %q, want %q", chosen, want)
	}
	// The admin narrows the list under the conversation: its next round is
	// refused rather than quietly answered by another model.
	if status, _, raw := do(t, ts.base, jsonCall("PUT", models, mia, `{"allowed":["test/cheap"]}`)); status != 200 {
		t.Fatalf("narrow: %d %s", status, raw)
	}
	if status, _, raw := do(t, ts.base, jsonCall("POST", "/workspaces/"+ts.wsA+"/workflows", ts.alice, `{"prompt":"and now","workflowId":"`+w.ID+`"}`)); status != 400 {
		t.Fatalf("a round on a model no longer allowed: %d %s", status, raw)
	}
}

// waitRounds follows a workflow's events until its nth round has ended.
func waitRounds(t *testing.T, ts testServer, id string, n int) {
	t.Helper()
	seen := 0
	readEvents(t, ts, id, 0, func(e sseEvent) bool {
		if terminal(e) {
			seen++
		}
		return seen == n
	})
	if seen != n {
		t.Fatalf("workflow %s: %d rounds ended, want %d", id, seen, n)
	}
}
