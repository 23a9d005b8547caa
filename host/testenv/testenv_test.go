package testenv_test

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/agenthost/agenthost/host/testenv"
)

func TestMain(m *testing.M) { os.Exit(testenv.Main(m)) }

func connect(t *testing.T, rawURL string) *pgxpool.Pool {
	t.Helper()
	pool, err := pgxpool.New(t.Context(), rawURL)
	if err != nil {
		t.Fatalf("pgxpool.New(%s): %v", rawURL, err)
	}
	t.Cleanup(pool.Close)
	return pool
}

// roundTrip creates a table, inserts id and reads back every id in the table.
func roundTrip(t *testing.T, pool *pgxpool.Pool, id int) []int {
	t.Helper()
	ctx := t.Context()
	if _, err := pool.Exec(ctx, `CREATE TABLE items (id int PRIMARY KEY, name text NOT NULL)`); err != nil {
		t.Fatalf("CREATE TABLE: %v", err)
	}
	if _, err := pool.Exec(ctx, `INSERT INTO items (id, name) VALUES ($1, $2)`, id, fmt.Sprint("item ", id)); err != nil {
		t.Fatalf("INSERT: %v", err)
	}
	rows, err := pool.Query(ctx, `SELECT id FROM items ORDER BY id`)
	if err != nil {
		t.Fatalf("SELECT: %v", err)
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[int])
	if err != nil {
		t.Fatalf("SELECT: %v", err)
	}
	return ids
}

func TestPostgresTwoDatabases(t *testing.T) {
	t.Parallel()
	u1, u2 := testenv.Postgres(t), testenv.Postgres(t)
	if u1 == u2 {
		t.Fatalf("two calls returned the same URL %s", u1)
	}
	p1, p2 := connect(t, u1), connect(t, u2)
	// The same table name in both: each database sees only its own row.
	if got := roundTrip(t, p1, 1); fmt.Sprint(got) != "[1]" {
		t.Errorf("first database has ids %v, want [1]", got)
	}
	if got := roundTrip(t, p2, 2); fmt.Sprint(got) != "[2]" {
		t.Errorf("second database has ids %v, want [2]", got)
	}
	var version string
	if err := p1.QueryRow(t.Context(), `SHOW server_version`).Scan(&version); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(version, "15.") {
		t.Errorf("server_version = %s, want PostgreSQL 15", version)
	}
}

func TestPostgresParallel(t *testing.T) {
	for i := range 4 {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			t.Parallel()
			pool := connect(t, testenv.Postgres(t))
			if got := roundTrip(t, pool, i); fmt.Sprint(got) != fmt.Sprintf("[%d]", i) {
				t.Errorf("ids %v, want [%d]", got, i)
			}
		})
	}
}

// TestPostgresRealServer checks what PGlite cannot do: notifications between connections.
func TestPostgresRealServer(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	u := testenv.Postgres(t)
	listener, err := pgx.Connect(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	defer listener.Close(context.Background())
	if _, err := listener.Exec(ctx, `LISTEN jobs`); err != nil {
		t.Fatal(err)
	}
	if _, err := connect(t, u).Exec(ctx, `SELECT pg_notify('jobs', 'hello')`); err != nil {
		t.Fatal(err)
	}
	waitCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	n, err := listener.WaitForNotification(waitCtx)
	if err != nil {
		t.Fatalf("WaitForNotification: %v", err)
	}
	if n.Payload != "hello" {
		t.Errorf("payload %q, want hello", n.Payload)
	}
}

// vectorSearch runs the pgvector round trip: extension, vector(3) column, insert,
// nearest-neighbour order.
func vectorSearch(t *testing.T, pool *pgxpool.Pool) {
	t.Helper()
	ctx := t.Context()
	for _, q := range []string{
		`CREATE EXTENSION IF NOT EXISTS vector`,
		`CREATE TABLE docs (id int PRIMARY KEY, embedding vector(3) NOT NULL)`,
	} {
		if _, err := pool.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	for id, e := range map[int]string{1: "[1,0,0]", 2: "[0,1,0]", 3: "[0,0,1]", 4: "[1,1,0]"} {
		if _, err := pool.Exec(ctx, `INSERT INTO docs (id, embedding) VALUES ($1, $2)`, id, e); err != nil {
			t.Fatalf("INSERT: %v", err)
		}
	}
	rows, err := pool.Query(ctx, `SELECT id FROM docs ORDER BY embedding <-> $1 LIMIT 3`, "[0.9,0.8,0]")
	if err != nil {
		t.Fatalf("SELECT ... ORDER BY embedding <-> ...: %v", err)
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[int])
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(ids) != "[4 1 2]" {
		t.Errorf("nearest to [0.9,0.8,0]: %v, want [4 1 2]", ids)
	}
}

func TestPGVector(t *testing.T) {
	t.Parallel()
	u := testenv.PGVector(t)
	pool := connect(t, u)
	if got := pool.Config().MaxConns; got != 2 {
		t.Errorf("pool_max_conns from the URL: %d, want 2", got)
	}
	vectorSearch(t, pool)
	var version string
	if err := pool.QueryRow(t.Context(), `SELECT version()`).Scan(&version); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(version, "PostgreSQL 18") {
		t.Errorf("version() = %s, want PostgreSQL 18", version)
	}
}

func TestPGVectorParallel(t *testing.T) {
	for i := range 3 {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			t.Parallel()
			pool := connect(t, testenv.PGVector(t))
			// Same table name on every instance; a session shared with another test
			// would also show in search_path.
			if _, err := pool.Exec(t.Context(), fmt.Sprintf(`CREATE SCHEMA s%d; SET search_path TO s%d`, i, i)); err != nil {
				t.Fatal(err)
			}
			var path string
			if err := pool.QueryRow(t.Context(), `SHOW search_path`).Scan(&path); err != nil {
				t.Fatal(err)
			}
			if path != fmt.Sprintf("s%d", i) {
				t.Errorf("search_path = %s, want s%d: the session is shared with another test", path, i)
			}
			vectorSearch(t, pool)
		})
	}
}

// TestPGVectorConcurrentConnections runs queries on both connections of the pool at
// once: with the simple protocol the URL selects, they cannot interleave badly.
func TestPGVectorConcurrentConnections(t *testing.T) {
	t.Parallel()
	pool := connect(t, testenv.PGVector(t))
	var wg sync.WaitGroup
	errs := make(chan error, 40)
	for i := range 40 {
		wg.Go(func() {
			var got int
			var text string
			err := pool.QueryRow(t.Context(), `SELECT $1::int * 2, $2::text`, i, fmt.Sprint("q", i)).Scan(&got, &text)
			if err == nil && (got != 2*i || text != fmt.Sprint("q", i)) {
				err = fmt.Errorf("query %d got (%d, %s)", i, got, text)
			}
			if err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if s := pool.Stat(); s.TotalConns() > 2 {
		t.Errorf("%d connections, want at most 2", s.TotalConns())
	}
}

// TestPGVectorWiped: what one test leaves on its instance is gone for the next.
func TestPGVectorWiped(t *testing.T) {
	t.Parallel()
	for i := range 3 {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			pool := connect(t, testenv.PGVector(t))
			ctx := t.Context()
			var schemas, extensions string
			err := pool.QueryRow(ctx, `SELECT
				(SELECT string_agg(nspname, ',' ORDER BY nspname) FROM pg_namespace WHERE nspname NOT LIKE 'pg\_%' AND nspname <> 'information_schema'),
				(SELECT string_agg(extname, ',' ORDER BY extname) FROM pg_extension)`).Scan(&schemas, &extensions)
			if err != nil {
				t.Fatal(err)
			}
			if schemas != "public" || extensions != "plpgsql" {
				t.Errorf("a new instance has schemas %s and extensions %s, want public and plpgsql", schemas, extensions)
			}
			for _, q := range []string{
				`CREATE EXTENSION vector`,
				`CREATE SCHEMA leftover`,
				`CREATE TABLE leftover.t (e vector(3))`,
				`CREATE TABLE public.t (x int)`,
				`CREATE ROLE leftover_role`,
				`SET search_path TO leftover`,
				`CREATE TEMP TABLE tmp (x int)`,
			} {
				if _, err := pool.Exec(ctx, q); err != nil {
					t.Fatalf("%s: %v", q, err)
				}
			}
		})
	}
}

// TestPGVectorCopyFrom: PGlite's wire server cannot do COPY FROM STDIN; the
// instance that tried is discarded, and the next test gets a working one.
func TestPGVectorCopyFrom(t *testing.T) {
	t.Parallel()
	for i := range 2 {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			ctx := t.Context()
			conn, err := pgx.Connect(ctx, testenv.PGVector(t))
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close(context.Background())
			if _, err := conn.Exec(ctx, `CREATE TABLE t (x int)`); err != nil {
				t.Fatal(err)
			}
			if i == 0 {
				if _, err := conn.CopyFrom(ctx, pgx.Identifier{"t"}, []string{"x"}, pgx.CopyFromRows([][]any{{1}})); err == nil {
					t.Error("COPY FROM STDIN worked on PGlite: update PGVector's documentation")
				}
			}
		})
	}
}

// The helpers below run in a child test binary that the test before them starts.

const helperEnv = "TESTENV_HELPER"

// TestHelperServers is the child of TestServersDieWithTestBinary: it starts both
// servers, prints their URLs and waits to be killed.
func TestHelperServers(t *testing.T) {
	if os.Getenv(helperEnv) != "servers" {
		return // only runs as a child
	}
	fmt.Printf("URLS %s %s\n", testenv.Postgres(t), testenv.PGVector(t))
	time.Sleep(time.Minute)
	t.Fatal("not killed")
}

// TestServersDieWithTestBinary kills a test binary that started servers, as a crash
// or the go test timeout would, and checks that the servers stop and their files go.
func TestServersDieWithTestBinary(t *testing.T) {
	t.Parallel()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperServers$", "-test.v")
	cmd.Env = append(os.Environ(), helperEnv+"=servers")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	var urls []string
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "URLS "); ok {
			urls = strings.Fields(rest)
			break
		}
		t.Log("child:", sc.Text())
	}
	if len(urls) != 2 {
		t.Fatalf("child printed no URLs (%v)", sc.Err())
	}
	var addrs []string
	for _, raw := range urls {
		u, err := url.Parse(raw)
		if err != nil {
			t.Fatal(err)
		}
		addrs = append(addrs, u.Host)
	}
	pgDir := clusterDir(t, addrs[0])
	if err := cmd.Process.Kill(); err != nil { // SIGKILL: no Main, no cleanups
		t.Fatal(err)
	}
	_ = cmd.Wait()
	deadline := time.Now().Add(30 * time.Second)
	for _, addr := range addrs {
		for {
			c, err := net.DialTimeout("tcp", addr, time.Second)
			if err != nil {
				break
			}
			c.Close()
			if time.Now().After(deadline) {
				t.Fatalf("%s still accepts connections 30 s after its test binary was killed", addr)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	for {
		if _, err := os.Stat(pgDir); os.IsNotExist(err) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s still exists 30 s after its test binary was killed", pgDir)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// clusterDir finds the data directory of the PostgreSQL server at addr by its
// postmaster.pid, whose fourth line is the port.
func clusterDir(t *testing.T, addr string) string {
	t.Helper()
	_, port, _ := strings.Cut(addr, ":")
	pids, _ := filepath.Glob(filepath.Join(os.TempDir(), "agenthost-pg-*", "postmaster.pid"))
	for _, pid := range pids {
		b, err := os.ReadFile(pid)
		if err != nil {
			continue
		}
		if lines := strings.Split(string(b), "\n"); len(lines) > 3 && strings.TrimSpace(lines[3]) == port {
			return filepath.Dir(pid)
		}
	}
	t.Fatalf("no data directory under %s serves port %s", os.TempDir(), port)
	return ""
}

// TestHelperExternal is the child of TestExternalServers: it uses the servers that
// the environment names.
func TestHelperExternal(t *testing.T) {
	switch os.Getenv(helperEnv) {
	case "postgres":
		pool := connect(t, testenv.Postgres(t))
		if got := roundTrip(t, pool, 7); fmt.Sprint(got) != "[7]" {
			t.Errorf("ids %v, want [7]", got)
		}
		fmt.Println("EXTERNAL OK")
	case "pgvector":
		testenv.PGVector(t)
	}
}

// TestExternalServers points a child test binary at servers this one started, as a
// developer may point tests at servers of their own.
func TestExternalServers(t *testing.T) {
	t.Parallel()
	child := func(mode, env, url string) string {
		cmd := exec.Command(os.Args[0], "-test.run=^TestHelperExternal$", "-test.v")
		cmd.Env = append(os.Environ(), helperEnv+"="+mode, env+"="+url)
		out, _ := cmd.CombinedOutput()
		return string(out)
	}
	if out := child("postgres", "AGENTHOST_TEST_POSTGRES_URL", testenv.Postgres(t)); !strings.Contains(out, "EXTERNAL OK") || strings.Contains(out, "started PostgreSQL") {
		t.Errorf("child with AGENTHOST_TEST_POSTGRES_URL did not use that server:\n%s", out)
	}
	// PGlite shares one session among all connections: testenv must refuse it
	// rather than hand out databases that are not isolated.
	if out := child("pgvector", "AGENTHOST_TEST_PGVECTOR_URL", testenv.PGVector(t)); !strings.Contains(out, "the server is PGlite") {
		t.Errorf("child with AGENTHOST_TEST_PGVECTOR_URL on PGlite did not refuse it:\n%s", out)
	}
}
