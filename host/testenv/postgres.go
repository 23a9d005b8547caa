package testenv

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// pgBinDir is where Debian's postgresql-15 package puts the server binaries.
const pgBinDir = "/usr/lib/postgresql/15/bin"

// Postgres returns a connection URL (postgres://...) to a new, empty database on a
// PostgreSQL 15 server that this test process starts on first use, or on the server
// named by AGENTHOST_TEST_POSTGRES_URL when that is set.
//
// Each call creates its own database (CREATE DATABASE), so tests are isolated from
// each other and may run in parallel; the database is dropped (WITH (FORCE)) when
// tb's test ends. On the server this process starts, the URL names the superuser
// postgres with no password over TCP on 127.0.0.1. The server is a real one:
// LISTEN/NOTIFY, advisory locks, SKIP LOCKED and many connections (max_connections
// is 200) behave as in production. It trades durability for speed (fsync=off) and
// lives in a temporary directory that [Main] removes.
//
// Cost, measured on a busy 2-core machine: the first call in a test binary runs
// initdb and starts the server, 1.2-3.5 s; every call 0.1-0.2 s (CREATE DATABASE
// copies template1); the drop at the end of the test about 7 ms.
// When tests run as root (CI), the server runs as the user nobody, because
// PostgreSQL refuses to run as root; otherwise as the current user.
//
// A missing PostgreSQL fails tb with what to install (`apt-get install -y
// postgresql`, or `make testdeps`).
func Postgres(tb testing.TB) string {
	tb.Helper()
	srv, err := postgresServer(tb)
	if err != nil {
		tb.Fatalf("testenv: %v", err)
	}
	u, err := srv.newDatabase(tb)
	if err != nil {
		tb.Fatalf("testenv: PostgreSQL: %v", err)
	}
	return u
}

// pg is the PostgreSQL server of this process: started (or connected to) once, on
// first use. A failed start is remembered, so every later test fails at once with
// the same reason instead of trying again for seconds each.
var pg struct {
	mu  sync.Mutex
	srv *dbServer
	err error
}

func postgresServer(tb testing.TB) (*dbServer, error) {
	pg.mu.Lock()
	defer pg.mu.Unlock()
	if pg.srv != nil || pg.err != nil {
		return pg.srv, pg.err
	}
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	if env := os.Getenv("AGENTHOST_TEST_POSTGRES_URL"); env != "" {
		pg.srv, pg.err = connectServer(ctx, env)
		if pg.err != nil {
			pg.err = fmt.Errorf("AGENTHOST_TEST_POSTGRES_URL: %w", pg.err)
		}
		return pg.srv, pg.err
	}
	start := time.Now()
	c, err := startCluster(ctx)
	if err != nil {
		pg.err = fmt.Errorf("starting PostgreSQL 15: %w", err)
		return nil, pg.err
	}
	srv, err := connectServer(ctx, c.url())
	if err != nil {
		pg.err = errors.Join(fmt.Errorf("connecting to the PostgreSQL 15 server it started: %w", err), c.stop(ctx))
		return nil, pg.err
	}
	srv.stopServer = c.stop
	pg.srv = srv
	tb.Logf("testenv: started PostgreSQL 15 on port %d in %v", c.port, time.Since(start).Round(time.Millisecond))
	return pg.srv, nil
}

func stopPostgres(ctx context.Context) error {
	pg.mu.Lock()
	defer pg.mu.Unlock()
	srv := pg.srv
	pg.srv, pg.err = nil, nil
	if srv == nil {
		return nil
	}
	return srv.close(ctx)
}

// dbServer is a PostgreSQL server on which tests get databases of their own.
type dbServer struct {
	base       *url.URL      // the admin URL; a test's URL is this with its database as path
	admin      *pgxpool.Pool // creates and drops the tests' databases
	stopServer func(context.Context) error
}

// connectServer connects to the server at rawURL, which must be a URL (not a
// key=value string) since tests get the same URL with another database.
func connectServer(ctx context.Context, rawURL string) (*dbServer, error) {
	// The URL is not quoted in errors: it may hold a password.
	u, err := url.Parse(rawURL)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
		return nil, errors.New("want a postgres://user:password@host:port/database URL")
	}
	cfg, err := pgxpool.ParseConfig(rawURL)
	if err != nil {
		return nil, fmt.Errorf("parsing %s: %w", u.Redacted(), err)
	}
	cfg.MaxConns = 4
	admin, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("connecting to %s: %w", u.Redacted(), err)
	}
	if err := admin.Ping(ctx); err != nil {
		admin.Close()
		return nil, fmt.Errorf("connecting to %s: %w", u.Redacted(), err)
	}
	return &dbServer{base: u, admin: admin}, nil
}

// newDatabase creates a database for tb, drops it when tb ends, and returns its URL.
func (s *dbServer) newDatabase(tb testing.TB) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), opTimeout)
	defer cancel()
	name := dbName(tb.Name())
	ident := pgx.Identifier{name}.Sanitize()
	if _, err := s.admin.Exec(ctx, "CREATE DATABASE "+ident); err != nil {
		return "", fmt.Errorf("creating database %s on %s: %w", name, s.base.Redacted(), err)
	}
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), opTimeout)
		defer cancel()
		// FORCE: a test that left connections open must not keep its database.
		if _, err := s.admin.Exec(ctx, "DROP DATABASE IF EXISTS "+ident+" WITH (FORCE)"); err != nil {
			tb.Logf("testenv: dropping database %s: %v", name, err)
		}
	})
	u := *s.base
	u.Path = "/" + name
	u.RawPath = ""
	return u.String(), nil
}

func (s *dbServer) close(ctx context.Context) error {
	s.admin.Close()
	if s.stopServer == nil {
		return nil
	}
	return s.stopServer(ctx)
}

// cluster is a PostgreSQL server this process started, running under a supervisor
// shell (pgSupervisor) that stops it and removes dir when its stdin closes.
type cluster struct {
	dir  string // data directory, also holds the Unix socket and server.log
	port int
	// child is the supervisor: closing its stdin stops the server.
	*child
}

// pgSupervisor runs as the cluster's owner with $1 the data directory, $2 the port,
// $3 the binary directory. It prints "ready" once the server accepts connections.
// pg_ctl detaches the postmaster into its own session, so nothing but this script
// (or postmaster.pid going away, which PostgreSQL checks every minute) stops it.
const pgSupervisor = `set -u
dir=$1 port=$2 bin=$3
if ! "$bin/pg_ctl" -D "$dir" -l "$dir/server.log" -s -w -t 120 -o "-p $port" start; then
	echo failed
	exit 1
fi
echo ready
# Block until the test process closes our stdin: Main does, and the kernel does when
# that process exits, crashes or is killed.
while read -r _; do :; done
# Output to /dev/null: when the test process was killed, our stdout and stderr are
# pipes nobody reads, and a write there (any warning) would kill pg_ctl by SIGPIPE
# before it stops the server.
"$bin/pg_ctl" -D "$dir" -s -m immediate -w -t 60 stop >/dev/null 2>&1
rm -rf "$dir"
`

// pgSettings keep a throw-away test server light and fast. Durability is pointless
// for a cluster deleted after the run; the rest keeps memory small while allowing
// the many connections of parallel tests with their pools.
const pgSettings = `
# added by host/testenv
listen_addresses = '127.0.0.1'
unix_socket_directories = '%s'
max_connections = 200
shared_buffers = 16MB
fsync = off
synchronous_commit = off
full_page_writes = off
wal_level = minimal
max_wal_senders = 0
logging_collector = off
`

func startCluster(ctx context.Context) (*cluster, error) {
	for _, b := range []string{"initdb", "pg_ctl", "postgres"} {
		if _, err := os.Stat(filepath.Join(pgBinDir, b)); err != nil {
			return nil, fmt.Errorf("%s/%s not found: install PostgreSQL 15 with `apt-get install -y postgresql` (or run `make testdeps`)", pgBinDir, b)
		}
	}
	asUser, owner, err := unprivileged()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "agenthost-pg-")
	if err != nil {
		return nil, fmt.Errorf("creating the data directory: %w", err)
	}
	if owner != nil {
		if err := os.Chown(dir, owner.uid, owner.gid); err != nil {
			return nil, errors.Join(fmt.Errorf("handing %s to nobody: %w", dir, err), os.RemoveAll(dir))
		}
	}
	initdb := command(ctx, asUser, filepath.Join(pgBinDir, "initdb"), "-D", dir, "-U", "postgres", "--auth=trust",
		"-E", "UTF8", "--locale=C.UTF-8", "--no-sync", "--no-instructions")
	if out, err := initdb.CombinedOutput(); err != nil {
		return nil, errors.Join(fmt.Errorf("initdb: %w: %s", err, tail(string(out), 2000)), os.RemoveAll(dir))
	}
	conf, err := os.OpenFile(filepath.Join(dir, "postgresql.conf"), os.O_APPEND|os.O_WRONLY, 0)
	if err == nil {
		_, err = fmt.Fprintf(conf, pgSettings, strings.ReplaceAll(dir, "'", "''"))
		err = errors.Join(err, conf.Close())
	}
	if err != nil {
		return nil, errors.Join(fmt.Errorf("configuring the cluster: %w", err), os.RemoveAll(dir))
	}
	// The port is free when picked but another process may take it before the
	// server binds it: try again with another.
	for attempt := 1; ; attempt++ {
		port, err := freePort()
		if err != nil {
			return nil, errors.Join(err, os.RemoveAll(dir))
		}
		c, err := superviseCluster(ctx, asUser, dir, port)
		if err == nil {
			return c, nil
		}
		log, _ := os.ReadFile(filepath.Join(dir, "server.log"))
		if attempt < 5 && strings.Contains(string(log), "could not bind") {
			continue
		}
		return nil, errors.Join(fmt.Errorf("%w; server.log: %s", err, tail(string(log), 2000)), os.RemoveAll(dir))
	}
}

func superviseCluster(ctx context.Context, asUser []string, dir string, port int) (*cluster, error) {
	ch, err := startChild(command(context.Background(), asUser, "/bin/sh", "-c", pgSupervisor, "sh", dir, strconv.Itoa(port), pgBinDir), nil)
	if err != nil {
		return nil, fmt.Errorf("the PostgreSQL supervisor: %w", err)
	}
	c := &cluster{dir: dir, port: port, child: ch}
	select {
	case line := <-c.lines:
		if line == "ready" {
			return c, nil
		}
	case <-c.exited:
	case <-ctx.Done():
	}
	haltErr := c.halt(context.Background())
	return nil, errors.Join(fmt.Errorf("pg_ctl start failed: %s", tail(c.stderr.String(), 2000)), ctx.Err(), haltErr)
}

func (c *cluster) url() string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", c.port)
}

// stop stops the server and removes its directory.
func (c *cluster) stop(ctx context.Context) error {
	err := c.halt(ctx)
	// The supervisor removes dir after stopping the server; this is for when it could not.
	return errors.Join(err, os.RemoveAll(c.dir))
}

// halt tells the supervisor to stop the server and waits for it; if it does not
// finish in time, the server is killed. It leaves dir to the caller: a start that
// failed on a taken port tries again in the same directory.
func (c *cluster) halt(ctx context.Context) error {
	// The postmaster is in a session of its own (pg_ctl detached it), so it is
	// not in the supervisor's process group: it is signalled too.
	if c.close(ctx, func() {
		if pid, err := postmasterPID(c.dir); err == nil {
			_ = syscall.Kill(pid, syscall.SIGQUIT) // immediate shutdown, children included
		}
	}) {
		return nil
	}
	return fmt.Errorf("PostgreSQL on port %d did not stop in time: killed: %w", c.port, ctx.Err())
}

func postmasterPID(dir string) (int, error) {
	b, err := os.ReadFile(filepath.Join(dir, "postmaster.pid"))
	if err != nil {
		return 0, err
	}
	first, _, _ := strings.Cut(string(b), "\n")
	return strconv.Atoi(strings.TrimSpace(first))
}

type ids struct{ uid, gid int }

// unprivileged returns, when this process is root, the command prefix that runs a
// program as an unprivileged user and that user's ids, since PostgreSQL refuses to
// run as root (CI runs tests as root). Otherwise both are nil: programs run as we are.
func unprivileged() (prefix []string, owner *ids, err error) {
	if os.Geteuid() != 0 {
		return nil, nil, nil
	}
	runuser, err := exec.LookPath("runuser")
	if err != nil {
		return nil, nil, fmt.Errorf("running as root, PostgreSQL needs runuser to start as nobody: install util-linux: %w", err)
	}
	u, err := user.Lookup("nobody")
	if err != nil {
		return nil, nil, fmt.Errorf("running as root, PostgreSQL needs the user nobody: %w", err)
	}
	uid, err1 := strconv.Atoi(u.Uid)
	gid, err2 := strconv.Atoi(u.Gid)
	if err := errors.Join(err1, err2); err != nil {
		return nil, nil, fmt.Errorf("user nobody: %w", err)
	}
	return []string{runuser, "-u", "nobody", "--"}, &ids{uid, gid}, nil
}

// command returns the command that runs name with args behind prefix (see
// unprivileged). It runs in /, since the working directory (the package's folder)
// may be one that nobody cannot enter, such as a clone under a private home or
// temporary folder; every path it is given is absolute.
func command(ctx context.Context, prefix []string, name string, args ...string) *exec.Cmd {
	argv := append(append(append([]string(nil), prefix...), name), args...)
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir = "/"
	return cmd
}

// freePort returns a TCP port on 127.0.0.1 that was free a moment ago.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("picking a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
