// Package store keeps everything agenthost persists, behind one SQL
// implementation that runs on two databases:
//
//   - the embedded default, SQLite through a pure-Go driver (no server, no cgo),
//     chosen when no database URL is configured so `agenthost serve` works on a
//     fresh machine;
//   - PostgreSQL through pgx, the deployment for teams and for several hosts.
//
// The domain packages (tenancy, files, …) declare the store interfaces they
// need; this package implements them. Queries are written once in the SQL both
// databases accept (placeholders are rebound for PostgreSQL) and the few
// places where the dialects differ are switched on [Dialect]. One conformance
// suite (package storetest) runs every scenario against both.
package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/pressly/goose/v3"
	_ "modernc.org/sqlite" // registers the "sqlite" database/sql driver

	"github.com/agenthost/agenthost/host/knowledge/analysis"
	"github.com/agenthost/agenthost/migrations"
)

// Dialect names the database a DB talks to.
type Dialect string

// The two dialects.
const (
	SQLite   Dialect = "sqlite"
	Postgres Dialect = "postgres"
)

// Config says which database to open.
type Config struct {
	// URL is a PostgreSQL connection URL (postgres://…). Empty selects the
	// embedded SQLite database in Dir.
	URL string
	// Dir is the data directory of the embedded database (agenthost.db).
	Dir string
	// Logger receives migration progress; nil discards it.
	Logger *slog.Logger
	// ConnectWait is how long Open keeps retrying a PostgreSQL server that
	// does not answer (0: one attempt).
	ConnectWait time.Duration
	// VectorExactBelow applies on PostgreSQL with pgvector: a vector search
	// whose scope holds at most this many vectors compares them all instead
	// of asking the HNSW index (0: 10,000; negative: always the index).
	VectorExactBelow int
}

// DB is an open database of either dialect. It is safe for concurrent use.
type DB struct {
	dialect Dialect
	sql     *sql.DB
	pool    *pgxpool.Pool // PostgreSQL only
	logger  *slog.Logger
	vectors *pgVectors // PostgreSQL only: the pgvector HNSW index (pgvector.go)
	own     *pidSet    // PostgreSQL only: the pool's backend pids (listen.go)
	tokens  tokenLookups
	// analyzer analyses chunks and queries for the lexical index, the same
	// on both dialects (host/knowledge/analysis).
	analyzer *analysis.Analyzer
}

// Open connects to the configured database. It does not migrate; call
// Migrate (the server does so for the embedded store on start-up).
func Open(ctx context.Context, cfg Config) (*DB, error) {
	logger := cfg.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	if cfg.URL == "" {
		return openSQLite(cfg.Dir, logger)
	}
	pcfg, err := pgxpool.ParseConfig(cfg.URL)
	if err != nil {
		return nil, fmt.Errorf("store: database URL: %w", err)
	}
	if !strings.Contains(cfg.URL, "pool_max_conns") {
		// pgxpool's default (max(4, cores)) is too few here: the job queue
		// holds one connection for LISTEN, and uploads, listings and event
		// streams run beside it. A URL may still set pool_max_conns.
		pcfg.MaxConns = int32(max(16, 4*runtime.NumCPU()))
	}
	// The pool's backends are known by pid, so that the events listener
	// can skip announcements of this process's own appends.
	own := &pidSet{}
	pcfg.AfterConnect = func(_ context.Context, c *pgx.Conn) error {
		own.add(c.PgConn().PID())
		return nil
	}
	pcfg.BeforeClose = func(c *pgx.Conn) { own.remove(c.PgConn().PID()) }
	pool, err := pgxpool.NewWithConfig(ctx, pcfg)
	if err != nil {
		return nil, fmt.Errorf("store: connect: %w", err)
	}
	if err := ping(ctx, pool, cfg, logger); err != nil {
		pool.Close()
		return nil, err
	}
	db := &DB{dialect: Postgres, sql: stdlib.OpenDBFromPool(pool), pool: pool, logger: logger,
		vectors: newPGVectors(cfg.VectorExactBelow, logger), own: own, analyzer: analysis.New()}
	db.tokens.db = db
	return db, nil
}

// ping waits for the database to answer: a host started beside its
// database (a deploy, a machine's boot) must not fail because the database
// came up a few seconds later. It retries with a doubling pause (up to 5 s)
// until cfg.ConnectWait has passed, logging each failure.
func ping(ctx context.Context, pool *pgxpool.Pool, cfg Config, logger *slog.Logger) error {
	start := time.Now()
	pause := 250 * time.Millisecond
	for attempt := 1; ; attempt++ {
		err := pool.Ping(ctx)
		if err == nil {
			if attempt > 1 {
				logger.Info("database reachable", "attempts", attempt, "after", time.Since(start).Round(time.Millisecond))
			}
			return nil
		}
		waited := time.Since(start)
		if ctx.Err() != nil || waited+pause > cfg.ConnectWait {
			if attempt > 1 {
				return fmt.Errorf("store: connect to %s: not reachable after %d attempts in %v: %w", redact(cfg.URL), attempt, waited.Round(time.Millisecond), err)
			}
			return fmt.Errorf("store: connect to %s: %w", redact(cfg.URL), err)
		}
		logger.Warn("database not reachable, retrying", "url", redact(cfg.URL), "attempt", attempt, "retryIn", pause, "err", err)
		select {
		case <-ctx.Done():
			return fmt.Errorf("store: connect to %s: %w", redact(cfg.URL), ctx.Err())
		case <-time.After(pause):
		}
		pause = min(2*pause, 5*time.Second)
	}
}

// uriPath escapes what ends or changes a path in an SQLite URI filename.
func uriPath(p string) string {
	return strings.NewReplacer("%", "%25", "?", "%3F", "#", "%23").Replace(p)
}

func openSQLite(dir string, logger *slog.Logger) (*DB, error) {
	if dir == "" {
		return nil, errors.New("store: the embedded database needs a data directory")
	}
	if err := os.MkdirAll(dir, 0o750); err != nil {
		if errors.Is(err, syscall.EROFS) || errors.Is(err, os.ErrPermission) {
			return nil, fmt.Errorf("store: the data directory %s cannot be created: %w: %w", dir, ErrReadOnly, err)
		}
		return nil, fmt.Errorf("store: %w", err)
	}
	if err := checkWritable(dir); err != nil {
		return nil, err
	}
	// WAL lets readers run beside the one writer; immediate transactions take
	// the write lock up front, so two writers queue on busy_timeout instead of
	// failing when one upgrades a read lock.
	// The path is a URI's: a '#' or '?' in a directory's name would
	// otherwise end it (a data directory "a#1" opened the file "a").
	dsn := "file:" + uriPath(filepath.Join(dir, "agenthost.db")) +
		"?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)&_pragma=foreign_keys(1)" +
		"&_pragma=synchronous(NORMAL)&_txlock=immediate"
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("store: open embedded database: %w", err)
	}
	if err := db.Ping(); err != nil {
		db.Close()
		return nil, fmt.Errorf("store: open embedded database: %w", err)
	}
	d := &DB{dialect: SQLite, sql: db, logger: logger, analyzer: analysis.New()}
	d.tokens.db = d
	return d, nil
}

// Dialect reports which database this is.
func (db *DB) Dialect() Dialect { return db.dialect }

// SQL is the database/sql handle (for both dialects; on PostgreSQL it runs on
// the pgx pool).
func (db *DB) SQL() *sql.DB { return db.sql }

// Pool is the pgx pool on PostgreSQL and nil on SQLite.
func (db *DB) Pool() *pgxpool.Pool { return db.pool }

// Close releases the connections.
func (db *DB) Close() error {
	err := db.sql.Close()
	if db.pool != nil {
		db.pool.Close()
	}
	return err
}

// Migrate applies every pending migration of agenthost's schema.
func (db *DB) Migrate(ctx context.Context) error {
	_, err := db.MigrateTo(ctx, 0)
	return err
}

// MigrateTo applies migrations up to version (0: all) and returns the version
// the database is at afterwards. Migrations are forward-only.
func (db *DB) MigrateTo(ctx context.Context, version int64) (int64, error) {
	p, err := db.migrator()
	if err != nil {
		return 0, err
	}
	var results []*goose.MigrationResult
	if version == 0 {
		results, err = p.Up(ctx)
	} else {
		results, err = p.UpTo(ctx, version)
	}
	for _, r := range results {
		db.logger.Info("migration applied", "version", r.Source.Version, "file", r.Source.Path, "took", r.Duration)
	}
	if err != nil {
		return 0, fmt.Errorf("store: migrate: %w", err)
	}
	v, err := p.GetDBVersion(ctx)
	if err != nil {
		return 0, fmt.Errorf("store: migrate: %w", err)
	}
	if v >= analysisMigration {
		if err := db.reanalyse(ctx); err != nil {
			return v, err
		}
	}
	return v, nil
}

// Migrations lists the versions of the schema's migrations, oldest first.
func (db *DB) Migrations() ([]int64, error) {
	p, err := db.migrator()
	if err != nil {
		return nil, err
	}
	var vs []int64
	for _, s := range p.ListSources() {
		vs = append(vs, s.Version)
	}
	return vs, nil
}

func (db *DB) migrator() (*goose.Provider, error) {
	fsys, err := migrations.FS(string(db.dialect))
	if err != nil {
		return nil, err
	}
	dialect := goose.DialectSQLite3
	if db.dialect == Postgres {
		dialect = goose.DialectPostgres
	}
	p, err := goose.NewProvider(dialect, db.sql, fsys, goose.WithDisableGlobalRegistry(true))
	if err != nil {
		return nil, fmt.Errorf("store: migrations: %w", err)
	}
	return p, nil
}

// redact drops the password from a URL for messages.
func redact(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "the database"
	}
	if _, ok := u.User.Password(); ok {
		u.User = url.UserPassword(u.User.Username(), "xxx")
	}
	return strings.TrimSpace(u.String())
}

// Pending reports whether migrations are waiting to be applied.
func (db *DB) Pending(ctx context.Context) (bool, error) {
	p, err := db.migrator()
	if err != nil {
		return false, err
	}
	return p.HasPending(ctx)
}
