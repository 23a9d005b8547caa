package api_test

import (
	"encoding/json"
	"net/url"
	"strings"
	"testing"

	"github.com/agenthost/agenthost/host/knowledge/kindex"
)

// TestWorkspaceRoutesScopeAndLimits: folder listing and search on a
// workspace the caller does not belong to answer 404 like every other
// workspace route; a search too long for a URL goes by POST; limits outside
// their range are refused with the range named.
func TestWorkspaceRoutesScopeAndLimits(t *testing.T) {
	ts := server(t)
	ws := "/workspaces/" + ts.wsA
	long := strings.Repeat("budget ", 2000) // 14 KB: past any server's URL limit
	cases := []struct {
		name   string
		c      call
		status int
		want   string
	}{
		{"folders of another workspace", call{"GET", ws + "/folders", ts.carol, "", nil}, 404, "workspace"},
		{"search of another workspace", call{"GET", ws + "/search?q=budget", ts.carol, "", nil}, 404, "workspace"},
		{"POST search of another workspace", call{"POST", ws + "/search", ts.carol, "application/json", strings.NewReader(`{"q":"budget"}`)}, 404, "workspace"},
		{"folders of an unknown workspace", call{"GET", "/workspaces/nope/folders", ts.alice, "", nil}, 404, "workspace"},
		{"own folders", call{"GET", ws + "/folders", ts.alice, "", nil}, 200, "["},
		{"own search", call{"GET", ws + "/search?q=budget", ts.alice, "", nil}, 200, "["},
		{"long search by POST", call{"POST", ws + "/search", ts.alice, "application/json", strings.NewReader(`{"q":"` + long + `","limit":5}`)}, 200, "["},
		{"POST search without q", call{"POST", ws + "/search", ts.alice, "application/json", strings.NewReader(`{"limit":5}`)}, 400, "q (the search text)"},
		{"POST search with an unknown field", call{"POST", ws + "/search", ts.alice, "application/json", strings.NewReader(`{"q":"x","lmit":5}`)}, 400, "lmit"},
		{"search limit 0", call{"GET", ws + "/search?q=budget&limit=0", ts.alice, "", nil}, 400, "outside 1..100"},
		{"search limit 100000", call{"GET", ws + "/search?q=budget&limit=100000", ts.alice, "", nil}, 400, "outside 1..100"},
		{"search hidden bogus", call{"GET", ws + "/search?q=budget&hidden=bogus", ts.alice, "", nil}, 400, "include, exclude or only"},
		{"search hidden exclude", call{"GET", ws + "/search?q=budget&hidden=exclude", ts.alice, "", nil}, 200, ""},
		{"POST search limit 0", call{"POST", ws + "/search", ts.alice, "application/json", strings.NewReader(`{"q":"x","limit":0}`)}, 400, "outside 1..100"},
		{"search limit 100", call{"GET", ws + "/search?q=budget&limit=100", ts.alice, "", nil}, 200, "["},
		{"files limit 0", call{"GET", "/files?limit=0", ts.alice, "", nil}, 400, "outside 1..1000"},
		{"files limit 100000", call{"GET", "/files?limit=100000", ts.alice, "", nil}, 400, "outside 1..1000"},
		{"files limit 1000", call{"GET", "/files?limit=1000", ts.alice, "", nil}, 200, "items"},
		{"workflows limit 0", call{"GET", "/workflows?limit=0", ts.alice, "", nil}, 400, "outside 1..1000"},
		{"workflows limit 100000", call{"GET", "/workflows?limit=100000", ts.alice, "", nil}, 400, "outside 1..1000"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			status, _, raw := do(t, ts.base, tc.c)
			if status != tc.status || !strings.Contains(string(raw), tc.want) {
				t.Fatalf("%d %s, want %d with %q", status, raw, tc.status, tc.want)
			}
		})
	}
	// The GET form of the long query overflows the server's limits: the
	// reason POST exists.
	if status, _, _ := do(t, ts.base, call{"GET", ws + "/search?q=" + url.QueryEscape(long), ts.alice, "", nil}); status < 400 {
		t.Fatalf("a 14 KB URL was accepted (%d): POST search is then not needed", status)
	}
	var hits []kindex.Hit
	_, _, raw := do(t, ts.base, call{"POST", ws + "/search", ts.alice, "application/json", strings.NewReader(`{"q":"budget"}`)})
	if err := json.Unmarshal(raw, &hits); err != nil {
		t.Fatalf("POST search answer: %s", raw)
	}
}
