package api_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/agenthost/agenthost/host/llm/llmtest"
)

type jobJSON struct {
	ID            string  `json:"id"`
	Status        string  `json:"status"`
	ResultSummary string  `json:"resultSummary"`
	MaxCostCHF    *string `json:"maxCostCHF"`
	WorkflowID    string  `json:"workflowId"`
	Error         string  `json:"error"`
}

// TestBackgroundOverHTTP: a user starts a background job from a workflow;
// it runs to its summary, which the workflow's event stream announces; the
// job is listed for its owner and invisible to another member; refusals
// answer 400.
func TestBackgroundOverHTTP(t *testing.T) {
	ts := server(t)
	ts.model.Script(llmtest.Reply("Hello."))
	origin := startWorkflow(t, ts, ts.alice, `{"prompt":"hello"}`)
	readEvents(t, ts, origin.ID, 0, terminal)

	ts.model.Script(llmtest.CallTools(llmtest.Call("lookup", lookup("alpha", 0))), llmtest.Reply("Report ready."))
	var j jobJSON
	status, _, raw := do(t, ts.base, call{"POST", "/workspaces/" + ts.wsA + "/background", ts.alice, "application/json",
		strings.NewReader(`{"description":"Write the report","subtasks":["gather","write"],"maxCostCHF":"0.75","originWorkflowId":"` + origin.ID + `"}`)})
	if status != 202 {
		t.Fatalf("start: %d %s", status, raw)
	}
	mustJSON(t, raw, &j)
	if j.Status != "queued" || j.MaxCostCHF == nil || *j.MaxCostCHF != "0.75" {
		t.Fatalf("started %s", raw)
	}
	// The origin's stream announces the end.
	evs := readEvents(t, ts, origin.ID, 0, func(e sseEvent) bool { return e.Type == "backgroundJob" })
	if last := evs[len(evs)-1]; !strings.Contains(last.Data, `"status":"completed"`) || !strings.Contains(last.Data, "Report ready.") {
		t.Fatalf("backgroundJob event %s", last.Data)
	}
	getJSON(t, ts, "/background/"+j.ID, &j)
	if j.Status != "completed" || j.ResultSummary != "Report ready." || j.WorkflowID == "" {
		t.Fatalf("job %+v", j)
	}
	var list []jobJSON
	getJSON(t, ts, "/background", &list)
	if len(list) != 1 || list[0].ID != j.ID {
		t.Fatalf("list %+v", list)
	}
	if status, _, _ := do(t, ts.base, call{"GET", "/background/" + j.ID, ts.bob, "", nil}); status != 404 {
		t.Fatalf("bob reading alice's job: %d", status)
	}
	if status, _, _ := do(t, ts.base, call{"POST", "/background/" + j.ID + "/cancel", ts.alice, "", nil}); status != 409 {
		t.Fatalf("cancelling an ended job: %d, want 409", status)
	}
	for _, body := range []string{`{}`, `{"description":"x","maxCostCHF":"lots"}`, `{"description":"x","subtasks":[""]}`} {
		if status, _, raw := do(t, ts.base, call{"POST", "/workspaces/" + ts.wsA + "/background", ts.alice, "application/json", strings.NewReader(body)}); status != 400 {
			t.Errorf("start %s: %d %s, want 400", body, status, raw)
		}
	}
	if status, _, _ := do(t, ts.base, call{"POST", "/workspaces/" + ts.wsA + "/background", ts.victor, "application/json",
		strings.NewReader(`{"description":"viewers only read"}`)}); status != 403 {
		t.Fatalf("a viewer starting a job: %d, want 403", status)
	}
}

func mustJSON(t *testing.T, raw []byte, v any) {
	t.Helper()
	if err := json.Unmarshal(raw, v); err != nil {
		t.Fatalf("%v: %s", err, raw)
	}
}
