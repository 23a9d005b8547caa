// Package testenv lets Go tests start real database servers themselves, so that
// `make test` needs nothing started by hand:
//
//   - [Postgres]: a new, empty database on a PostgreSQL 15 server;
//   - [PGVector]: a PostgreSQL 18 with pgvector, served by PGlite (WebAssembly) in node,
//     because Debian bookworm has no pgvector package.
//
// Servers start on first use, once per test binary, and are shared by all its tests;
// each call gets its own database. A package that uses testenv stops them from its
// TestMain with [Main]:
//
//	func TestMain(m *testing.M) { os.Exit(testenv.Main(m)) }
//
// Servers never outlive the test binary, even one that crashes or is killed: each
// holds a pipe from the test process (PostgreSQL through a small shell supervisor,
// PGlite's node process itself) and, when that pipe closes, which the kernel does
// whichever way the process ends, shuts down and removes its files.
//
// What must be installed (`make testdeps` does both): PostgreSQL 15 under
// /usr/lib/postgresql/15/bin (`apt-get install -y postgresql`), and node with the npm
// packages of host/testenv/pglite (`npm install` there). Missing pieces fail the test
// with what to install; nothing is ever skipped.
//
// Environment:
//
//	AGENTHOST_TEST_POSTGRES_URL   use this PostgreSQL server instead of starting one
//	AGENTHOST_TEST_PGVECTOR_URL   use this PostgreSQL server with pgvector instead of PGlite
//	AGENTHOST_TEST_PGLITE_INSTANCES  how many PGlite instances may exist at once (default 4)
//
// On a server named by the environment, each call still creates a database of its
// own, and drops it when the test ends.
package testenv

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"
)

// Main runs m and then stops every server this process started, removing their
// files. Packages that use testenv call it from TestMain:
//
//	func TestMain(m *testing.M) { os.Exit(testenv.Main(m)) }
//
// Without it the servers still stop when the test binary exits (their supervisors
// see its pipe close), only a little later and without an error report. A failure to
// stop is printed to stderr; it does not change the exit code, since the tests ran.
func Main(m *testing.M) int {
	code := m.Run()
	ctx, cancel := context.WithTimeout(context.Background(), stopTimeout)
	defer cancel()
	if err := stopAll(ctx); err != nil {
		fmt.Fprintf(os.Stderr, "testenv: stopping servers: %v\n", err)
	}
	return code
}

const (
	// startTimeout bounds starting a server: initdb and a PGlite instance each take
	// a few seconds on a busy 2-core machine.
	startTimeout = 3 * time.Minute
	// opTimeout bounds creating or dropping one database, or waiting for a PGlite
	// instance that parallel tests all hold.
	opTimeout = 5 * time.Minute
	// stopTimeout bounds stopping all servers in Main.
	stopTimeout = time.Minute
)

// stopAll stops the servers this process started and forgets them, so a later call
// would start new ones.
func stopAll(ctx context.Context) error {
	return errors.Join(stopPostgres(ctx), stopPGVector(ctx))
}

// dbName returns a database name that says which test it belongs to (for whoever
// looks at a shared server) and cannot collide with another call's, even from
// another process on the same server.
func dbName(testName string) string {
	var b strings.Builder
	b.WriteString("t_")
	for _, r := range strings.ToLower(testName) {
		if b.Len() >= 40 {
			break
		}
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	var suffix [4]byte
	_, _ = rand.Read(suffix[:]) // crypto/rand.Read never fails
	b.WriteByte('_')
	b.WriteString(hex.EncodeToString(suffix[:]))
	return b.String()
}

// syncBuffer collects a child process's stderr for error messages; the exec package
// writes to it from its own goroutine.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	// Keep the buffer bounded: only the end of a long log explains a failure.
	if b.buf.Len() > 64<<10 {
		tail := append([]byte(nil), b.buf.Bytes()[b.buf.Len()-32<<10:]...)
		b.buf.Reset()
		b.buf.Write(tail)
	}
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// tail returns the last n bytes of s, for quoting logs in errors.
func tail(s string, n int) string {
	s = strings.TrimSpace(s)
	if len(s) > n {
		s = "…" + s[len(s)-n:]
	}
	return s
}
