package server

import (
	"database/sql"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	_ "modernc.org/sqlite"

	"github.com/agenthost/agenthost/host/builtin"
	"github.com/agenthost/agenthost/host/wasm"
)

// read is ReadFile that fails the test on an error.
func read(t *testing.T, path string) File {
	t.Helper()
	f, err := ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// TestConnectToolServices: the webSearch and sqlQuery sections of the one
// parse of the file connect their capabilities; a misspelt key, an unknown
// provider or driver, or an unreadable value is refused naming it.
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
	newCaps := builtin.NewCapabilities

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
	caps := newCaps()
	closeFn, err := connectToolServices(read(t, good), env, caps, wasm.EgressOptions{}, logger)
	if err != nil {
		t.Fatal(err)
	}
	defer closeFn()
	if caps.WebSearch.Searcher == nil || caps.WebSearch.Searcher.Provider() != "brave" || caps.SQL.Service == nil {
		t.Fatalf("not connected: %+v %+v", caps.WebSearch, caps.SQL)
	}

	// Nothing configured: the capabilities stay unconnected.
	caps = newCaps()
	if _, err := connectToolServices(File{}, env, caps, wasm.EgressOptions{}, logger); err != nil || caps.WebSearch.Searcher != nil || caps.SQL.Service != nil {
		t.Fatalf("empty: %v", err)
	}
	for _, c := range []struct{ body, want string }{
		{"webSearch:\n  provider: brave\n  apiKeyy: x\n", "apiKeyy"},
		{"webSearch:\n  provider: bing\n", "bing"},
		{"sqlQuery:\n  databases:\n    crm: {driver: sqlite, path: " + dbPath + ", tenant: [a]}\n", "tenant"},
		{"sqlQuery:\n  databases:\n    crm: {driver: sqlite, path: " + dbPath + ", timeout: soon}\n", "soon"},
		{"sqlQuery:\n  databases:\n    crm: {driver: oracle}\n", "oracle"},
	} {
		f, err := ReadFile(write(c.body))
		if err == nil {
			_, err = connectToolServices(f, env, newCaps(), wasm.EgressOptions{}, logger)
		}
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v", c.body, err)
		}
	}
}
