package main

import (
	"context"
	"io"
	"net/http"
	"slices"
	"testing"
	"time"
)

// serveInProcess runs `serve` with args in this process on a free loopback
// port until the test ends, and returns its base URL once it answers. Its
// log goes to logs and is shown when the test fails; a serve that ends with
// an error or does not stop within a minute of the test's end fails it.
func serveInProcess(t testing.TB, logs *syncBuffer, args ...string) string {
	t.Helper()
	// A test that must know the address before serve starts (an OAuth
	// redirect URL in the environment) gives its own -addr.
	addr := ""
	if i := slices.Index(args, "-addr"); i >= 0 && i+1 < len(args) {
		addr = args[i+1]
	} else {
		var err error
		if addr, err = freeLoopbackAddr(); err != nil {
			t.Fatal(err)
		}
	}
	// The MCP endpoint's default port is one for the whole machine: a test
	// that wants it names its own.
	if !slices.Contains(args, "-mcp-addr") {
		args = append([]string{"-mcp-addr", "off"}, args...)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- run(ctx, append([]string{"serve", "-addr", addr}, args...), io.Discard, logs) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("serve: %v", err)
			}
		case <-time.After(time.Minute):
			t.Error("serve did not stop within a minute")
		}
		if t.Failed() {
			t.Logf("serve log:\n%s", logs.String())
		}
	})
	base := "http://" + addr
	// Compiling the built-ins on a cold cache takes minutes on a busy
	// machine: no deadline of its own (the test binary's -timeout bounds
	// it), and the server is not stopped while it compiles.
	for ; ; time.Sleep(50 * time.Millisecond) {
		select {
		case err := <-done:
			t.Fatalf("serve ended: %v\n%s", err, logs.String())
		default:
		}
		if resp, err := http.Get(base + "/healthz"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return base
			}
		}
	}
}
