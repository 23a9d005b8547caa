package main

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/agenthost/agenthost/host/testenv"
	"github.com/agenthost/agenthost/host/wasm/wasmtest"
)

// TestMain lets a test run this binary's main in a child process (the
// process-level behaviour of serve: signals, exit codes): the child is the
// test binary itself, started with AGENTHOST_TEST_MAIN=1 and the CLI's
// arguments.
func TestMain(m *testing.M) {
	if os.Getenv("AGENTHOST_TEST_MAIN") == "1" {
		main()
		os.Exit(0)
	}
	if os.Getenv("AGENTHOST_TEST_SSE_PEER") == "1" {
		if err := ssePeerMain(os.Args[1:]); err != nil {
			fmt.Fprintln(os.Stderr, "ssepeer:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(testenv.Main(m))
}

// hangGuard only keeps a broken test from hanging until go test's own
// timeout; no assertion depends on it.
const hangGuard = 5 * time.Minute

// child is `agenthost ARGS` running in a child process.
type child struct {
	cmd   *exec.Cmd
	mu    sync.Mutex
	out   strings.Builder // stderr so far
	lines chan string
	done  chan struct{}
	code  int
}

func startChild(t testing.TB, args ...string) *child {
	t.Helper()
	// The MCP endpoint's default port is one for the whole machine: a
	// serve that wants it names its own (as serveInProcess).
	if len(args) > 0 && args[0] == "serve" && !slices.Contains(args, "-mcp-addr") {
		args = append(args, "-mcp-addr", "off")
	}
	c := &child{cmd: exec.Command(os.Args[0], args...), lines: make(chan string, 1024), done: make(chan struct{})}
	c.cmd.Env = append(os.Environ(), "AGENTHOST_TEST_MAIN=1")
	c.cmd.Stdout = io.Discard
	stderr, err := c.cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := c.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			c.mu.Lock()
			c.out.WriteString(sc.Text() + "\n")
			c.mu.Unlock()
			select {
			case c.lines <- sc.Text():
			default:
			}
		}
		c.cmd.Wait()
		c.code = c.cmd.ProcessState.ExitCode()
		close(c.done)
	}()
	t.Cleanup(func() {
		select {
		case <-c.done:
		default:
			c.cmd.Process.Kill()
			<-c.done
		}
	})
	return c
}

func (c *child) stderr() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.out.String()
}

// waitFor waits until a stderr line contains s.
func (c *child) waitFor(t testing.TB, s string) {
	t.Helper()
	guard := time.After(hangGuard)
	for {
		select {
		case line := <-c.lines:
			if strings.Contains(line, s) {
				return
			}
		case <-c.done:
			t.Fatalf("agenthost exited (%d) before logging %q:\n%s", c.code, s, c.stderr())
		case <-guard:
			t.Fatalf("no line with %q:\n%s", s, c.stderr())
		}
	}
}

// wait waits for the child to exit and returns how long that took from now.
func (c *child) wait(t *testing.T) time.Duration {
	t.Helper()
	start := time.Now()
	select {
	case <-c.done:
	case <-time.After(hangGuard):
		t.Fatalf("agenthost did not exit:\n%s", c.stderr())
	}
	return time.Since(start)
}

func noCrash(t testing.TB, c *child) {
	t.Helper()
	if out := c.stderr(); strings.Contains(out, "panic:") || strings.Contains(out, "fatal error:") || strings.Contains(out, "goroutine ") {
		t.Fatalf("agenthost crashed:\n%s", out)
	}
}

func pluginDir(t *testing.T, names ...string) string {
	t.Helper()
	dir := t.TempDir()
	for _, n := range names {
		if err := os.WriteFile(filepath.Join(dir, n+".wasm"), wasmtest.Module(t, n), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestServeStopDuringStartup stops serve early in its start-up (while it
// migrates, while plugins compile): it ends cleanly, with no panic.
func TestServeStopDuringStartup(t *testing.T) {
	if testing.Short() {
		t.Skip("starts servers")
	}
	plugins := pluginDir(t, "echo", "stuck")
	cases := []struct {
		name string
		sig  syscall.Signal
		at   string // the stderr line that triggers the signal
	}{
		{"SIGTERM while migrating", syscall.SIGTERM, "migration applied"},
		{"SIGINT while migrating", syscall.SIGINT, "migration applied"},
		{"SIGTERM while plugins compile", syscall.SIGTERM, "agenthost listening"},
		{"SIGINT while plugins compile", syscall.SIGINT, "agenthost listening"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := startChild(t, "serve", "-data", t.TempDir(), "-addr", "127.0.0.1:0", "-plugins", plugins, "-allow-unsigned")
			c.waitFor(t, tc.at)
			c.cmd.Process.Signal(tc.sig)
			c.wait(t)
			noCrash(t, c)
			if c.code != 0 {
				t.Fatalf("exit code %d after %s, want 0:\n%s", c.code, tc.sig, c.stderr())
			}
		})
	}
}

// TestServeShutdownDeadline stops serve while work is in flight: a tool call
// that would run 30 s is cancelled and the server stops cleanly long before
// that; a connection that never completes its request makes the process exit
// at the shutdown deadline, saying so.
func TestServeShutdownDeadline(t *testing.T) {
	if testing.Short() {
		t.Skip("starts servers")
	}
	data := t.TempDir()
	out, stderr, err := run0(t, "admin", "bootstrap", "-data", data, "-tenant", "T", "-email", "a@example.org")
	if err != nil {
		t.Fatalf("bootstrap: %v\n%s", err, stderr)
	}
	ws := regexp.MustCompile(`workspace (\S+)`).FindStringSubmatch(out)
	token := regexp.MustCompile(`\(shown once, keep it\): (\S+)`).FindStringSubmatch(out)
	if ws == nil || token == nil {
		t.Fatalf("bootstrap printed %q", out)
	}
	plugins := pluginDir(t, "stuck")
	if _, stderr, err := run0(t, "admin", "tools", "-data", data, "-plugins", plugins, "-workspace", ws[1], "-set", "core", "-extra", "spin"); err != nil {
		t.Fatalf("tools: %v\n%s", err, stderr)
	}

	cases := []struct {
		name     string
		inFlight func(t *testing.T, base string) (check func(t *testing.T))
		code     int
		message  string // on stderr
	}{
		{"a tool call of 30 s is cancelled", func(t *testing.T, base string) func(t *testing.T) {
			type reply struct {
				body string
				err  error
			}
			got := make(chan reply, 1)
			go func() {
				req, _ := http.NewRequest("POST", base+"/api/v1/workspaces/"+ws[1]+"/tools/spin", strings.NewReader("{}"))
				req.Header.Set("Authorization", "Bearer "+token[1])
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					got <- reply{err: err}
					return
				}
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				got <- reply{body: string(b)}
			}()
			return func(t *testing.T) {
				r := <-got
				if r.err != nil || !strings.Contains(r.body, `"canceled"`) {
					t.Errorf("the call's reply: %q %v, want its result with code canceled", r.body, r.err)
				}
			}
		}, 0, ""},
		{"a request that never completes", func(t *testing.T, base string) func(t *testing.T) {
			conn, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { conn.Close() })
			fmt.Fprint(conn, "GET /healthz HTTP/1.1\r\nHost: x\r\n") // no blank line: the request never ends
			return func(*testing.T) {}
		}, 1, "requests still running at the end of the shutdown grace period"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			addr, err := freeLoopbackAddr()
			if err != nil {
				t.Fatal(err)
			}
			c := startChild(t, "serve", "-data", data, "-addr", addr, "-plugins", plugins, "-allow-unsigned", "-shutdown-timeout", "4s")
			c.waitFor(t, "plugins ready")
			base := "http://" + addr
			check := tc.inFlight(t, base)
			if tc.code == 0 {
				c.waitFor(t, "spinning") // the call runs in the guest
			} else {
				time.Sleep(100 * time.Millisecond) // let the server read the partial request (no bound is asserted)
			}
			c.cmd.Process.Signal(syscall.SIGTERM)
			took := c.wait(t)
			noCrash(t, c)
			if c.code != tc.code || !strings.Contains(c.stderr(), tc.message) {
				t.Fatalf("exit code %d (want %d), stderr must say %q:\n%s", c.code, tc.code, tc.message, c.stderr())
			}
			// Without the deadline the stop waited for the call's own 30 s
			// limit, and for the incomplete request forever.
			if took >= 30*time.Second {
				t.Errorf("the stop took %v", took)
			}
			check(t)
		})
	}
}
