package api_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/agenthost/agenthost/host/audit"
	"github.com/agenthost/agenthost/host/tenancy"
	"github.com/agenthost/agenthost/host/webui"
)

// TestAuditAPI: the changes made through the API are in the tenant's
// audit log with who, from where and what (never a secret); only the
// tenant's admin searches and exports it; the export streams every entry
// as JSON lines and CSV.
func TestAuditAPI(t *testing.T) {
	ts := server(t)
	ctx := context.Background()
	alice, err := ts.db.Authenticate(ctx, ts.alice)
	if err != nil {
		t.Fatal(err)
	}
	admin, err := ts.db.CreateUser(ctx, tenancy.User{TenantID: alice.TenantID, Email: "root@acme", Admin: true})
	if err != nil {
		t.Fatal(err)
	}
	_, root, err := ts.db.CreateToken(ctx, admin.ID, "admin", nil)
	if err != nil {
		t.Fatal(err)
	}
	req := func(method, path, token, body string) (int, []byte) {
		t.Helper()
		r, err := http.NewRequest(method, ts.base+path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		r.Header.Set("Authorization", "Bearer "+token)
		r.Header.Set("Content-Type", "application/json")
		r.Header.Set("User-Agent", "audit-test/1.0")
		resp, err := http.DefaultClient.Do(r)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var b bytes.Buffer
		b.ReadFrom(resp.Body)
		return resp.StatusCode, b.Bytes()
	}

	// An MCP server whose tool is not trusted read-only: calling it is a
	// side effect.
	remote, _ := remoteMCP(t, "tok-secret-42")
	add := `{"name":"remote","workspaceId":"` + ts.wsA + `","transport":"http","url":"` + remote.URL + `","bearerToken":"tok-secret-42"}`
	status, raw := req("POST", "/mcp-servers", root, add)
	var srv struct{ ID string }
	if status != 201 || json.Unmarshal(raw, &srv) != nil {
		t.Fatalf("add: %d %s", status, raw)
	}
	if status, raw = req("POST", "/workspaces/"+ts.wsA+"/tools/remote_shout", ts.alice, `{"text":"hello","apiKey":"sk-do-not-log"}`); status != 200 {
		t.Fatalf("call: %d %s", status, raw)
	}
	if status, _ = req("DELETE", "/mcp-servers/"+srv.ID, root, ""); status != 204 {
		t.Fatalf("remove: %d", status)
	}
	const connSecret = "ATATT3xFfGF0-secret-api-token"
	status, raw = req("POST", "/connections", ts.alice, `{"provider":"jira","label":"work","auth":"basic","baseUrl":"https://acme.atlassian.net","account":"alice@acme.example","token":"`+connSecret+`"}`)
	var conn struct{ ID string }
	if status != 201 || json.Unmarshal(raw, &conn) != nil {
		t.Fatalf("connection: %d %s", status, raw)
	}
	if status, _ = req("DELETE", "/connections/"+conn.ID, ts.alice, ""); status != 204 {
		t.Fatalf("revoke connection: %d", status)
	}
	tok, spare, err := ts.db.CreateToken(ctx, alice.UserID, "spare", nil)
	if err != nil {
		t.Fatal(err)
	}
	if status, _ = req("DELETE", "/tokens/"+tok.ID, ts.alice, ""); status != 204 {
		t.Fatalf("revoke token: %d", status)
	}

	// Sign-in with a revoked token fails (recorded in its tenant's log);
	// with a live one it succeeds; signing out is recorded too.
	origin := strings.TrimSuffix(ts.base, "/api/v1")
	b := &sessionClient{t: t, origin: origin}
	if resp, body := b.do("POST", ts.base+"/session", `{"token":"`+spare+`"}`, map[string]string{"Origin": origin}); resp.StatusCode != 401 {
		t.Fatalf("sign-in with a revoked token: %d %s", resp.StatusCode, body)
	}
	resp, body := b.do("POST", ts.base+"/session", `{"token":"`+ts.bob+`"}`, map[string]string{"Origin": origin})
	if resp.StatusCode != 201 {
		t.Fatalf("sign-in: %d %s", resp.StatusCode, body)
	}
	for _, c := range resp.Cookies() {
		if c.Name == webui.CookieName {
			b.cookie = c
		}
	}
	var info struct{ CSRF string }
	json.Unmarshal([]byte(body), &info)
	if resp, body := b.do("DELETE", ts.base+"/session", "", map[string]string{"Origin": origin, webui.CSRFHeader: info.CSRF}); resp.StatusCode != 204 {
		t.Fatalf("sign-out: %d %s", resp.StatusCode, body)
	}

	// Only the admin reads the log.
	if status, _ = req("GET", "/audit", ts.alice, ""); status != 403 {
		t.Fatalf("a member searched the log: %d", status)
	}
	if status, _ = req("GET", "/audit/export", ts.alice, ""); status != 403 {
		t.Fatalf("a member exported the log: %d", status)
	}
	for _, bad := range []string{"?since=yesterday", "?limit=0", "?limit=5000", "?after=!!", "?format=xml"} {
		path := "/audit"
		if strings.Contains(bad, "format") {
			path = "/audit/export"
		}
		if status, raw = req("GET", path+bad, root, ""); status != 400 {
			t.Errorf("%s%s: %d %s", path, bad, status, raw)
		}
	}
	status, raw = req("GET", "/audit?limit=1000", root, "")
	var page audit.Page
	if status != 200 || json.Unmarshal(raw, &page) != nil {
		t.Fatalf("search: %d %s", status, raw)
	}
	if strings.Contains(string(raw), "tok-secret-42") || strings.Contains(string(raw), connSecret) || strings.Contains(string(raw), "sk-do-not-log") {
		t.Fatalf("the audit log holds a secret: %s", raw)
	}
	got := map[string]audit.Entry{}
	for _, e := range page.Entries {
		got[e.Action] = e
	}
	for _, a := range []string{audit.MCPServerAdded, audit.ToolCalled, audit.MCPServerRemoved, audit.ConnectionCreated, audit.ConnectionRevoked, audit.TokenRevoked,
		audit.SignInFailed, audit.SignInSucceeded, audit.SignedOut} {
		e, ok := got[a]
		if !ok {
			t.Errorf("%s is not in the log: %s", a, raw)
			continue
		}
		if e.Actor.Kind != audit.ActorUser || e.Actor.ID == "" || e.IP != "127.0.0.1" || e.UserAgent == "" || e.TenantID != alice.TenantID {
			t.Errorf("%s: who/where %+v", a, e)
		}
	}
	if e := got[audit.ToolCalled]; e.TargetID != "remote_shout" || e.WorkspaceID != ts.wsA || e.Actor.ID != alice.UserID ||
		!strings.Contains(string(e.Detail), `"text":"(7 bytes)"`) || !strings.Contains(string(e.Detail), `"apiKey":"[redacted]"`) {
		t.Errorf("the tool call's entry: %+v %s", e, e.Detail)
	}
	if e := got[audit.SignInFailed]; e.Actor.ID != alice.UserID || !strings.Contains(string(e.Detail), "revoked") {
		t.Errorf("the failed sign-in %+v %s", e, e.Detail)
	}
	if e := got[audit.MCPServerAdded]; e.Actor.ID != admin.ID || e.Actor.Via != audit.ViaToken || e.TargetID != srv.ID {
		t.Errorf("the MCP server's entry %+v", e)
	}
	if status, raw = req("GET", "/audit?action=connection.*&actor="+alice.UserID, root, ""); status != 200 ||
		strings.Count(string(raw), `"action":"connection.`) != 2 {
		t.Fatalf("filtered search: %d %s", status, raw)
	}

	// Exports: every entry, in pages the server reads one after another.
	for i := range 250 {
		if err := audit.NewLog(ts.db, nil).Record(ctx, audit.Entry{TenantID: alice.TenantID, Action: audit.ToolCalled, TargetID: "bulk",
			Detail: audit.Detail(map[string]int{"i": i})}); err != nil {
			t.Fatal(err)
		}
	}
	status, raw = req("GET", "/audit/export?action=tool.called", root, "")
	if status != 200 {
		t.Fatalf("export: %d %s", status, raw)
	}
	sc := bufio.NewScanner(bytes.NewReader(raw))
	lines, last := 0, ""
	for sc.Scan() {
		lines++
		last = sc.Text()
	}
	if lines != 252 || last != `{"complete":true,"entries":251}` {
		t.Fatalf("JSON lines export: %d lines, last %s", lines, last)
	}
	// A formula in a field stays text in a spreadsheet.
	if err := audit.NewLog(ts.db, nil).Record(ctx, audit.Entry{TenantID: alice.TenantID, Action: audit.SCIMUserCreated, TargetID: "=HYPERLINK(\"x\")"}); err != nil {
		t.Fatal(err)
	}
	status, raw = req("GET", "/audit/export?format=csv", root, "")
	rows, err := csv.NewReader(bytes.NewReader(raw)).ReadAll()
	if status != 200 || err != nil || len(rows) != 1+len(page.Entries)+250+1 || rows[0][0] != "id" || rows[1][7] != audit.SCIMUserCreated || rows[1][9] != `'=HYPERLINK("x")` {
		t.Fatalf("CSV export: %d %v, %d rows, first %v", status, err, len(rows), rows[:min(2, len(rows))])
	}
}
