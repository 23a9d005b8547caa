// Package referencetest runs the reference MCP servers of npm
// (@modelcontextprotocol/server-everything, server-memory, installed in
// host/mcpclient/testdata/npm by make testdeps) for tests: as a stdio
// command, or server-everything as a streamable-HTTP server a test can
// kill mid-run.
package referencetest

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Command is the command that runs one of the reference servers (pkg is
// "server-everything" or "server-memory") with args.
func Command(t testing.TB, pkg string, args ...string) []string {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatal("node is required for this test (see .ci/testdeps)")
	}
	_, here, _, _ := runtime.Caller(0)
	script := filepath.Join(filepath.Dir(here), "..", "testdata", "npm", "node_modules", "@modelcontextprotocol", pkg, "dist", "index.js")
	if _, err := os.Stat(script); err != nil {
		t.Fatalf("@modelcontextprotocol/%s is not installed: run `npm install` in host/mcpclient/testdata/npm (make testdeps does)", pkg)
	}
	return append([]string{node, filepath.Clean(script)}, args...)
}

// HTTPServer is server-everything over streamable HTTP on a loopback port.
type HTTPServer struct {
	// URL is its MCP endpoint (http://127.0.0.1:PORT/mcp).
	URL string
	// Addr is its host:port.
	Addr string
	cmd  *exec.Cmd
	done chan struct{}
}

// StartHTTP starts server-everything's streamable-HTTP transport and waits
// until it listens; it is killed when the test ends, if not before.
func StartHTTP(t testing.TB) *HTTPServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_, port, _ := net.SplitHostPort(addr)
	ln.Close()
	s := &HTTPServer{URL: "http://" + addr + "/mcp", Addr: addr}
	s.start(t, port)
	t.Cleanup(s.Kill)
	return s
}

// Restart starts the server again on its port (after Kill).
func (s *HTTPServer) Restart(t testing.TB) {
	t.Helper()
	s.Kill()
	_, port, _ := net.SplitHostPort(s.Addr)
	s.start(t, port)
}

func (s *HTTPServer) start(t testing.TB, port string) {
	t.Helper()
	argv := Command(t, "server-everything", "streamableHttp")
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "PORT=" + port}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	listening := make(chan struct{})
	cmd.Stderr = &watch{want: "listening on port", seen: listening}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s.cmd, s.done = cmd, make(chan struct{})
	go func() { cmd.Wait(); close(s.done) }()
	select {
	case <-listening:
	case <-s.done:
		t.Fatal("server-everything (streamableHttp) ended before it listened")
	case <-time.After(30 * time.Second):
		t.Fatal("server-everything (streamableHttp) did not listen within 30 s")
	}
}

// watch closes seen once want was written (exec copies the output in
// one goroutine, so writes do not overlap).
type watch struct {
	want string
	seen chan struct{}
	buf  []byte
}

func (w *watch) Write(p []byte) (int, error) {
	if w.seen == nil {
		return len(p), nil
	}
	w.buf = append(w.buf, p...)
	if strings.Contains(string(w.buf), w.want) {
		close(w.seen)
		w.seen = nil
	}
	if len(w.buf) > 1<<16 {
		w.buf = w.buf[len(w.buf)-1024:]
	}
	return len(p), nil
}

// Kill stops the server at once (SIGKILL to its process group) and waits
// until it has ended: its port is closed and its connections are cut.
func (s *HTTPServer) Kill() {
	if s.cmd == nil {
		return
	}
	select {
	case <-s.done:
		return
	default:
	}
	_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
	<-s.done
}

// String names the server in test messages.
func (s *HTTPServer) String() string { return fmt.Sprintf("server-everything at %s", s.URL) }
