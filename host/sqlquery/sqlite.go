package sqlquery

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/agenthost/agenthost/pdk/sqlquery/wire"
	"modernc.org/sqlite"
)

// sqliteLimitLength is SQLITE_LIMIT_LENGTH, the largest string or blob.
const sqliteLimitLength = 0

type sqliteDB struct {
	db *sql.DB
}

// openSQLite opens path read-only: mode=ro (the file is never opened for
// writing), query_only, and per query an authorizer that lets statements
// read and nothing else (no ATTACH, VACUUM INTO, PRAGMA, transactions).
func openSQLite(path string) (*sqliteDB, error) {
	if path == "" {
		return nil, errors.New("driver sqlite needs path")
	}
	if strings.ContainsAny(path, "?#") {
		return nil, fmt.Errorf("path %q: ? and # are not allowed", path)
	}
	if fi, err := os.Stat(path); err != nil || !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("path %q: not a database file", path)
	}
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro&_pragma=query_only(1)&_pragma=busy_timeout(2000)")
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(4)
	return &sqliteDB{db: db}, nil
}

func (s *sqliteDB) close() { _ = s.db.Close() }

// readOnly is the authorizer: reading, functions other than
// load_extension, and recursive CTEs; everything else is denied when the
// statement is prepared.
func readOnly(action sqlite.AuthorizerActionCode, arg1, arg2, _, _ string) sqlite.AuthorizerReturnCode {
	switch action {
	case sqlite.AuthSelect, sqlite.AuthRead, sqlite.AuthRecursive:
		return sqlite.AuthorizerOK
	case sqlite.AuthFunction:
		if strings.EqualFold(arg2, "load_extension") {
			return sqlite.AuthorizerDeny
		}
		return sqlite.AuthorizerOK
	}
	return sqlite.AuthorizerDeny
}

func setAuthorizer(c *sql.Conn, fn sqlite.AuthorizerFn) error {
	return c.Raw(func(dc any) error {
		r, ok := dc.(sqlite.AuthorizerRegisterer)
		if !ok {
			return fmt.Errorf("driver connection %T has no authorizer", dc)
		}
		return r.RegisterAuthorizer(fn)
	})
}

func (s *sqliteDB) query(ctx context.Context, q string, params []any, l limits) (wire.QueryResult, error) {
	c, err := s.db.Conn(ctx)
	if err != nil {
		return wire.QueryResult{}, &Error{Code: "unavailable", Message: fmt.Sprintf("opening: %v", err)}
	}
	defer c.Close()
	if err := setAuthorizer(c, readOnly); err != nil {
		_ = c.Raw(func(any) error { return driver.ErrBadConn }) // never reuse it
		return wire.QueryResult{}, &Error{Code: "unavailable", Message: err.Error()}
	}
	// No string or blob may grow beyond what a result can hold: a
	// statement like SELECT zeroblob(1e9) fails instead of allocating it.
	if _, err := sqlite.Limit(c, sqliteLimitLength, max(l.bytes, 1<<20)); err != nil {
		return wire.QueryResult{}, &Error{Code: "unavailable", Message: err.Error()}
	}
	rows, err := c.QueryContext(ctx, q, params...)
	if err != nil {
		return wire.QueryResult{}, liteError(err)
	}
	defer rows.Close()
	cts, err := rows.ColumnTypes()
	if err != nil {
		return wire.QueryResult{}, liteError(err)
	}
	col := collector{l: l}
	for _, ct := range cts {
		col.out.Columns = append(col.out.Columns, wire.Column{Name: ct.Name(), Type: ct.DatabaseTypeName()})
	}
	for rows.Next() {
		vals := make([]any, len(cts))
		ptrs := make([]any, len(cts))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return wire.QueryResult{}, liteError(err)
		}
		row := make([]any, len(vals))
		for i, v := range vals {
			row[i] = jsonValue(v, cts[i].DatabaseTypeName())
		}
		if !col.add(row) {
			break
		}
	}
	if err := rows.Err(); err != nil {
		return wire.QueryResult{}, liteError(err)
	}
	return col.result(), nil
}

// liteError classifies a SQLite error: writes refused by the read-only
// opening or the authorizer, and SQL errors with SQLite's message.
func liteError(err error) error {
	msg := err.Error()
	switch {
	case strings.Contains(msg, "readonly database"), strings.Contains(msg, "not authorized"), strings.Contains(msg, "authorization denied"), strings.Contains(msg, "prohibited"):
		return &Error{Code: "read_only", Message: "refused, the database is read-only for sqlQuery: " + msg}
	case strings.Contains(msg, "too big"):
		return &Error{Code: "too_large", Message: "a value is larger than the result may be: " + msg}
	case strings.Contains(msg, "interrupted"):
		return &Error{Code: "timeout", Message: "the query ran longer than its time limit and was stopped"}
	}
	return &Error{Code: "sql_error", Message: msg}
}
