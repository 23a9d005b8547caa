package sqlquery_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agenthost/agenthost/host/sqlquery"
	"github.com/agenthost/agenthost/host/tenancy"
	"github.com/agenthost/agenthost/host/testenv"
	"github.com/agenthost/agenthost/host/toolcall"
	"github.com/agenthost/agenthost/pdk/sqlquery/wire"
	"github.com/jackc/pgx/v5"
	_ "modernc.org/sqlite"
)

var (
	alice = toolcall.Caller{Principal: tenancy.Principal{TenantID: "t-acme", UserID: "u-alice"}, WorkspaceID: "ws-sales"}
	mallo = toolcall.Caller{Principal: tenancy.Principal{TenantID: "t-other", UserID: "u-mallory"}, WorkspaceID: "ws-other"}
)

// fixture is one database of each kind with the same table, and a
// service offering both to tenant t-acme only.
type fixture struct {
	svc    *sqlquery.Service
	pgURL  string
	lite   string
	kinds  []string
	verify func(t *testing.T)
}

func newFixture(t testing.TB, timeout time.Duration) *fixture {
	t.Helper()
	ctx := context.Background()
	f := &fixture{pgURL: testenv.Postgres(t), lite: filepath.Join(t.TempDir(), "shop.db"), kinds: []string{"pg", "lite"}}
	pg, err := pgx.Connect(ctx, f.pgURL)
	if err != nil {
		t.Fatal(err)
	}
	defer pg.Close(ctx)
	for _, q := range []string{
		`CREATE TABLE items (id int PRIMARY KEY, name text NOT NULL, price numeric(10,2), photo bytea, added timestamptz, day date)`,
		`INSERT INTO items SELECT i, 'item ' || i, i * 1.25, '\x0102'::bytea, timestamptz '2024-03-01 10:00:00+00', date '2024-03-01' FROM generate_series(1, 50) i`,
		`CREATE SEQUENCE s`,
		`CREATE TABLE secret (v text)`, `INSERT INTO secret VALUES ('payroll')`,
		`CREATE ROLE reader NOLOGIN`, `GRANT SELECT ON items TO reader`,
		`CREATE ROLE agent LOGIN PASSWORD 'agent-pw'`, `GRANT SELECT ON items, secret TO agent`, `GRANT USAGE ON SEQUENCE s TO agent`, `GRANT reader TO agent`,
	} {
		if _, err := pg.Exec(ctx, q); err != nil && !strings.Contains(err.Error(), "already exists") {
			t.Fatalf("%s: %v", q, err)
		}
	}
	lite, err := sql.Open("sqlite", f.lite)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		`CREATE TABLE items (id INTEGER PRIMARY KEY, name TEXT NOT NULL, price REAL, photo BLOB, added DATETIME, day DATE)`,
		`WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i < 50) INSERT INTO items SELECT i, 'item ' || i, i * 1.25, x'0102', '2024-03-01T10:00:00Z', '2024-03-01' FROM n`,
	} {
		if _, err := lite.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	lite.Close()
	// The operator's login: SELECT only, no superuser (a superuser is
	// refused, see TestSuperuserLoginIsRefused).
	u, err := url.Parse(f.pgURL)
	if err != nil {
		t.Fatal(err)
	}
	u.User = url.UserPassword("agent", "agent-pw")
	f.svc, err = sqlquery.New(sqlquery.Config{Databases: map[string]sqlquery.Database{
		"pg":       {Driver: "postgres", DSN: u.String(), Description: "the shop", MaxRows: 20, Timeout: timeout, MaxResultBytes: 16 << 10, Tenants: []string{"t-acme"}},
		"lite":     {Driver: "sqlite", Path: f.lite, MaxRows: 20, Timeout: timeout, MaxResultBytes: 16 << 10, Tenants: []string{"t-acme"}},
		"readonly": {Driver: "postgres", DSN: u.String(), Role: "reader", Workspaces: []string{"ws-sales"}},
		"hidden":   {Driver: "sqlite", Path: f.lite, Tenants: []string{"t-other"}},
	}}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(f.svc.Close)
	// verify checks both tables are as created: nothing was written.
	f.verify = func(t *testing.T) {
		t.Helper()
		for _, db := range f.kinds {
			r, err := f.svc.Query(ctx, alice, wire.QueryRequest{Database: db, SQL: "SELECT count(*), sum(id), min(name), max(price) FROM items"})
			if err != nil {
				t.Fatalf("%s: the table is gone or unreadable: %v", db, err)
			}
			got, _ := json.Marshal(r.Rows)
			if !strings.Contains(string(got), `[[50,1275,"item 1",`) {
				t.Fatalf("%s: items changed: %s", db, got)
			}
		}
	}
	return f
}

func code(err error) string {
	var e *sqlquery.Error
	if errors.As(err, &e) {
		return e.Code
	}
	return ""
}

func TestWritesAreRefusedByTheDatabase(t *testing.T) {
	f := newFixture(t, 3*time.Second)
	ctx := context.Background()
	cases := []struct {
		db, name, sql string
		want          string // the error code ("": read_only)
	}{
		{"pg", "insert", `INSERT INTO items (id, name) VALUES (100, 'x')`, ""},
		{"pg", "update", `UPDATE items SET name = 'x'`, ""},
		{"pg", "delete", `DELETE FROM items`, ""},
		{"pg", "drop", `DROP TABLE items`, ""},
		{"pg", "create", `CREATE TABLE t2 (x int)`, ""},
		{"pg", "truncate", `TRUNCATE items`, ""},
		{"pg", "for update", `SELECT * FROM items FOR UPDATE`, ""},
		{"pg", "writing cte", `WITH d AS (DELETE FROM items RETURNING *) SELECT count(*) FROM d`, ""},
		{"pg", "copy from", `COPY items FROM STDIN`, "forbidden"},
		{"pg", "copy to program", `COPY items TO PROGRAM 'touch /tmp/agenthost-sqlquery-pwned'`, "forbidden"},
		{"pg", "do block", `DO $$ BEGIN INSERT INTO items (id, name) VALUES (101, 'x'); END $$`, ""},
		{"pg", "sequence", `SELECT nextval('s')`, ""},
		{"pg", "two statements", `SELECT 1; DROP TABLE items`, "sql_error"}, // cannot be prepared
		{"pg", "commit escapes", `COMMIT`, ""},
		{"pg", "grant", `GRANT ALL ON items TO PUBLIC`, ""},
		{"lite", "insert", `INSERT INTO items (id, name) VALUES (100, 'x')`, ""},
		{"lite", "update", `UPDATE items SET name = 'x'`, ""},
		{"lite", "delete", `DELETE FROM items`, ""},
		{"lite", "drop", `DROP TABLE items`, ""},
		{"lite", "create", `CREATE TABLE t2 (x int)`, ""},
		{"lite", "writing cte", `WITH d(x) AS (SELECT 1) INSERT INTO items (id, name) SELECT 200, 'x' FROM d`, ""},
		{"lite", "two statements", `SELECT 1; DROP TABLE items`, ""},
		{"lite", "pragma off", `PRAGMA query_only = 0`, ""},
		{"lite", "attach", `ATTACH DATABASE '` + filepath.Join(filepath.Dir(f.lite), "new.db") + `' AS n`, ""},
		{"lite", "vacuum into", `VACUUM INTO '` + filepath.Join(filepath.Dir(f.lite), "copy.db") + `'`, ""},
		{"lite", "begin", `BEGIN IMMEDIATE`, ""},
		{"lite", "load extension", `SELECT load_extension('/lib/x86_64-linux-gnu/libc.so.6')`, ""},
	}
	for _, c := range cases {
		t.Run(c.db+"/"+c.name, func(t *testing.T) {
			_, err := f.svc.Query(ctx, alice, wire.QueryRequest{Database: c.db, SQL: c.sql})
			want := c.want
			if want == "" {
				want = "read_only"
			}
			if code(err) != want {
				t.Fatalf("%s: got %v, want %s", c.sql, err, want)
			}
		})
	}
	f.verify(t)
	for _, p := range []string{"new.db", "copy.db"} {
		if _, err := os.Stat(filepath.Join(filepath.Dir(f.lite), p)); err == nil {
			t.Errorf("%s was written", p)
		}
	}
	if _, err := os.Stat("/tmp/agenthost-sqlquery-pwned"); err == nil {
		t.Error("COPY TO PROGRAM ran")
	}
}

// Session state a statement sets does not outlive its query: the next one
// is still read-only and finds no lock held.
func TestPostgresSessionDoesNotCarryOver(t *testing.T) {
	f := newFixture(t, 3*time.Second)
	ctx := context.Background()
	for _, q := range []string{
		`SELECT set_config('default_transaction_read_only', 'off', false)`,
		`SET SESSION CHARACTERISTICS AS TRANSACTION READ WRITE`,
		`SELECT pg_advisory_lock(7)`,
	} {
		if _, err := f.svc.Query(ctx, alice, wire.QueryRequest{Database: "pg", SQL: q}); err != nil {
			t.Logf("%s: %v", q, err)
		}
		for range 3 { // every pooled connection
			if _, err := f.svc.Query(ctx, alice, wire.QueryRequest{Database: "pg", SQL: `INSERT INTO items (id, name) VALUES (300, 'x')`}); code(err) != "read_only" {
				t.Fatalf("after %s an insert got %v", q, err)
			}
		}
	}
	pg, err := pgx.Connect(ctx, f.pgURL)
	if err != nil {
		t.Fatal(err)
	}
	defer pg.Close(ctx)
	var ok bool
	if err := pg.QueryRow(ctx, `SELECT pg_try_advisory_lock(7)`).Scan(&ok); err != nil || !ok {
		t.Fatalf("the advisory lock outlived its query: %v %v", ok, err)
	}
	f.verify(t)
}

func TestParamsCannotInject(t *testing.T) {
	f := newFixture(t, 3*time.Second)
	evil := []any{"x'); DROP TABLE items; --", "1 OR 1=1", "item 1' OR '1'='1"}
	for _, db := range f.kinds {
		q := map[string]string{"pg": `SELECT id FROM items WHERE name = $1`, "lite": `SELECT id FROM items WHERE name = ?`}[db]
		for _, p := range evil {
			r, err := f.svc.Query(context.Background(), alice, wire.QueryRequest{Database: db, SQL: q, Params: []any{p}})
			if err != nil || len(r.Rows) != 0 {
				t.Fatalf("%s %q: %v rows, %v", db, p, len(r.Rows), err)
			}
		}
		r, err := f.svc.Query(context.Background(), alice, wire.QueryRequest{Database: db, SQL: q, Params: []any{"item 7"}})
		if got, _ := json.Marshal(r.Rows); err != nil || string(got) != "[[7]]" {
			t.Fatalf("%s: %+v %v", db, r, err)
		}
		// Only scalars are parameters.
		if _, err := f.svc.Query(context.Background(), alice, wire.QueryRequest{Database: db, SQL: q, Params: []any{map[string]any{"a": 1}}}); code(err) != "invalid_arguments" {
			t.Fatalf("%s: object param: %v", db, err)
		}
	}
	f.verify(t)
}

func TestLimits(t *testing.T) {
	f := newFixture(t, 300*time.Millisecond)
	ctx := context.Background()
	for _, db := range f.kinds {
		t.Run(db, func(t *testing.T) {
			r, err := f.svc.Query(ctx, alice, wire.QueryRequest{Database: db, SQL: "SELECT id FROM items ORDER BY id"})
			if err != nil || len(r.Rows) != 20 || !r.Truncated || r.TruncatedBy != "rows" {
				t.Fatalf("row limit: %d rows, truncated %v by %q, %v", len(r.Rows), r.Truncated, r.TruncatedBy, err)
			}
			r, err = f.svc.Query(ctx, alice, wire.QueryRequest{Database: db, SQL: "SELECT id FROM items ORDER BY id", MaxRows: 5})
			if err != nil || len(r.Rows) != 5 || !r.Truncated {
				t.Fatalf("maxRows 5: %d rows, %v", len(r.Rows), err)
			}
			r, err = f.svc.Query(ctx, alice, wire.QueryRequest{Database: db, SQL: "SELECT id FROM items WHERE id <= 20"})
			if err != nil || len(r.Rows) != 20 || r.Truncated {
				t.Fatalf("exactly the limit: %d rows, truncated %v, %v", len(r.Rows), r.Truncated, err)
			}
			big := map[string]string{"pg": "SELECT repeat('x', 4000) FROM generate_series(1, 10)", "lite": "SELECT printf('%.4000c', 'x') FROM items LIMIT 10"}[db]
			r, err = f.svc.Query(ctx, alice, wire.QueryRequest{Database: db, SQL: big})
			if err != nil || !r.Truncated || r.TruncatedBy != "bytes" || len(r.Rows) != 4 {
				t.Fatalf("byte limit: %d rows, truncated %v by %q, %v", len(r.Rows), r.Truncated, r.TruncatedBy, err)
			}
			if db == "lite" {
				// A value too large for any result is refused, not allocated.
				if _, err := f.svc.Query(ctx, alice, wire.QueryRequest{Database: db, SQL: "SELECT length(zeroblob(1000000000))"}); code(err) != "too_large" {
					t.Fatalf("zeroblob: %v", err)
				}
			}
			slow := map[string]string{
				"pg":   "SELECT pg_sleep(30)",
				"lite": "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c",
			}[db]
			start := time.Now()
			if _, err := f.svc.Query(ctx, alice, wire.QueryRequest{Database: db, SQL: slow}); code(err) != "timeout" {
				t.Fatalf("slow query: %v", err)
			}
			if time.Since(start) > 20*time.Second {
				t.Fatal("the slow query was not stopped")
			}
			if db == "pg" {
				// Lifting statement_timeout inside the query does not lift the deadline.
				if _, err := f.svc.Query(ctx, alice, wire.QueryRequest{Database: db, SQL: "SELECT set_config('statement_timeout', '0', true), pg_sleep(30)"}); code(err) != "timeout" {
					t.Fatalf("lifted statement_timeout: %v", err)
				}
			}
			// The database still answers.
			if _, err := f.svc.Query(ctx, alice, wire.QueryRequest{Database: db, SQL: "SELECT 1"}); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func TestTypesAreJSON(t *testing.T) {
	f := newFixture(t, 3*time.Second)
	r, err := f.svc.Query(context.Background(), alice, wire.QueryRequest{Database: "pg", SQL: `SELECT 1::int4 AS i, 9007199254740993::int8 AS big, 1.50::numeric AS n,
		'\x0102'::bytea AS b, timestamptz '2024-03-01 10:00:00+00' AS ts, date '2024-03-01' AS d, true AS t, NULL::text AS nothing,
		'{"a":[1,2]}'::jsonb AS j, ARRAY[1,2] AS arr, 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'::uuid AS u, 'NaN'::float8 AS nan, interval '1 day' AS iv`})
	if err != nil {
		t.Fatal(err)
	}
	got, _ := json.Marshal(r)
	for _, want := range []string{
		`{"name":"i","type":"int4"}`, `{"name":"n","type":"numeric"}`, `{"name":"ts","type":"timestamptz"}`,
		`[1,"9007199254740993","1.50","AQI=","2024-03-01T10:00:00Z","2024-03-01",true,null,{"a":[1,2]},[1,2],"a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11","NaN","1 day 00:00:00"]`,
	} {
		if !strings.Contains(string(got), want) {
			t.Errorf("missing %s in %s", want, got)
		}
	}
	// Less common types come back as their text.
	r, err = f.svc.Query(context.Background(), alice, wire.QueryRequest{Database: "pg", SQL: `SELECT point(1,2) AS p, '12.5'::money AS m,
		'a b'::tsvector AS ts, inet '10.0.0.1' AS ip, time '10:30' AS t, '{1.5,2}'::numeric[] AS na, 'x'::"char" AS c`})
	if err != nil {
		t.Fatal(err)
	}
	got, _ = json.Marshal(r.Rows)
	if want := `[["(1,2)","$12.50","'a' 'b'","10.0.0.1","10:30:00.000000",["1.5","2"],"x"]]`; string(got) != want {
		t.Errorf("got %s, want %s", got, want)
	}
	r, err = f.svc.Query(context.Background(), alice, wire.QueryRequest{Database: "lite", SQL: `SELECT id, price, photo, added, day FROM items WHERE id = ?`, Params: []any{json.Number("2")}})
	if err != nil {
		t.Fatal(err)
	}
	got, _ = json.Marshal(r)
	if !strings.Contains(string(got), `[[2,2.5,"AQI=","2024-03-01T10:00:00Z","2024-03-01"]]`) || !strings.Contains(string(got), `{"name":"photo","type":"BLOB"}`) {
		t.Errorf("sqlite: %s", got)
	}
}

func TestGrants(t *testing.T) {
	f := newFixture(t, 3*time.Second)
	ctx := context.Background()
	for _, c := range []struct {
		who  toolcall.Caller
		db   string
		list string
	}{
		{alice, "nope", "lite, pg (the shop), readonly"},
		{alice, "hidden", "lite, pg (the shop), readonly"}, // exists, not granted: the same answer
		{mallo, "pg", "hidden"},
		{toolcall.Caller{}, "pg", "none"},
	} {
		_, err := f.svc.Query(ctx, c.who, wire.QueryRequest{Database: c.db, SQL: "SELECT 1"})
		if code(err) != "unknown_database" || !strings.Contains(err.Error(), "you may query: "+c.list) {
			t.Errorf("%s for %s: %v", c.db, c.who.Principal.TenantID, err)
		}
	}
	// The operator's role: the items granted to it, not the secret.
	if r, err := f.svc.Query(ctx, alice, wire.QueryRequest{Database: "readonly", SQL: "SELECT count(*) FROM items"}); err != nil || len(r.Rows) != 1 || r.Rows[0][0] != int64(50) {
		t.Fatalf("%+v %v", r, err)
	}
	if _, err := f.svc.Query(ctx, alice, wire.QueryRequest{Database: "readonly", SQL: "SELECT * FROM secret"}); code(err) != "forbidden" {
		t.Fatalf("secret read as reader: %v", err)
	}
	// RESET ROLE runs inside its transaction only; the next query is the reader's again.
	_, _ = f.svc.Query(ctx, alice, wire.QueryRequest{Database: "readonly", SQL: "RESET ROLE"})
	if _, err := f.svc.Query(ctx, alice, wire.QueryRequest{Database: "readonly", SQL: "SELECT * FROM secret"}); code(err) != "forbidden" {
		t.Fatalf("secret read after RESET ROLE: %v", err)
	}
}

func TestConfigErrors(t *testing.T) {
	for _, d := range []sqlquery.Database{
		{Driver: "mysql"},
		{Driver: "postgres"},
		{Driver: "postgres", DSNEnv: "UNSET"},
		{Driver: "postgres", DSN: "::not a url"},
		{Driver: "sqlite"},
		{Driver: "sqlite", Path: "/nonexistent/x.db"},
		{Driver: "sqlite", Path: "/tmp/x.db?mode=rw"},
	} {
		if _, err := sqlquery.New(sqlquery.Config{Databases: map[string]sqlquery.Database{"x": d}}, func(string) string { return "" }, nil); err == nil {
			t.Errorf("%+v accepted", d)
		}
	}
}

// A superuser login could leave the read-only transaction's reach (COPY
// TO PROGRAM, server files): the service refuses to use it.
func TestSuperuserLoginIsRefused(t *testing.T) {
	f := newFixture(t, 3*time.Second)
	svc, err := sqlquery.New(sqlquery.Config{Databases: map[string]sqlquery.Database{
		"root": {Driver: "postgres", DSN: f.pgURL, Role: "reader", Tenants: []string{"*"}},
	}}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer svc.Close()
	_, err = svc.Query(context.Background(), alice, wire.QueryRequest{Database: "root", SQL: `COPY (SELECT 1) TO PROGRAM 'touch /tmp/agenthost-sqlquery-pwned'`})
	if code(err) != "forbidden" || !strings.Contains(err.Error(), "superuser") {
		t.Fatalf("got %v", err)
	}
	if _, err := os.Stat("/tmp/agenthost-sqlquery-pwned"); err == nil {
		t.Fatal("COPY TO PROGRAM ran")
	}
}
