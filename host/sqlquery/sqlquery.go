// Package sqlquery is the host side of the sqlQuery tool (the "chatbot"
// tool set): read-only, parameterised queries against the databases the
// operator configured, for the workspaces the operator granted each one to.
// Read-only is enforced by the database, never by parsing the statement:
// PostgreSQL runs it in a READ ONLY transaction that is always rolled back,
// with SET LOCAL statement_timeout and optionally SET LOCAL ROLE, and the
// session is reset afterwards; SQLite opens the file read-only with
// query_only and an authorizer that allows reading only. Rows, time and
// result bytes are bounded.
package sqlquery

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/agenthost/agenthost/host/toolcall"
	"github.com/agenthost/agenthost/pdk/sqlquery/wire"
)

// Config is the operator's databases (section sqlQuery of the
// configuration file), by the name tools use.
type Config struct {
	Databases map[string]Database `yaml:"databases"`
}

// Database is one database the operator offers.
type Database struct {
	// Driver is "postgres" or "sqlite".
	Driver string `yaml:"driver"`
	// DSN is a PostgreSQL connection URL, or DSNEnv the environment
	// variable holding it (keeps passwords out of files). The login should
	// be a role with SELECT on what the agent may read and nothing more.
	DSN    string `yaml:"dsn"`
	DSNEnv string `yaml:"dsnEnv"`
	// Path is the SQLite database file; it is opened read-only.
	Path string `yaml:"path"`
	// Role is a PostgreSQL role every query runs as (SET LOCAL ROLE).
	Role string `yaml:"role"`
	// Description tells the agent what the database holds.
	Description string `yaml:"description"`
	// MaxRows (500), Timeout (10 s) and MaxResultBytes (1 MiB) bound one query.
	MaxRows        int           `yaml:"maxRows"`
	Timeout        time.Duration `yaml:"timeout"`
	MaxResultBytes int           `yaml:"maxResultBytes"`
	// Tenants and Workspaces are the grant: a tool call may use the
	// database when its tenant is listed ("*": every tenant) or its
	// workspace is. Neither listed: nobody may.
	Tenants    []string `yaml:"tenants"`
	Workspaces []string `yaml:"workspaces"`
}

// Error is a query refused or failed, with a code: unknown_database,
// invalid_arguments, read_only, forbidden, timeout, too_large, sql_error,
// unavailable.
type Error struct {
	Code    string
	Message string
}

func (e *Error) Error() string { return e.Code + ": " + e.Message }

// limits bound one query.
type limits struct {
	rows    int
	bytes   int
	timeout time.Duration
}

// backend runs one query on one database.
type backend interface {
	query(ctx context.Context, sql string, params []any, l limits) (wire.QueryResult, error)
	close()
}

type database struct {
	cfg Database
	b   backend
}

// Service runs queries for tool calls. It is safe for concurrent use.
type Service struct {
	dbs    map[string]*database
	logger *slog.Logger
}

// New checks the configuration and opens the databases (connections are
// made when first used); env reads DSNEnv (os.Getenv).
func New(cfg Config, env func(string) string, logger *slog.Logger) (*Service, error) {
	if logger == nil {
		logger = slog.Default()
	}
	s := &Service{dbs: map[string]*database{}, logger: logger}
	for _, name := range sortedNames(cfg.Databases) {
		d := cfg.Databases[name]
		if name == "" || strings.ContainsAny(name, " \t\n") {
			s.Close()
			return nil, fmt.Errorf("sqlQuery.databases: %q is not a usable name", name)
		}
		if d.MaxRows <= 0 {
			d.MaxRows = 500
		}
		if d.Timeout <= 0 {
			d.Timeout = 10 * time.Second
		}
		if d.MaxResultBytes <= 0 {
			d.MaxResultBytes = 1 << 20
		}
		var b backend
		var err error
		switch d.Driver {
		case "postgres", "postgresql":
			dsn := d.DSN
			if d.DSNEnv != "" {
				if env == nil || env(d.DSNEnv) == "" {
					err = fmt.Errorf("dsnEnv %s is not set", d.DSNEnv)
					break
				}
				dsn = env(d.DSNEnv)
			}
			if dsn == "" {
				err = errors.New("driver postgres needs dsn or dsnEnv")
				break
			}
			b, err = openPostgres(dsn, d.Role)
		case "sqlite":
			if d.Role != "" {
				err = errors.New("role is for PostgreSQL only")
				break
			}
			b, err = openSQLite(d.Path)
		default:
			err = fmt.Errorf("driver %q: want postgres or sqlite", d.Driver)
		}
		if err != nil {
			s.Close()
			return nil, fmt.Errorf("sqlQuery.databases.%s: %w", name, err)
		}
		s.dbs[name] = &database{cfg: d, b: b}
	}
	return s, nil
}

// Close closes every database.
func (s *Service) Close() {
	for _, d := range s.dbs {
		d.b.close()
	}
}

// granted reports whether caller may use d.
func (d *database) granted(c toolcall.Caller) bool {
	if c.Principal.TenantID == "" {
		return false
	}
	return slices.Contains(d.cfg.Tenants, "*") || slices.Contains(d.cfg.Tenants, c.Principal.TenantID) ||
		c.WorkspaceID != "" && slices.Contains(d.cfg.Workspaces, c.WorkspaceID)
}

// Names lists the databases caller may use, each with the operator's
// description in parentheses when it has one.
func (s *Service) Names(c toolcall.Caller) []string {
	var out []string
	for name, d := range s.dbs {
		if d.granted(c) {
			if d.cfg.Description != "" {
				name += " (" + d.cfg.Description + ")"
			}
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out
}

// Query runs r for caller. A database the caller is not granted is
// reported exactly as one that does not exist.
func (s *Service) Query(ctx context.Context, c toolcall.Caller, r wire.QueryRequest) (wire.QueryResult, error) {
	d, ok := s.dbs[r.Database]
	if !ok || !d.granted(c) {
		names := s.Names(c)
		list := "none"
		if len(names) > 0 {
			list = strings.Join(names, ", ")
		}
		return wire.QueryResult{}, &Error{Code: "unknown_database", Message: fmt.Sprintf("no database %q for this workspace; databases you may query: %s", r.Database, list)}
	}
	if strings.TrimSpace(r.SQL) == "" {
		return wire.QueryResult{}, &Error{Code: "invalid_arguments", Message: "sql is empty"}
	}
	if len(r.SQL) > 64<<10 {
		return wire.QueryResult{}, &Error{Code: "invalid_arguments", Message: "sql is longer than 65536 bytes"}
	}
	if len(r.Params) > 100 {
		return wire.QueryResult{}, &Error{Code: "invalid_arguments", Message: "more than 100 params"}
	}
	params := make([]any, len(r.Params))
	for i, p := range r.Params {
		v, err := param(p)
		if err != nil {
			return wire.QueryResult{}, &Error{Code: "invalid_arguments", Message: fmt.Sprintf("params[%d]: %v", i, err)}
		}
		params[i] = v
	}
	l := limits{rows: d.cfg.MaxRows, bytes: d.cfg.MaxResultBytes, timeout: d.cfg.Timeout}
	if r.MaxRows > 0 && r.MaxRows < l.rows {
		l.rows = r.MaxRows
	}
	start := time.Now()
	qctx, cancel := context.WithTimeout(ctx, l.timeout)
	defer cancel()
	out, err := d.b.query(qctx, r.SQL, params, l)
	if err != nil {
		if ctx.Err() == nil && qctx.Err() != nil && !isErr(err, "read_only") {
			err = &Error{Code: "timeout", Message: fmt.Sprintf("the query ran longer than %s and was stopped", l.timeout)}
		}
		s.logger.Debug("sqlQuery refused or failed", "database", r.Database, "err", err)
		return wire.QueryResult{}, err
	}
	out.Database = r.Database
	out.ElapsedMs = time.Since(start).Milliseconds()
	return out, nil
}

func isErr(err error, code string) bool {
	var e *Error
	return errors.As(err, &e) && e.Code == code
}

// param turns a JSON parameter into a driver value: null, a boolean, an
// integer, a float or a string; arrays and objects are refused.
func param(p any) (any, error) {
	switch v := p.(type) {
	case nil, bool, string:
		return v, nil
	case json.Number:
		if i, err := v.Int64(); err == nil {
			return i, nil
		}
		f, err := v.Float64()
		if err != nil {
			return nil, err
		}
		return f, nil
	case float64:
		if v == math.Trunc(v) && math.Abs(v) < 1<<53 {
			return int64(v), nil
		}
		return v, nil
	default:
		return nil, fmt.Errorf("%T is not a scalar (null, boolean, number or string)", p)
	}
}

func sortedNames(m map[string]Database) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
