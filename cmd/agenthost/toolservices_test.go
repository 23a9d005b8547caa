package main

import (
	"database/sql"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestWebSearchAndSQLQueryServed: a server started with a configuration
// file naming a SearXNG instance and a SQLite database answers webSearch
// and sqlQuery calls over HTTP through its built-in plugins, and a second
// tenant not granted the database is told it has none.
func TestWebSearchAndSQLQueryServed(t *testing.T) {
	searx := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/search" || r.URL.Query().Get("format") != "json" {
			http.Error(w, "forbidden", http.StatusForbidden)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"query":"`+r.URL.Query().Get("q")+`","number_of_results":0,"results":[{"url":"https://example.org/a","title":"Agents","content":"About <b>agents</b>","engine":"bing","publishedDate":null}],"answers":[],"suggestions":[],"unresponsive_engines":[]}`)
	}))
	defer searx.Close()
	u, _ := url.Parse(searx.URL)
	data, plugins := t.TempDir(), t.TempDir()
	acme := bootstrapTenant(t, data, plugins, "acme", []string{"sqlQuery"})
	other := bootstrapTenant(t, data, plugins, "other", []string{"sqlQuery"})
	dbPath := filepath.Join(t.TempDir(), "crm.db")
	db, err := sql.Open("sqlite", dbPath)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`CREATE TABLE customers (name TEXT); INSERT INTO customers VALUES ('Acme AG'), ('Globex')`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	cfg := filepath.Join(t.TempDir(), "agenthost.yaml")
	if err := os.WriteFile(cfg, []byte("webSearch:\n  provider: searxng\n  url: "+searx.URL+"\nsqlQuery:\n  databases:\n    crm:\n      driver: sqlite\n      path: "+dbPath+"\n      workspaces: ["+acme.workspace+"]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	logs := &syncBuffer{}
	base := hostileServer(t, data, logs, plugins, "-config", cfg, "-allow-host", u.Host)
	acme.base, other.base = base, base

	call := func(tc tenantClient, tool string, args any) string {
		status, b := tc.do(t, http.MethodPost, "/api/v1/workspaces/"+tc.workspace+"/tools/"+tool, args)
		if status != http.StatusOK {
			t.Fatalf("%s: HTTP %d %s", tool, status, b)
		}
		return string(b)
	}
	if got := call(acme, "webSearch", map[string]any{"query": "agents"}); !strings.Contains(got, `"ok":true`) ||
		!strings.Contains(got, `"results":[{"title":"Agents","url":"https://example.org/a","snippet":"About agents"}]`) {
		t.Fatalf("webSearch: %s", got)
	}
	if got := call(acme, "sqlQuery", map[string]any{"database": "crm", "sql": "SELECT name FROM customers WHERE name LIKE ?", "params": []any{"Acme%"}}); !strings.Contains(got, `"ok":true`) ||
		!strings.Contains(got, `"rows":[["Acme AG"]]`) {
		t.Fatalf("sqlQuery: %s", got)
	}
	if r := other.tool(t, "sqlQuery", map[string]any{"database": "crm", "sql": "SELECT 1"}); r.OK || r.Error == nil || r.Error.Code != "unknown_database" {
		t.Fatalf("other tenant: %+v", r)
	}
}
