package sqlquery_test

import (
	"context"
	"database/sql"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agenthost/agenthost/host/sqlquery"
	"github.com/agenthost/agenthost/host/tenancy"
	"github.com/agenthost/agenthost/host/toolcall"
	"github.com/agenthost/agenthost/host/wasm"
	"github.com/agenthost/agenthost/host/wasm/wasmtest"
)

// TestSQLQueryPlugin runs the built-in plugin plugins/sqlquery on the real
// host against a SQLite database: parameters reach the database as
// parameters, writes are refused, another tenant's call sees no database.
func TestSQLQueryPlugin(t *testing.T) {
	path := filepath.Join(t.TempDir(), "crm.db")
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{`CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT, revenue REAL)`,
		`INSERT INTO customers VALUES (1, 'Acme AG', 1200.5), (2, 'Globex', 99), (3, 'Initech', 5000)`} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()
	svc, err := sqlquery.New(sqlquery.Config{Databases: map[string]sqlquery.Database{
		"crm": {Driver: "sqlite", Path: path, Workspaces: []string{"w-sales"}, MaxRows: 2},
	}}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer svc.Close()
	capability := &sqlquery.Capability{Service: svc}
	h := wasmtest.HostWith(t, []wasm.Capability{capability.Wasm()}, "sqlquery")
	ctx := context.Background()
	sales := toolcall.With(ctx, toolcall.Caller{Principal: tenancy.Principal{TenantID: "t1", UserID: "u1"}, WorkspaceID: "w-sales"})
	other := toolcall.With(ctx, toolcall.Caller{Principal: tenancy.Principal{TenantID: "t2", UserID: "u2"}, WorkspaceID: "w-other"})

	res := h.Call(sales, "sqlQuery", []byte(`{"database":"crm","sql":"SELECT name, revenue FROM customers WHERE revenue > ? ORDER BY id","params":[50]}`), nil)
	if !res.OK {
		t.Fatalf("%+v", res.Error)
	}
	if want := `"rows":[["Acme AG",1200.5],["Globex",99]],"truncated":true,"truncatedBy":"rows"`; !strings.Contains(string(res.Data), want) {
		t.Fatalf("got %s, want %s", res.Data, want)
	}
	res = h.Call(sales, "sqlQuery", []byte(`{"database":"crm","sql":"SELECT id FROM customers WHERE name = ?","params":["x' OR '1'='1"]}`), nil)
	if !res.OK || !strings.Contains(string(res.Data), `"rows":[]`) {
		t.Fatalf("injection: %s %+v", res.Data, res.Error)
	}
	res = h.Call(sales, "sqlQuery", []byte(`{"database":"crm","sql":"DELETE FROM customers"}`), nil)
	if res.OK || res.Error.Code != "read_only" {
		t.Fatalf("delete: %+v", res)
	}
	res = h.Call(other, "sqlQuery", []byte(`{"database":"crm","sql":"SELECT 1"}`), nil)
	if res.OK || res.Error.Code != "unknown_database" || !strings.Contains(res.Error.Message, "you may query: none") {
		t.Fatalf("other tenant: %+v", res)
	}
}
