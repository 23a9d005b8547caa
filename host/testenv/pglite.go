package testenv

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// PGVector returns a connection URL to an isolated PostgreSQL 18 database with the
// pgvector extension available (`CREATE EXTENSION vector` works), served over the
// wire protocol by PGlite, which this process starts on first use with node; or a
// new database on the server named by AGENTHOST_TEST_PGVECTOR_URL when that is set
// (a PostgreSQL with pgvector; PGlite cannot be shared that way, see below).
//
// Isolation: PGlite is one PostgreSQL backend in WebAssembly. It has one session,
// which every connection to it shares, and it ignores the database name, so neither
// a database nor a schema per call would isolate anything. Each call therefore gets
// a PGlite instance of its own, on its own port, for as long as tb's test runs: an
// empty database "postgres" with only the public schema, user postgres, no
// password. When the test ends the instance is disconnected, wiped (every schema,
// extension, role and bit of session state dropped) and reused by a later call.
//
// The URL asks pgx for the simple query protocol (default_query_exec_mode=
// simple_protocol) and a small pool (pool_max_conns=2): connections interleave on the
// one backend message by message, and only a simple-protocol query is one message,
// so it is the only mode in which two connections cannot run each other's prepared
// statements or collide on statement names. Keep pools small: all connections queue
// on one backend anyway. What PGlite cannot do: COPY FROM STDIN (pgx's CopyFrom;
// the instance is then discarded); LISTEN/NOTIFY between connections; a query on one
// connection waits while another connection is inside a transaction (so code that
// waits for it from inside the transaction deadlocks); SET and temporary tables are
// seen by all connections of the test. Use [Postgres] for queues, notifications and
// concurrency, and PGVector for vector search.
//
// Cost, measured on a busy 2-core machine: the first call in a test binary starts
// node with one instance, 2-5 s (4-12 s on the very first run after npm install,
// which caches a data directory in node_modules/.cache). A call that finds a
// released instance takes 10-100 ms; one made while every instance is leased starts
// another node process, 1.5-3 s, each using about 450 MB, up to
// AGENTHOST_TEST_PGLITE_INSTANCES (default 4) at once, beyond which calls wait for a
// test to end.
//
// Missing node or npm packages fail tb with what to install (`make testdeps`).
func PGVector(tb testing.TB) string {
	tb.Helper()
	if env := os.Getenv("AGENTHOST_TEST_PGVECTOR_URL"); env != "" {
		srv, err := pgvectorExternal(env)
		if err != nil {
			tb.Fatalf("testenv: AGENTHOST_TEST_PGVECTOR_URL: %v", err)
		}
		u, err := srv.newDatabase(tb)
		if err != nil {
			tb.Fatalf("testenv: AGENTHOST_TEST_PGVECTOR_URL: %v", err)
		}
		return u
	}
	pool, err := pglitePool(tb)
	if err != nil {
		tb.Fatalf("testenv: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), opTimeout)
	defer cancel()
	inst, err := pool.lease(ctx)
	if err != nil {
		tb.Fatalf("testenv: PGlite: %v", err)
	}
	tb.Cleanup(func() { pool.release(inst) })
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable&default_query_exec_mode=simple_protocol&pool_max_conns=2", inst.port)
}

// pgv holds this process's PGlite server, or the external server, once started. As
// with pg, a failed start is remembered.
var pgv struct {
	mu   sync.Mutex
	lite *pgliteInstances
	ext  *dbServer
	err  error
}

func pgvectorExternal(rawURL string) (*dbServer, error) {
	pgv.mu.Lock()
	defer pgv.mu.Unlock()
	if pgv.ext != nil || pgv.err != nil {
		return pgv.ext, pgv.err
	}
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	srv, err := connectServer(ctx, rawURL)
	if err != nil {
		pgv.err = err
		return nil, err
	}
	var version string
	var vector bool
	err = srv.admin.QueryRow(ctx, `SELECT version(), EXISTS (SELECT 1 FROM pg_available_extensions WHERE name = 'vector')`).Scan(&version, &vector)
	switch {
	case err != nil:
		pgv.err = fmt.Errorf("checking the server: %w", err)
	case strings.Contains(version, "PGlite"):
		pgv.err = errors.New("the server is PGlite, whose connections all share one session and which ignores database names, so tests cannot be isolated on it: unset the variable to let testenv start PGlite instances of its own, or name a PostgreSQL server with pgvector")
	case !vector:
		pgv.err = fmt.Errorf("the server (%s) has no pgvector extension", version)
	}
	if pgv.err != nil {
		srv.admin.Close()
		return nil, pgv.err
	}
	pgv.ext = srv
	return srv, nil
}

func pglitePool(tb testing.TB) (*pgliteInstances, error) {
	pgv.mu.Lock()
	defer pgv.mu.Unlock()
	if pgv.lite != nil || pgv.err != nil {
		return pgv.lite, pgv.err
	}
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	start := time.Now()
	pgv.lite, pgv.err = startPGlite(ctx)
	if pgv.err != nil {
		pgv.err = fmt.Errorf("starting PGlite: %w", pgv.err)
		return nil, pgv.err
	}
	tb.Logf("testenv: started PGlite (PostgreSQL 18, pgvector) in %v", time.Since(start).Round(time.Millisecond))
	return pgv.lite, nil
}

func stopPGVector(ctx context.Context) error {
	pgv.mu.Lock()
	defer pgv.mu.Unlock()
	lite, ext := pgv.lite, pgv.ext
	pgv.lite, pgv.ext, pgv.err = nil, nil, nil
	var err error
	if ext != nil {
		err = ext.close(ctx)
	}
	if lite != nil {
		err = errors.Join(err, lite.stop(ctx))
	}
	return err
}

// pgliteInstances leases PGlite instances, one node process each (pglite/server.mjs),
// to tests, and wipes and reuses them when the tests end.
type pgliteInstances struct {
	node, dir string
	max       int // instances alive at once

	mu       sync.Mutex
	all      map[*pgliteInstance]bool // every process alive, to stop them all
	idle     []*pgliteInstance        // wiped, waiting for a test
	waiters  []chan leaseResult       // lease calls waiting, oldest first
	starting int                      // processes being started
	wiping   int                      // released instances being wiped
	stopped  bool
}

type leaseResult struct {
	inst *pgliteInstance
	err  error
}

// pgliteDeps are the npm packages server.mjs imports.
var pgliteDeps = []string{"@electric-sql/pglite", "@electric-sql/pglite-socket", "@electric-sql/pglite-pgvector"}

// startPGlite checks what PGlite needs and starts its first instance, so that the
// first test learns at once what is missing and the usual sequential tests never
// wait for a second one.
func startPGlite(ctx context.Context) (*pgliteInstances, error) {
	node, err := exec.LookPath("node")
	if err != nil {
		return nil, errors.New("node not found in PATH: install Node.js 20 or later, then run `make testdeps`")
	}
	dir, err := pgliteDir()
	if err != nil {
		return nil, err
	}
	for _, dep := range pgliteDeps {
		if _, err := os.Stat(filepath.Join(dir, "node_modules", dep, "package.json")); err != nil {
			return nil, fmt.Errorf("npm package %s is not installed in %s: run `make testdeps` (or `npm install` in that directory)", dep, dir)
		}
	}
	maxInst := 4
	if v := os.Getenv("AGENTHOST_TEST_PGLITE_INSTANCES"); v != "" {
		if maxInst, err = strconv.Atoi(v); err != nil || maxInst < 1 {
			return nil, fmt.Errorf("AGENTHOST_TEST_PGLITE_INSTANCES=%q: want a number of at least 1", v)
		}
	}
	first, err := startInstance(ctx, node, dir)
	if err != nil {
		return nil, err
	}
	return &pgliteInstances{
		node: node, dir: dir, max: maxInst,
		all:  map[*pgliteInstance]bool{first: true},
		idle: []*pgliteInstance{first},
	}, nil
}

// lease returns an instance for one test's exclusive use.
func (s *pgliteInstances) lease(ctx context.Context) (*pgliteInstance, error) {
	ch := make(chan leaseResult, 1)
	s.mu.Lock()
	s.waiters = append(s.waiters, ch)
	s.pump()
	s.mu.Unlock()
	select {
	case r := <-ch:
		return r.inst, r.err
	case <-ctx.Done():
	}
	s.mu.Lock()
	waiting := slices.Contains(s.waiters, ch)
	s.waiters = slices.DeleteFunc(s.waiters, func(w chan leaseResult) bool { return w == ch })
	s.mu.Unlock()
	if !waiting { // served while giving up: hand it back
		if r := <-ch; r.err == nil {
			s.release(r.inst)
		}
	}
	return nil, fmt.Errorf("no PGlite instance became free: all %d (AGENTHOST_TEST_PGLITE_INSTANCES) are leased by running tests: %w", s.max, ctx.Err())
}

// pump serves waiting lease calls, with s.mu held: from idle instances first, then
// from instances being wiped (tens of milliseconds, so a test that starts right
// after another ended reuses its instance), and only then from new processes
// (seconds each), up to s.max.
func (s *pgliteInstances) pump() {
	for len(s.waiters) > 0 {
		switch {
		case s.stopped:
			s.serve(leaseResult{err: errors.New("the PGlite servers were stopped (testenv.Main returned)")})
		case len(s.idle) > 0:
			inst := s.idle[len(s.idle)-1]
			s.idle = s.idle[:len(s.idle)-1]
			s.serve(leaseResult{inst: inst})
		case len(s.waiters) > s.wiping+s.starting && len(s.all)+s.starting < s.max:
			s.starting++
			go s.spawn()
		default:
			return
		}
	}
}

// serve hands r to the oldest waiting lease call, with s.mu held.
func (s *pgliteInstances) serve(r leaseResult) {
	ch := s.waiters[0]
	s.waiters = s.waiters[1:]
	ch <- r
}

func (s *pgliteInstances) spawn() {
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	inst, err := startInstance(ctx, s.node, s.dir)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.starting--
	switch {
	case err != nil:
		if len(s.waiters) > 0 {
			s.serve(leaseResult{err: err})
		}
	case s.stopped:
		go inst.stop(context.Background())
	default:
		s.all[inst] = true
		s.idle = append(s.idle, inst)
	}
	s.pump()
}

// release wipes inst in the background and makes it available again; an instance
// that cannot be wiped in time (it lost protocol synchronisation and spins) is killed.
func (s *pgliteInstances) release(inst *pgliteInstance) {
	s.mu.Lock()
	if s.stopped {
		s.mu.Unlock()
		return // stop has it
	}
	s.wiping++
	s.mu.Unlock()
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), wipeTimeout)
		defer cancel()
		err := inst.wipe(ctx)
		if err != nil {
			_ = inst.stop(ctx)
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		s.wiping--
		if err != nil {
			delete(s.all, inst)
		} else if !s.stopped {
			s.idle = append(s.idle, inst)
		}
		s.pump()
	}()
}

// wipeTimeout bounds a wipe, normally tens of milliseconds, so that a spinning
// instance delays the next lease only this long.
const wipeTimeout = 20 * time.Second

func (s *pgliteInstances) stop(ctx context.Context) error {
	s.mu.Lock()
	s.stopped = true
	s.pump() // fails the waiting lease calls
	all := s.all
	s.all, s.idle = nil, nil
	s.mu.Unlock()
	var errs []error
	for inst := range all {
		errs = append(errs, inst.stop(ctx))
	}
	return errors.Join(errs...)
}

// pgliteInstance is one node process running pglite/server.mjs: one PGlite instance
// served on port, which changes at every wipe.
type pgliteInstance struct {
	port int
	// child is node running server.mjs: one JSON reply line per request.
	*child
}

type pgliteReply struct {
	Port  int    `json:"port"`
	Error string `json:"error"`
}

func startInstance(ctx context.Context, node, dir string) (*pgliteInstance, error) {
	cmd := exec.Command(node, "server.mjs")
	cmd.Dir = dir
	// Lines that are not server.mjs's JSON (a library printing) are skipped.
	ch, err := startChild(cmd, func(line string) bool {
		var r pgliteReply
		return json.Unmarshal([]byte(line), &r) == nil && (r.Port != 0 || r.Error != "")
	})
	if err != nil {
		return nil, err
	}
	inst := &pgliteInstance{child: ch}
	if inst.port, err = inst.next(ctx); err != nil {
		return nil, errors.Join(err, inst.stop(context.Background()))
	}
	return inst, nil
}

// next waits for server.mjs to report the port of an empty instance.
func (inst *pgliteInstance) next(ctx context.Context) (int, error) {
	select {
	case line := <-inst.lines:
		var r pgliteReply
		_ = json.Unmarshal([]byte(line), &r) // checked when it was read
		if r.Error != "" {
			return 0, errors.New(r.Error)
		}
		return r.Port, nil
	case <-inst.exited:
		return 0, fmt.Errorf("node server.mjs exited: %s", tail(inst.stderr.String(), 2000))
	case <-ctx.Done():
		return 0, fmt.Errorf("node server.mjs did not answer: %w", ctx.Err())
	}
}

func (inst *pgliteInstance) wipe(ctx context.Context) error {
	if _, err := io.WriteString(inst.stdin, "wipe\n"); err != nil {
		return fmt.Errorf("asking node to wipe: %w", err)
	}
	port, err := inst.next(ctx)
	if err != nil {
		return err
	}
	inst.port = port
	return nil
}

// stop closes node's stdin, on which it exits, and waits; if it does not exit in
// time (it spins), it is killed.
func (inst *pgliteInstance) stop(ctx context.Context) error {
	if inst.close(ctx, nil) {
		return nil
	}
	return fmt.Errorf("node server.mjs did not exit in time: killed: %w", ctx.Err())
}

// pgliteDir finds host/testenv/pglite: next to this source file when the tests are
// built from the module's tree (the usual case, whatever package they test), else
// by walking up from the working directory to the module root.
func pgliteDir() (string, error) {
	const script = "server.mjs"
	if _, file, _, ok := runtime.Caller(0); ok {
		dir := filepath.Join(filepath.Dir(file), "pglite")
		if _, err := os.Stat(filepath.Join(dir, script)); err == nil {
			return dir, nil
		}
	}
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for d := wd; ; d = filepath.Dir(d) {
		dir := filepath.Join(d, "host", "testenv", "pglite")
		if _, err := os.Stat(filepath.Join(dir, script)); err == nil {
			return dir, nil
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("host/testenv/pglite/%s not found above %s: run the tests inside the agenthost module", script, wd)
		}
	}
}
