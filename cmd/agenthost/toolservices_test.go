package main

import (
	"database/sql"
	"flag"
	"io"
	"log/slog"
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
