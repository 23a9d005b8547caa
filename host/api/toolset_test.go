package api_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
)

// TestBadToolSetIsNotAServerFault: a workspace whose stored tool set this
// server does not define answers a problem that says so (409), never 500,
// on every route that resolves the set.
func TestBadToolSetIsNotAServerFault(t *testing.T) {
	ts := server(t)
	if err := ts.db.SetWorkspaceTools(context.Background(), ts.wsA, "bogus", nil); err != nil {
		t.Fatal(err)
	}
	for _, c := range []call{
		{"GET", "/workspaces/" + ts.wsA + "/tools", ts.alice, "", nil},
		{"POST", "/workspaces/" + ts.wsA + "/tools/echo", ts.alice, "application/json", strings.NewReader(`{}`)},
		{"POST", "/workspaces/" + ts.wsA + "/workflows", ts.alice, "application/json", strings.NewReader(`{"prompt":"hi"}`)},
	} {
		status, _, raw := do(t, ts.base, c)
		if status != 409 || !strings.Contains(string(raw), `unknown tool set \"bogus\"`) {
			t.Errorf("%s %s: %d %s", c.method, c.path, status, raw)
		}
	}
}

// A viewer is offered the workspace's read-only tools only: the writing
// ones a call would refuse are not in its list.
func TestViewerIsOfferedReadOnlyTools(t *testing.T) {
	ts := server(t)
	list := func(token string) map[string]bool {
		t.Helper()
		var tools []struct {
			Name     string `json:"name"`
			ReadOnly bool   `json:"readOnly"`
		}
		status, _, raw := do(t, ts.base, call{"GET", "/workspaces/" + ts.wsA + "/tools", token, "", nil})
		if status != 200 {
			t.Fatalf("%d %s", status, raw)
		}
		if err := json.Unmarshal(raw, &tools); err != nil {
			t.Fatal(err)
		}
		m := map[string]bool{}
		for _, tl := range tools {
			m[tl.Name] = tl.ReadOnly
		}
		return m
	}
	all, viewer := list(ts.alice), list(ts.victor)
	writing := 0
	for name, ro := range all {
		if !ro {
			writing++
			if _, ok := viewer[name]; ok {
				t.Errorf("the viewer is offered the writing tool %s", name)
			}
		} else if _, ok := viewer[name]; !ok {
			t.Errorf("the viewer is not offered the read-only tool %s", name)
		}
	}
	if writing == 0 {
		t.Fatal("the fixture's set has no writing tool: the test proves nothing")
	}
}
