package server

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agenthost/agenthost/host/settings"
	"github.com/agenthost/agenthost/host/store"
	"github.com/agenthost/agenthost/host/testenv"
	"github.com/agenthost/agenthost/host/wasm"
)

func TestMain(m *testing.M) { os.Exit(testenv.Main(m)) }

// syncBuffer is a log both the server's goroutines and the test use.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// machineCache is the compile cache the commands use by default, which
// `make build` fills: the built-ins are read, not compiled, by the warm-up.
func machineCache() string {
	if d, err := os.UserCacheDir(); err == nil {
		return filepath.Join(d, "agenthost", "wasm")
	}
	return filepath.Join(os.TempDir(), "agenthost-wasm-cache")
}

// testConfig is a server of role on the database sc with nothing else
// configured (no model, no file), as `agenthost serve -data DIR` is.
func testConfig(t *testing.T, role Role, sc store.Config, logs io.Writer) Config {
	data := t.TempDir()
	if sc.URL == "" {
		sc.Dir = data
	}
	return Config{
		Role: role, Logger: slog.New(slog.NewTextHandler(logs, nil)), Env: func(string) string { return "" },
		DataDir: data, Store: sc, Migrate: true,
		Plugins:   Plugins{Wasm: wasm.NewConfig().WithCompilationCacheDir(machineCache())},
		Sweep:     Sweep{Every: time.Hour, Grace: time.Hour},
		Addr:      freeAddr(t),
		MCP:       MCP{Addr: "off"},
		MaxUpload: 1 << 20, SetupTokenTTL: time.Hour, ShutdownTimeout: 10 * time.Second,
		// The process is never to be ended by the test's server.
		Exit:        func(code int) { t.Errorf("the server ended the process (exit %d)", code) },
		Stderr:      logs,
		MetricsAddr: freeAddr(t),
	}
}

// get waits until url answers 200 or run ends; it fails the test when run
// ended first.
func get(t *testing.T, url string, ran <-chan error, logs *syncBuffer) {
	t.Helper()
	for ; ; time.Sleep(50 * time.Millisecond) {
		select {
		case err := <-ran:
			t.Fatalf("Run ended before %s answered: %v\n%s", url, err, logs.String())
		default:
		}
		if resp, err := http.Get(url); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
	}
}

// TestNewRunClose: on SQLite and on PostgreSQL, New builds a serve that
// answers nothing until Run, Run serves the API (and a worker /metrics)
// until its context ends and then returns nil, and Close releases the
// database: it refuses queries after.
func TestNewRunClose(t *testing.T) {
	for _, d := range []store.Dialect{store.SQLite, store.Postgres} {
		for _, role := range []Role{Serve, Worker} {
			t.Run(string(d)+"/"+role.String(), func(t *testing.T) {
				var sc store.Config
				if d == store.Postgres {
					sc.URL = testenv.Postgres(t)
				}
				logs := &syncBuffer{}
				cfg := testConfig(t, role, sc, logs)
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				srv, err := New(ctx, cfg)
				if err != nil {
					t.Fatalf("New: %v\n%s", err, logs.String())
				}
				defer srv.Close()
				if srv.DB().Dialect() != d {
					t.Fatalf("dialect %s, want %s", srv.DB().Dialect(), d)
				}
				url := "http://" + cfg.Addr + "/healthz"
				if role == Worker {
					url = "http://" + cfg.MetricsAddr + "/metrics"
				}
				// Built, not started: nothing listens yet.
				if resp, err := http.Get(url); err == nil {
					resp.Body.Close()
					t.Fatalf("%s answered before Run", url)
				}
				ran := make(chan error, 1)
				go func() { ran <- srv.Run(ctx) }()
				get(t, url, ran, logs)
				cancel()
				if err := <-ran; err != nil {
					t.Fatalf("Run: %v\n%s", err, logs.String())
				}
				srv.Close()
				srv.Close() // a second Close is nothing
				if d == store.Postgres {
					if err := srv.DB().Pool().Ping(context.Background()); err == nil {
						t.Error("the database still answers after Close")
					}
				}
			})
		}
	}
}

// TestRunRefusesUnboundCapability: Run checks that New bound every host
// capability before anything could call it; one left unbound refuses Run
// with its name, before the queue or a listener starts.
func TestRunRefusesUnboundCapability(t *testing.T) {
	logs := &syncBuffer{}
	cfg := testConfig(t, Serve, store.Config{}, logs)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	srv, err := New(ctx, cfg)
	if err != nil {
		t.Fatalf("New: %v\n%s", err, logs.String())
	}
	defer srv.Close()
	if err := srv.checkBound(); err != nil {
		t.Fatalf("New left something unbound: %v", err)
	}
	srv.caps.Files.Files = nil
	if err := srv.Run(ctx); err == nil || !strings.Contains(err.Error(), "files capability") {
		t.Fatalf("Run with the files capability unbound: %v", err)
	}
	if resp, err := http.Get("http://" + cfg.Addr + "/healthz"); err == nil {
		resp.Body.Close()
		t.Fatal("the API listens although Run refused")
	}
}

// TestNewRefusesBadSetting: a variable or a file key whose value does not
// read as its setting's kind refuses New, naming the setting and the value,
// before anything is opened (no data directory is made).
func TestNewRefusesBadSetting(t *testing.T) {
	for _, c := range []struct {
		name, env, value string
	}{
		{"duration", "AGENTHOST_APPROVAL_TTL", "soon"},
		{"bool", "AGENTHOST_COOKIE_SECURE", "yes"},
		{"int", "AGENTHOST_AGENT_MAX_ROUNDS", "many"},
		{"money", "AGENTHOST_AGENT_MAX_COST_CHF", "ten francs"},
		{"model timeout", "AGENTHOST_OPENAI_TIMEOUT", "forever"},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg := testConfig(t, Serve, store.Config{}, io.Discard)
			cfg.DataDir = filepath.Join(t.TempDir(), "data")
			cfg.Store.Dir = cfg.DataDir
			cfg.Env = func(k string) string {
				if k == c.env {
					return c.value
				}
				return ""
			}
			srv, err := New(context.Background(), cfg)
			if err == nil {
				srv.Close()
				t.Fatalf("%s=%s: New succeeded", c.env, c.value)
			}
			if !strings.Contains(err.Error(), c.env) || !strings.Contains(err.Error(), c.value) {
				t.Errorf("%s=%s: the error does not name the setting and the value: %v", c.env, c.value, err)
			}
			if _, err := os.Stat(cfg.DataDir); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("the data directory was made before the refusal: %v", err)
			}
		})
	}
	// A file's value: read by the one parse, which New's caller does first.
	for _, c := range []struct{ body, key, value string }{
		{"objectStorage:\n  bucket: b\n  partSize: big\n", "objectStorage.partSize", "big"},
		{"llm:\n  retry:\n    attempts: many\n", "llm.retry.attempts", "many"},
		{"signIn:\n  invitationTTL: fortnight\n", "signIn.invitationTTL", "fortnight"},
		{"sqlQuery:\n  databases:\n    crm:\n      driver: sqlite\n      maxRows: lots\n", "sqlQuery.databases.crm.maxRows", "lots"},
	} {
		_, err := ParseFile([]byte(c.body), false)
		if err == nil || !strings.Contains(err.Error(), c.key) || !strings.Contains(err.Error(), c.value) {
			t.Errorf("%q: %v, want an error naming %s and %q", c.body, err, c.key, c.value)
		}
	}
}

// TestReadFileRefusesMisspeltKey: a misspelt key anywhere in the file, at
// the top or at any depth of any section, is refused by the one parse with
// its name; the same file spelt right reads.
func TestReadFileRefusesMisspeltKey(t *testing.T) {
	good := map[string]string{
		"llm":           "llm:\n  providers:\n    - name: p\n      baseURL: http://127.0.0.1:1/v1\n  retry:\n    attempts: 2\n",
		"signIn":        "signIn:\n  publicURL: https://a.example\n  smtp:\n    host: mail.example\n",
		"webSearch":     "webSearch:\n  provider: brave\n",
		"sqlQuery":      "sqlQuery:\n  databases:\n    crm:\n      driver: sqlite\n      path: /x.db\n",
		"objectStorage": "objectStorage:\n  bucket: b\n  pathStyle: true\n",
	}
	for section, body := range good {
		if _, err := ParseFile([]byte(body), false); err != nil {
			t.Fatalf("%s spelt right: %v", section, err)
		}
	}
	for _, c := range []struct{ body, misspelt string }{
		{"objectstorage:\n  bucket: b\n", "objectstorage"},
		{"llm:\n  providers:\n    - name: p\n      baseUrl: http://127.0.0.1:1/v1\n", "baseUrl"},
		{"llm:\n  retry:\n    atempts: 2\n", "atempts"},
		{"signIn:\n  publicURL: https://a.example\n  smtp:\n    hostname: mail.example\n", "hostname"},
		{"webSearch:\n  provider: brave\n  apikey: x\n", "apikey"},
		{"sqlQuery:\n  databases:\n    crm:\n      driver: sqlite\n      pth: /x.db\n", "pth"},
		{"objectStorage:\n  bucket: b\n  pathstyle: true\n", "pathstyle"},
		// JSON is read by the same parse.
		{`{"objectStorage": {"bukcet": "b"}}`, "bukcet"},
	} {
		_, err := ParseFile([]byte(c.body), strings.HasPrefix(c.body, "{"))
		if err == nil || !strings.Contains(err.Error(), c.misspelt) {
			t.Errorf("%q: %v, want an error naming %q", c.body, err, c.misspelt)
		}
	}
	// Every error of the file at once, not the first only.
	_, err := ParseFile([]byte("webSearch:\n  provder: brave\nobjectStorage:\n  buckt: b\n"), false)
	if err == nil || !strings.Contains(err.Error(), "provder") || !strings.Contains(err.Error(), "buckt") {
		t.Errorf("two misspellings: %v, want both named", err)
	}
	if !errors.Is(mustErr(ParseFile([]byte("objectstorage: {}\n"), false)), settings.ErrUnknownKey) {
		t.Error("a misspelt section is not settings.ErrUnknownKey")
	}
}

func mustErr(_ File, err error) error { return err }

// TestReadFileNamesTheLine: the key an error is about is named with its
// line in the file, blank lines and comments of the section counted.
func TestReadFileNamesTheLine(t *testing.T) {
	body := "# agenthost\nobjectStorage:\n\n  # the bucket\n  bucket: b\n\n  partSize: big\n"
	_, err := ParseFile([]byte(body), false)
	if err == nil || !strings.Contains(err.Error(), `objectStorage.partSize="big" (line 7)`) {
		t.Fatalf("%v, want objectStorage.partSize=\"big\" (line 7)", err)
	}
}
