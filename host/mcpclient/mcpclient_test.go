package mcpclient_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/agenthost/agenthost/host/mcpclient"
	"github.com/agenthost/agenthost/host/mcpclient/mcpconfig"
	"github.com/agenthost/agenthost/host/tenancy"
	"github.com/agenthost/agenthost/host/tools"
	"github.com/agenthost/agenthost/host/wasm"
)

// hostileBin is the hostile server (testdata/hostile), built once.
var hostileBin string

func TestMain(m *testing.M) {
	if os.Getenv(snoopingHostEnv) != "" {
		os.Exit(snoopingHost())
	}
	dir, err := os.MkdirTemp("", "mcpclient-test")
	if err != nil {
		panic(err)
	}
	// Servers run as nobody when the tests run as root: the program must
	// be theirs to run.
	if err := os.Chmod(dir, 0o755); err != nil {
		panic(err)
	}
	hostileBin = filepath.Join(dir, "hostile")
	if out, err := exec.Command("go", "build", "-o", hostileBin, "./testdata/hostile").CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "building the hostile server: %v\n%s", err, out)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// servers is a Store over a fixed list: the SQL store's side is the
// conformance suite's (host/store/storetest).
type servers []mcpconfig.Server

func (s servers) WorkspaceMCPServers(_ context.Context, p tenancy.Principal, ws string) ([]mcpconfig.Server, error) {
	var out []mcpconfig.Server
	for _, x := range s {
		if x.TenantID == p.TenantID && (x.WorkspaceID == "" || x.WorkspaceID == ws) {
			out = append(out, x)
		}
	}
	return out, nil
}

func (servers) CreateMCPServer(_ context.Context, _ tenancy.Principal, s mcpconfig.Server) (mcpconfig.Server, error) {
	return s, nil
}
func (s servers) MCPServers(context.Context, tenancy.Principal) ([]mcpconfig.Server, error) {
	return s, nil
}
func (servers) MCPServer(context.Context, tenancy.Principal, string) (mcpconfig.Server, error) {
	return mcpconfig.Server{}, tenancy.ErrNotFound
}
func (servers) DeleteMCPServer(context.Context, tenancy.Principal, string) error { return nil }

var alice = tenancy.Principal{TenantID: "t1", UserID: "alice"}

func hostile(cfg mcpconfig.Config) mcpconfig.Server {
	cfg.Transport = mcpconfig.Stdio
	if cfg.Command == nil {
		cfg.Command = []string{hostileBin}
	}
	return mcpconfig.Server{ID: "srv-hostile", TenantID: "t1", Name: "hostile", Config: cfg}
}

// source returns the server's tool source from a fresh manager.
func source(t testing.TB, s mcpconfig.Server, opts mcpclient.Options) (tools.Source, *mcpclient.Manager) {
	t.Helper()
	if opts.DataDir == "" {
		opts.DataDir = t.TempDir()
	}
	if opts.Commands == nil {
		opts.Commands = []string{hostileBin}
	}
	m, err := mcpclient.New(servers{s}, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	srcs, err := m.Sources(context.Background(), alice, "ws1")
	if err != nil || len(srcs) != 1 {
		t.Fatalf("sources: %v %v", srcs, err)
	}
	return srcs[0], m
}

func call(t *testing.T, src tools.Source, tool, args string) wasm.Result {
	t.Helper()
	if _, err := src.Tools(context.Background()); err != nil {
		t.Fatalf("tools: %v", err)
	}
	return src.Call(context.Background(), tool, []byte(args))
}

// TestHostileContained calls each misbehaviour of the hostile server and
// then the honest tool: every failure is a clear error result, and the
// server is usable again after it (reconnected or restarted as needed).
func TestHostileContained(t *testing.T) {
	src, _ := source(t, hostile(mcpconfig.Config{MaxResultBytes: 1 << 20}), mcpclient.Options{})
	// The slow tool never answers: any timeout shows it, and only its
	// case waits for one.
	impatient, _ := source(t, hostile(mcpconfig.Config{TimeoutMs: 500}), mcpclient.Options{})
	for _, c := range []struct {
		tool, args string
		code, msg  string
	}{
		{"hostile_echo", `{"message":"hi"}`, "", "hi"},
		{"hostile_echo", `{"message":7}`, wasm.CodeInvalidArguments, "/message"},
		{"hostile_echo", `{"message":"x","extra":1}`, wasm.CodeInvalidArguments, "extra"},
		{"hostile_slow", `{}`, wasm.CodeTimeout, "did not answer within 500ms"},
		{"hostile_huge", `{}`, wasm.CodeOutputTooLarge, "larger than its bound of 1048576 bytes"},
		{"hostile_huge", `{"bytes":1000}`, "", strings.Repeat("x", 1000)},
		{"hostile_garbage", `{}`, wasm.CodeInvalidOutput, "broke the protocol"},
		{"hostile_notjson", `{}`, wasm.CodeInvalidOutput, "broke the protocol"},
		{"hostile_die", `{}`, wasm.CodeUnavailable, "dying mid-call on purpose"},
		{"hostile_nope", `{}`, wasm.CodeUnknownTool, "no tool"},
	} {
		t.Run(strings.TrimPrefix(c.tool, "hostile_")+c.code, func(t *testing.T) {
			src := src
			if c.tool == "hostile_slow" {
				src = impatient
			}
			r := call(t, src, c.tool, c.args)
			if c.code == "" {
				if !r.OK || r.Text != c.msg {
					t.Fatalf("result %+v, want text %.40q", r, c.msg)
				}
			} else if r.OK || r.Error == nil || r.Error.Code != c.code || !strings.Contains(r.Error.Message, c.msg) {
				t.Fatalf("result %+v, want %s containing %q", r, c.code, c.msg)
			}
			// The server is usable after every misbehaviour.
			if r := call(t, src, "hostile_echo", `{"message":"still here"}`); !r.OK || r.Text != "still here" {
				t.Fatalf("after %s: %+v", c.tool, r)
			}
		})
	}
}

// TestDeafServer: a server that stops reading its input cannot hold a
// call past its timeout, although the SDK's write to it blocks; the
// server is stopped and started again for the next call.
func TestDeafServer(t *testing.T) {
	src, _ := source(t, hostile(mcpconfig.Config{TimeoutMs: 300}), mcpclient.Options{})
	if r := call(t, src, "hostile_deaf", `{}`); r.OK || r.Error.Code != wasm.CodeTimeout {
		t.Fatalf("deaf: %+v", r)
	}
	big := `{"message":"` + strings.Repeat("y", 1<<20) + `"}`
	if r := call(t, src, "hostile_echo", big); r.OK || r.Error.Code != wasm.CodeTimeout {
		t.Fatalf("a call the deaf server does not read: %+v", r)
	}
	if r := call(t, src, "hostile_echo", `{"message":"back"}`); !r.OK || r.Text != "back" {
		t.Fatalf("after the deaf server: %+v", r)
	}
}

// TestStdioEnvironment: a stdio server sees PATH and what the admin set of
// what the operator allowed (${WORKDIR} expanded, secrets included),
// nothing of the host's environment, and runs in a fresh empty directory
// outside the data directory, its own, removed when it ends.
func TestStdioEnvironment(t *testing.T) {
	t.Setenv("AGENTHOST_SECRET_KEY", "must-not-leak")
	key := testKey(t)
	sealer, err := mcpclient.NewSealer(key)
	if err != nil {
		t.Fatal(err)
	}
	s := hostile(mcpconfig.Config{Env: map[string]string{"MEMORY_FILE_PATH": "${WORKDIR}/memory.jsonl"}, SecretEnv: []string{"API_TOKEN"}})
	if s.Secrets, err = sealer.Seal(s.TenantID, s.Name, mcpconfig.Secrets{Env: map[string]string{"API_TOKEN": "s3cret"}}); err != nil {
		t.Fatal(err)
	}
	data := t.TempDir()
	src, m := source(t, s, mcpclient.Options{DataDir: data, Sealer: sealer, Commands: []string{"env=MEMORY_FILE_PATH,API_TOKEN " + hostileBin}})
	r := call(t, src, "hostile_env", `{}`)
	if !r.OK {
		t.Fatal(r.Error)
	}
	got := strings.Split(r.Text, "\n")
	dir, ok := strings.CutPrefix(got[0], "cwd=")
	if !ok || !filepath.IsAbs(dir) {
		t.Fatalf("no working directory in %q", got)
	}
	if rel, err := filepath.Rel(data, dir); err != nil || !strings.HasPrefix(rel, "..") {
		t.Errorf("working directory %s is inside the data directory %s", dir, data)
	}
	want := []string{"cwd=" + dir, "API_TOKEN=s3cret", "MEMORY_FILE_PATH=" + dir + "/memory.jsonl", "PATH=" + mcpconfig.SafePath}
	slices.Sort(got[1:])
	slices.Sort(want[1:])
	if !slices.Equal(got, want) {
		t.Fatalf("environment %q, want exactly %q", got, want)
	}
	fi, err := os.Stat(dir)
	if err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("working directory %v %v", fi, err)
	}
	if os.Geteuid() == 0 {
		if st := fi.Sys().(*syscall.Stat_t); st.Uid == 0 {
			t.Errorf("working directory owned by root: the server runs as another user")
		}
	}
	if es, err := os.ReadDir(dir); err != nil || len(es) != 0 {
		t.Errorf("working directory not fresh and empty: %v %v", es, err)
	}
	// A second process of the same server gets a directory of its own.
	m.Forget(s.ID)
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("working directory left after the server ended: %v", err)
	}
}

// TestReadOnlyAnnotations: a tool is read-only only if it says so, does
// not also say it destroys, and the admin trusts the claim.
func TestReadOnlyAnnotations(t *testing.T) {
	for _, c := range []struct {
		trust []string
		want  map[string]bool
	}{
		{nil, map[string]bool{"hostile_echo": false, "hostile_wipe": false, "hostile_erase": false, "hostile_slow": false}},
		{[]string{"echo"}, map[string]bool{"hostile_echo": true, "hostile_wipe": false, "hostile_erase": false, "hostile_slow": false}},
		{[]string{"*"}, map[string]bool{"hostile_echo": true, "hostile_wipe": true, "hostile_erase": false, "hostile_slow": false}},
	} {
		src, _ := source(t, hostile(mcpconfig.Config{ReadOnly: c.trust}), mcpclient.Options{})
		list, err := src.Tools(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]bool{}
		for _, tl := range list {
			got[tl.Name] = tl.ReadOnly
			if tl.Plugin != "mcp:hostile" {
				t.Errorf("%s: plugin %q", tl.Name, tl.Plugin)
			}
		}
		for name, ro := range c.want {
			if v, ok := got[name]; !ok || v != ro {
				t.Errorf("trust %v: %s read-only %v (listed %v), want %v", c.trust, name, v, ok, ro)
			}
		}
	}
}

// TestRefusedTools: a tool whose schema would read a host file, or whose
// name is no tool name, is left out and reported; the others are offered.
func TestRefusedTools(t *testing.T) {
	s := hostile(mcpconfig.Config{})
	_, m := source(t, s, mcpclient.Options{})
	st, err := m.Status(context.Background(), s)
	if err != nil {
		t.Fatal(err)
	}
	refused := strings.Join(st.Refused, "\n")
	if len(st.Refused) != 3 || !strings.Contains(refused, `"badref": inputSchema refers to another document ($ref "file:///etc/passwd")`) ||
		!strings.Contains(refused, `"untyped": its inputSchema is not of "type": "object"`) || !strings.Contains(refused, `"bad name!"`) {
		t.Fatalf("refused %q", st.Refused)
	}
	if !st.Connected || len(st.Tools) != 15 {
		t.Fatalf("status %+v", st)
	}
	// What hides or reorders text is gone from a description.
	for _, tl := range st.Tools {
		if tl.Name == "hostile_masked" && tl.Description != "Reads.setirw osla tI[2J Done." {
			t.Errorf("masked description %q", tl.Description)
		}
	}
}

// TestCrashingServerBacksOff: a server that cannot start fails with its
// stderr in the error, and is not started again until its back-off ends.
func TestCrashingServerBacksOff(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	s := hostile(mcpconfig.Config{Command: []string{hostileBin, "crash"}})
	src, _ := source(t, s, mcpclient.Options{Now: func() time.Time { return now }})
	_, err := src.Tools(context.Background())
	if err == nil || !strings.Contains(err.Error(), "crashing at start on purpose") || !strings.Contains(err.Error(), "exit status 2") {
		t.Fatalf("first try: %v", err)
	}
	_, err = src.Tools(context.Background())
	if err == nil || !strings.Contains(err.Error(), "failed 1 times in a row") || !strings.Contains(err.Error(), "next try in 1s") {
		t.Fatalf("second try, within the back-off: %v", err)
	}
	r := src.Call(context.Background(), "hostile_echo", []byte(`{"message":"x"}`))
	if r.OK || r.Error.Code != wasm.CodeUnknownTool {
		t.Fatalf("call of a server never listed: %+v", r)
	}
	now = now.Add(2 * time.Second)
	_, err = src.Tools(context.Background())
	if err == nil || !strings.Contains(err.Error(), "crashing at start") {
		t.Fatalf("after the back-off it tries again: %v", err)
	}
	_, err = src.Tools(context.Background())
	if err == nil || !strings.Contains(err.Error(), "next try in 2s") {
		t.Fatalf("the back-off doubles: %v", err)
	}
}

// TestProcessGroupKilled: what a stdio server started dies with it when
// the server is removed.
func TestProcessGroupKilled(t *testing.T) {
	s := hostile(mcpconfig.Config{})
	src, m := source(t, s, mcpclient.Options{})
	r := call(t, src, "hostile_spawn", `{}`)
	pid, err := strconv.Atoi(r.Text)
	if !r.OK || err != nil {
		t.Fatalf("spawn: %+v", r)
	}
	if !alive(pid) {
		t.Fatal("the child is not running")
	}
	m.Forget(s.ID)
	for i := 0; alive(pid); i++ {
		if i > 500 {
			t.Fatalf("the server's child %d outlived it", pid)
		}
		time.Sleep(10 * time.Millisecond)
	}
	r = src.Call(context.Background(), "hostile_echo", []byte(`{"message":"x"}`))
	if r.OK || r.Error.Code != wasm.CodeUnavailable || !strings.Contains(r.Error.Message, "removed") {
		t.Fatalf("a call after removal: %+v", r)
	}
}

// alive says whether pid runs (a zombie waiting for its reaper does not).
func alive(pid int) bool {
	if err := syscall.Kill(pid, 0); err != nil {
		return false
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	return len(f) > 0 && f[0] != "Z"
}

// TestCommandNotAllowed: a stdio server whose command the operator did not
// allow never runs, whoever stored it, and is refused when added.
func TestCommandNotAllowed(t *testing.T) {
	marker := filepath.Join(t.TempDir(), "ran")
	for _, c := range []struct {
		allowed []string
		command []string
		want    string
	}{
		{[]string{"/usr/bin/node /srv/memory.js"}, []string{"/usr/bin/touch", marker}, "not one the operator allows"},
		{[]string{}, []string{"/usr/bin/touch", marker}, "allows none"},
		// An entry's words must all match: an allowed script does not allow another.
		{[]string{"/usr/bin/touch /nowhere/else"}, []string{"/usr/bin/touch", marker}, "not one the operator allows"},
	} {
		s := hostile(mcpconfig.Config{Command: c.command})
		src, _ := source(t, s, mcpclient.Options{Commands: c.allowed})
		if _, err := src.Tools(context.Background()); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("allowed %q, command %q: %v", c.allowed, c.command, err)
		}
		if _, err := os.Stat(marker); err == nil {
			t.Fatalf("the command ran")
		}
		a := mcpclient.Admin{Store: servers{}, Commands: c.allowed}
		_, err := a.Add(context.Background(), tenancy.Principal{TenantID: "t1", Admin: true},
			mcpclient.NewServer{Name: "x", Transport: mcpconfig.Stdio, Command: c.command})
		if !errors.Is(err, tenancy.ErrForbidden) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("add with allowed %q: %v", c.allowed, err)
		}
	}
}

// TestEndlessToolList: a tool list of pages without end is refused.
func TestEndlessToolList(t *testing.T) {
	src, _ := source(t, hostile(mcpconfig.Config{Command: []string{hostileBin, "endless"}}), mcpclient.Options{Commands: []string{hostileBin + " endless"}})
	if _, err := src.Tools(context.Background()); err == nil || !strings.Contains(err.Error(), "more than 32 pages") {
		t.Fatalf("endless pages: %v", err)
	}
}

// TestCallSpans: each call is a client span naming the tool and server,
// with the failure's code as its status.
func TestCallSpans(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	src, _ := source(t, hostile(mcpconfig.Config{}), mcpclient.Options{Tracer: tp})
	call(t, src, "hostile_echo", `{"message":"x"}`)
	call(t, src, "hostile_notjson", `{}`)
	spans := exp.GetSpans()
	if len(spans) != 2 || spans[0].Name != "mcp tools/call hostile_echo" || spans[0].SpanKind != trace.SpanKindClient ||
		spans[1].Status.Code != codes.Error || !strings.Contains(spans[1].Status.Description, "invalid_output") {
		t.Fatalf("spans %+v", spans)
	}
	attrs := map[string]string{}
	for _, a := range spans[0].Attributes {
		attrs[string(a.Key)] = a.Value.String()
	}
	if attrs["mcp.server"] != "hostile" || attrs["mcp.transport"] != "stdio" || attrs["gen_ai.tool.name"] != "hostile_echo" {
		t.Fatalf("attributes %v", attrs)
	}
}

// countingHandler counts log records by message and keeps the longest
// attribute value seen.
type countingHandler struct {
	mu      sync.Mutex
	counts  map[string]int
	longest int
}

func (h *countingHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h *countingHandler) Handle(_ context.Context, r slog.Record) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.counts[r.Message]++
	r.Attrs(func(a slog.Attr) bool {
		h.longest = max(h.longest, len(a.Value.String()))
		return true
	})
	return nil
}
func (h *countingHandler) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h *countingHandler) WithGroup(string) slog.Handler      { return h }

// TestNoisyStderr: a server's standard error reaches the log bounded in
// lines and in line length.
func TestNoisyStderr(t *testing.T) {
	h := &countingHandler{counts: map[string]int{}}
	s := hostile(mcpconfig.Config{})
	src, m := source(t, s, mcpclient.Options{Logger: slog.New(h)})
	if r := call(t, src, "hostile_noisy", `{}`); !r.OK {
		t.Fatal(r.Error)
	}
	m.Forget(s.ID) // the stderr reader ends with the process
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.counts["mcp server stderr"] != 1000 || h.counts["mcp server stderr: lines not logged"] != 1 || h.longest > 1100 {
		t.Fatalf("log records %v, longest value %d", h.counts, h.longest)
	}
}

// TestRemoveDuringCall: removing a server ends the calls it was serving
// with an error result, and its process; nothing waits for the call's own
// timeout.
func TestRemoveDuringCall(t *testing.T) {
	for _, tool := range []string{"hostile_slow", "hostile_deaf"} {
		s := hostile(mcpconfig.Config{TimeoutMs: 600_000})
		src, m := source(t, s, mcpclient.Options{})
		if _, err := src.Tools(context.Background()); err != nil {
			t.Fatal(err)
		}
		done := make(chan wasm.Result, 2)
		go func() { done <- src.Call(context.Background(), tool, []byte(`{}`)) }()
		if tool == "hostile_deaf" {
			// Its second call's write blocks: the server no longer reads.
			time.Sleep(50 * time.Millisecond)
			go func() {
				done <- src.Call(context.Background(), "hostile_echo", []byte(`{"message":"`+strings.Repeat("z", 1<<20)+`"}`))
			}()
		}
		time.Sleep(100 * time.Millisecond)
		m.Forget(s.ID)
		n := 1
		if tool == "hostile_deaf" {
			n = 2
		}
		for range n {
			if r := <-done; r.OK || r.Error.Code != wasm.CodeUnavailable || !strings.Contains(r.Error.Message, "removed") {
				t.Fatalf("%s: a call of a removed server: %+v", tool, r)
			}
		}
	}
}

// TestIdleDisconnect: a server unused for the idle timeout is stopped, and
// started again on its next use.
func TestIdleDisconnect(t *testing.T) {
	var mu sync.Mutex
	now := time.Unix(1_800_000_000, 0)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	s := hostile(mcpconfig.Config{})
	src, m := source(t, s, mcpclient.Options{Now: clock, IdleTimeout: time.Minute})
	r := call(t, src, "hostile_spawn", `{}`)
	pid, err := strconv.Atoi(r.Text)
	if !r.OK || err != nil {
		t.Fatalf("spawn: %+v", r)
	}
	mu.Lock()
	now = now.Add(2 * time.Minute)
	mu.Unlock()
	if _, err := m.Sources(context.Background(), alice, "ws1"); err != nil { // reaps idle connections
		t.Fatal(err)
	}
	for i := 0; alive(pid); i++ {
		if i > 500 {
			t.Fatalf("the idle server's process group still runs (%d)", pid)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if r := call(t, src, "hostile_echo", `{"message":"again"}`); !r.OK || r.Text != "again" {
		t.Fatalf("after idling: %+v", r)
	}
}
