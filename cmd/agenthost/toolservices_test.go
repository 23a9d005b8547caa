package main

import (
	"database/sql"
	"flag"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestConnectToolServices(t *testing.T) {
	dir := t.TempDir()
	dbPath := filepath.Join(dir, "crm.db")
	db, err := sql.Open("sqlite", dbPath)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`CREATE TABLE t (x int)`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	write := func(body string) string {
		p := filepath.Join(dir, "agenthost.yaml")
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	env := func(k string) string { return map[string]string{"BRAVE_KEY": "k-123"}[k] }
	newPF := func() pluginFlags { return addPluginFlags(flag.NewFlagSet("x", flag.ContinueOnError)) }

	good := write(`
llm: {}
webSearch:
  provider: brave
  apiKeyEnv: BRAVE_KEY
  maxCount: 8
  timeout: 20s
sqlQuery:
  databases:
    crm:
      driver: sqlite
      path: ` + dbPath + `
      timeout: 5s
      maxRows: 100
      tenants: ["*"]
`)
	pf := newPF()
	closeFn, err := connectToolServices(good, env, pf, logger)
	if err != nil {
		t.Fatal(err)
	}
	defer closeFn()
	if pf.caps.WebSearch.Searcher == nil || pf.caps.WebSearch.Searcher.Provider() != "brave" || pf.caps.SQL.Service == nil {
		t.Fatalf("not connected: %+v %+v", pf.caps.WebSearch, pf.caps.SQL)
	}

	// Nothing configured: the capabilities stay unconnected.
	pf = newPF()
	if _, err := connectToolServices("", env, pf, logger); err != nil || pf.caps.WebSearch.Searcher != nil || pf.caps.SQL.Service != nil {
		t.Fatalf("empty: %v", err)
	}
	for _, c := range []struct{ body, want string }{
		{"webSearch:\n  provider: brave\n  apiKeyy: x\n", "apiKeyy"},
		{"webSearch:\n  provider: bing\n", "bing"},
		{"sqlQuery:\n  databases:\n    crm: {driver: sqlite, path: " + dbPath + ", tenant: [a]}\n", "tenant"},
		{"sqlQuery:\n  databases:\n    crm: {driver: sqlite, path: " + dbPath + ", timeout: soon}\n", "soon"},
		{"sqlQuery:\n  databases:\n    crm: {driver: oracle}\n", "oracle"},
	} {
		if _, err := connectToolServices(write(c.body), env, newPF(), logger); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v", c.body, err)
		}
	}
}

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
