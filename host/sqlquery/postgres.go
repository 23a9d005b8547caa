package sqlquery

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/agenthost/agenthost/pdk/sqlquery/wire"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

var errDangerousLogin = errors.New("refused login")

type postgres struct {
	pool *pgxpool.Pool
	role string
}

func openPostgres(dsn, role string) (*postgres, error) {
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("dsn: %w", err)
	}
	// Describe-then-execute with the unnamed statement: nothing is cached
	// on the session (it is reset after every query), and a string of
	// several statements cannot be prepared, so only one ever runs.
	cfg.ConnConfig.DefaultQueryExecMode = pgx.QueryExecModeDescribeExec
	cfg.MaxConns = 8
	// A read-only transaction does not stop what a superuser or a member of
	// the server-file roles can do outside tables (COPY ... TO PROGRAM runs
	// a shell command on the database server): such a login is refused
	// when it connects. SET LOCAL ROLE does not help, as the statement could
	// RESET ROLE back to the login.
	cfg.AfterConnect = func(ctx context.Context, c *pgx.Conn) error {
		var user string
		var dangerous bool
		err := c.QueryRow(ctx, `SELECT session_user, rolsuper OR pg_has_role(session_user, 'pg_execute_server_program', 'MEMBER')
			OR pg_has_role(session_user, 'pg_write_server_files', 'MEMBER') OR pg_has_role(session_user, 'pg_read_server_files', 'MEMBER')
			FROM pg_roles WHERE rolname = session_user`, pgx.QueryExecModeSimpleProtocol).Scan(&user, &dangerous)
		if err != nil {
			return fmt.Errorf("checking the login's privileges: %w", err)
		}
		if dangerous {
			return fmt.Errorf("%w: %q is a superuser or may run programs or touch files on the database server; give sqlQuery a login with SELECT privileges only", errDangerousLogin, user)
		}
		return nil
	}
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		return nil, err
	}
	return &postgres{pool: pool, role: role}, nil
}

func (p *postgres) close() { p.pool.Close() }

func (p *postgres) query(ctx context.Context, sql string, params []any, l limits) (wire.QueryResult, error) {
	conn, err := p.pool.Acquire(ctx)
	if errors.Is(err, errDangerousLogin) {
		return wire.QueryResult{}, &Error{Code: "forbidden", Message: "the operator's database login is refused: " + err.Error()}
	}
	if err != nil {
		return wire.QueryResult{}, &Error{Code: "unavailable", Message: fmt.Sprintf("connecting: %v", err)}
	}
	// The session is reset (or the connection dropped) before it returns
	// to the pool: nothing the statement did to the session survives it.
	keep := false
	defer func() {
		if keep {
			conn.Release()
			return
		}
		c := conn.Hijack()
		cctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_ = c.Close(cctx)
	}()
	tx, err := conn.BeginTx(ctx, pgx.TxOptions{AccessMode: pgx.ReadOnly})
	if err != nil {
		return wire.QueryResult{}, &Error{Code: "unavailable", Message: fmt.Sprintf("beginning a read-only transaction: %v", err)}
	}
	setup := fmt.Sprintf("SET LOCAL statement_timeout = %d", max(l.timeout.Milliseconds(), 1))
	if p.role != "" {
		setup += "; SET LOCAL ROLE " + pgx.Identifier{p.role}.Sanitize()
	}
	if _, err := conn.Conn().PgConn().Exec(ctx, setup).ReadAll(); err != nil {
		return wire.QueryResult{}, &Error{Code: "unavailable", Message: fmt.Sprintf("setting the query's limits: %v", err)}
	}
	res, qerr := p.run(ctx, tx, sql, params, l)
	if conn.Conn().IsClosed() {
		// Reading was cut at a limit or the deadline: the connection went
		// with the query, and its transaction with it.
		return res, qerr
	}
	// A statement that ended the transaction (COMMIT, ROLLBACK) would leave
	// whatever follows outside it: refuse it, and drop the session.
	status := conn.Conn().PgConn().TxStatus()
	if qerr == nil && status != 'T' {
		return wire.QueryResult{}, &Error{Code: "read_only", Message: "refused: the statement ended the read-only transaction"}
	}
	rctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if tx.Rollback(rctx) == nil {
		// Session state that a rollback keeps (advisory locks, prepared
		// statements, LISTEN) goes too.
		if _, err := conn.Conn().PgConn().Exec(rctx, "DISCARD ALL").ReadAll(); err == nil {
			keep = true
		}
	}
	if qerr != nil {
		return wire.QueryResult{}, qerr
	}
	return res, nil
}

func (p *postgres) run(ctx context.Context, tx pgx.Tx, sql string, params []any, l limits) (wire.QueryResult, error) {
	// Reading stops at the limits; the rest of a long result is not
	// drained but cancelled with the query.
	qctx, cancel := context.WithCancel(ctx)
	defer cancel()
	rows, err := tx.Query(qctx, sql, params...)
	if err != nil {
		return wire.QueryResult{}, pgError(err)
	}
	defer rows.Close()
	c := collector{l: l}
	tm := tx.Conn().TypeMap()
	types := make([]string, 0)
	for _, f := range rows.FieldDescriptions() {
		typ := fmt.Sprintf("oid:%d", f.DataTypeOID)
		if t, ok := tm.TypeForOID(f.DataTypeOID); ok {
			typ = t.Name
		}
		types = append(types, typ)
		c.out.Columns = append(c.out.Columns, wire.Column{Name: f.Name, Type: typ})
	}
	for rows.Next() {
		vals, err := rows.Values()
		if err != nil {
			return wire.QueryResult{}, pgError(err)
		}
		row := make([]any, len(vals))
		for i, v := range vals {
			row[i] = jsonValue(v, types[i])
		}
		if !c.add(row) {
			cancel()
			break
		}
	}
	if err := rows.Err(); err != nil && !c.out.Truncated {
		return wire.QueryResult{}, pgError(err)
	}
	return c.result(), nil
}

// pgError classifies a PostgreSQL error: the read-only refusals, the
// statement timeout, and SQL errors with the server's message.
func pgError(err error) error {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch pe.Code {
		case "25006": // read_only_sql_transaction
			return &Error{Code: "read_only", Message: "refused, the database is read-only for sqlQuery: " + pe.Message}
		case "57014": // query_canceled: statement_timeout
			return &Error{Code: "timeout", Message: "the query ran longer than its time limit and was stopped: " + pe.Message}
		case "42501": // insufficient_privilege
			return &Error{Code: "forbidden", Message: "refused by the database's privileges: " + pe.Message}
		}
		return &Error{Code: "sql_error", Message: fmt.Sprintf("%s (SQLSTATE %s)", pe.Message, pe.Code)}
	}
	return &Error{Code: "sql_error", Message: err.Error()}
}
