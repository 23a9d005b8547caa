package api_test

import (
	"context"
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
