package api_test

import (
	"context"
	"encoding/json"
	"net"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/agenthost/agenthost/host/connections/fakes/jira"
	"github.com/agenthost/agenthost/host/wasm"
)

type staticDNS map[string]string

func (d staticDNS) LookupIPAddr(_ context.Context, host string) ([]net.IPAddr, error) {
	if a, ok := d[host]; ok {
		return []net.IPAddr{{IP: net.ParseIP(a)}}, nil
	}
	return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
}

// TestDataSourcesAPI: alice makes a data source of a Jira project over her
// own connection, syncs it now (202), follows its sync status until the
// job has stored the attachment in the folder named after it; bob sees,
// syncs and deletes none of it; bad input is refused with nothing stored;
// once the connection is revoked the source says so and "sync now" is a
// clear 409; deleting it keeps the files.
func TestDataSourcesAPI(t *testing.T) {
	site := jira.New("alice@acme.example", "jira-api-token-1")
	t.Cleanup(site.Close)
	site.AddIssue("PROJ-1", "Port", "To Do", jira.Attachment{Filename: "spec.txt", MIMEType: "text/plain", Content: []byte("the spec")})
	u, _ := url.Parse(site.URL)
	ts := server(t, func(o *serverOptions) {
		o.connectors = &wasm.EgressOptions{AllowPrivateHosts: []string{"acme.atlassian.net:" + u.Port()}, Resolver: staticDNS{"acme.atlassian.net": "127.0.0.1"}}
	})
	body := `{"provider":"jira","label":"acme","auth":"basic","baseUrl":"http://acme.atlassian.net:` + u.Port() + `","account":"alice@acme.example","token":"jira-api-token-1"}`
	status, _, raw := do(t, ts.base, call{"POST", "/connections", ts.alice, "application/json", strings.NewReader(body)})
	if status != 201 {
		t.Fatalf("connection: %d %s", status, raw)
	}
	var conn struct{ ID string }
	_ = json.Unmarshal(raw, &conn)

	type dataSource struct {
		ID, SyncState, LastSummary, LastError, FolderID string
		LastSynced                                      *time.Time
		ConnectionRevoked                               bool
		IntervalSeconds                                 int64
	}
	ds := `{"workspaceId":"` + ts.wsA + `","connectionId":"` + conn.ID + `","service":"issues","path":"PROJ","label":"Jira PROJ","sourceType":"jiraProject","autoSync":true,"intervalSeconds":3600}`
	// Bad input first: nothing is stored.
	for name, tc := range map[string]struct {
		token, body string
		want        int
	}{
		"unknown field":    {ts.alice, `{"workspaceId":"` + ts.wsA + `","connectionId":"` + conn.ID + `","service":"issues","label":"x","password":"p"}`, 400},
		"no connector":     {ts.alice, `{"workspaceId":"` + ts.wsA + `","connectionId":"` + conn.ID + `","service":"mail","label":"x"}`, 400},
		"short interval":   {ts.alice, `{"workspaceId":"` + ts.wsA + `","connectionId":"` + conn.ID + `","service":"issues","label":"x","autoSync":true,"intervalSeconds":5}`, 400},
		"bob's use":        {ts.bob, ds, 404},
		"foreign space":    {ts.carol, ds, 404},
		"label is a path":  {ts.alice, `{"workspaceId":"` + ts.wsA + `","connectionId":"` + conn.ID + `","service":"issues","label":"../x"}`, 400},
		"not JSON":         {ts.alice, `{`, 400},
		"viewer's own use": {ts.victor, `{"workspaceId":"` + ts.wsA + `","connectionId":"none","service":"issues","label":"x"}`, 403},
	} {
		if status, _, raw := do(t, ts.base, call{"POST", "/datasources", tc.token, "application/json", strings.NewReader(tc.body)}); status != tc.want {
			t.Errorf("%s: %d %s", name, status, raw)
		}
	}
	if _, _, raw := do(t, ts.base, call{"GET", "/datasources", ts.alice, "", nil}); string(raw) != "[]" {
		t.Fatalf("bad input stored %s", raw)
	}
	status, _, raw = do(t, ts.base, call{"POST", "/datasources", ts.alice, "application/json", strings.NewReader(ds)})
	var d dataSource
	if status != 201 || json.Unmarshal(raw, &d) != nil || d.ID == "" || d.SyncState != "idle" || d.IntervalSeconds != 3600 {
		t.Fatalf("create: %d %s", status, raw)
	}
	if _, _, raw := do(t, ts.base, call{"GET", "/datasources?workspace=" + ts.wsA, ts.alice, "", nil}); !strings.Contains(string(raw), d.ID) {
		t.Fatalf("list: %s", raw)
	}
	// Bob, a member of the same workspace, reaches none of it.
	if _, _, raw := do(t, ts.base, call{"GET", "/datasources", ts.bob, "", nil}); string(raw) != "[]" {
		t.Fatalf("bob lists %s", raw)
	}
	for _, c := range []call{{"GET", "/datasources/" + d.ID, ts.bob, "", nil}, {"POST", "/datasources/" + d.ID + "/sync", ts.bob, "", nil},
		{"GET", "/datasources/" + d.ID + "/sync", ts.bob, "", nil}, {"DELETE", "/datasources/" + d.ID, ts.bob, "", nil}} {
		if status, _, raw := do(t, ts.base, c); status != 404 {
			t.Errorf("bob %s %s: %d %s", c.method, c.path, status, raw)
		}
	}

	// Sync now, then follow the status until the job is done.
	status, _, raw = do(t, ts.base, call{"POST", "/datasources/" + d.ID + "/sync", ts.alice, "", nil})
	// The answer reads the source after the enqueue, by which time a job
	// worker may have taken the sync (running) or even finished it (idle).
	var queued dataSource
	if status != 202 || json.Unmarshal(raw, &queued) != nil ||
		(queued.SyncState != "queued" && queued.SyncState != "running" && (queued.SyncState != "idle" || queued.LastSynced == nil)) {
		t.Fatalf("sync now: %d %s", status, raw)
	}
	deadline := time.Now().Add(2 * time.Minute)
	var st dataSource
	for {
		_, _, raw = do(t, ts.base, call{"GET", "/datasources/" + d.ID + "/sync", ts.alice, "", nil})
		st = dataSource{}
		_ = json.Unmarshal(raw, &st)
		if st.LastSynced != nil || st.SyncState == "failed" || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if st.SyncState != "idle" || st.LastSynced == nil || !strings.HasPrefix(st.LastSummary, "1 new") || st.FolderID == "" {
		t.Fatalf("sync status: %s", raw)
	}
	if _, _, all := do(t, ts.base, call{"GET", "/files?workspace=" + ts.wsA, ts.alice, "", nil}); !strings.Contains(string(all), `"name":"spec.txt"`) {
		t.Fatalf("synced file not listed: %s", all)
	}

	// Revoked: said so, and sync now is a clear conflict.
	if status, _, _ := do(t, ts.base, call{"DELETE", "/connections/" + conn.ID, ts.alice, "", nil}); status != 204 {
		t.Fatalf("revoke: %d", status)
	}
	if _, _, raw := do(t, ts.base, call{"GET", "/datasources/" + d.ID, ts.alice, "", nil}); !strings.Contains(string(raw), `"connectionRevoked":true`) {
		t.Fatalf("after revocation: %s", raw)
	}
	if status, _, raw := do(t, ts.base, call{"POST", "/datasources/" + d.ID + "/sync", ts.alice, "", nil}); status != 409 || !strings.Contains(string(raw), "revoked") {
		t.Fatalf("sync over a revoked connection: %d %s", status, raw)
	}
	if status, _, _ := do(t, ts.base, call{"DELETE", "/datasources/" + d.ID, ts.alice, "", nil}); status != 204 {
		t.Fatalf("delete: %d", status)
	}
	if status, _, _ := do(t, ts.base, call{"GET", "/datasources/" + d.ID, ts.alice, "", nil}); status != 404 {
		t.Fatalf("deleted data source: %d", status)
	}
	if _, _, all := do(t, ts.base, call{"GET", "/files?workspace=" + ts.wsA, ts.alice, "", nil}); !strings.Contains(string(all), "spec.txt") {
		t.Fatalf("deleting the data source took its files: %s", all)
	}
}
