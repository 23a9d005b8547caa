package wasm_test

// The AssemblyScript test plugin (testdata/plugins/astext, on pdk/as) in
// agenthost's host, against the hostile cases that apply to a plugin of any
// language, and in Extism's own hosts (the Go SDK and the npm package), as
// pdk/crosshost_test.go runs the Go PDK's echo plugin.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	extism "github.com/extism/go-sdk"

	"github.com/agenthost/agenthost/host/figure"
	"github.com/agenthost/agenthost/host/wasm"
	"github.com/agenthost/agenthost/host/wasm/build"
)

// asModule returns the built AssemblyScript test plugin. Building it needs
// node and the npm packages .ci/testdeps installs (make testdeps); without
// them the tests skip on a developer's machine and fail in CI.
func asModule(tb testing.TB) []byte {
	tb.Helper()
	missing := ""
	if _, err := exec.LookPath("node"); err != nil {
		missing = "node is not on PATH"
	} else if _, err := build.FindASC("testdata/plugins/astext"); err != nil {
		missing = err.Error()
	} else if _, err := os.Stat("../../pdk/as/node_modules/@extism/as-pdk"); err != nil {
		missing = "pdk/as has no node_modules (npm install there)"
	}
	if missing != "" {
		if os.Getenv("CI") != "" {
			tb.Fatalf("the AssemblyScript plugin cannot be built: %s (.ci/testdeps installs it)", missing)
		}
		tb.Skipf("the AssemblyScript plugin cannot be built: %s (make testdeps)", missing)
	}
	return testModule(tb, "astext")
}

func loadAS(tb testing.TB, h *wasm.Host) *wasm.Plugin {
	tb.Helper()
	p, err := h.Load(context.Background(), wasm.Source{Origin: "astext", Module: asModule(tb)})
	if err != nil {
		tb.Fatalf("loading astext: %v", err)
	}
	return p
}

// asStats are the stats tool's answers: counts a reader checks by hand.
var asStats = []struct {
	text string
	want map[string]any
}{
	{"", map[string]any{"characters": 0.0, "bytes": 0.0, "words": 0.0, "lines": 0.0, "longestWord": ""}},
	{"one two  three", map[string]any{"characters": 14.0, "bytes": 14.0, "words": 3.0, "lines": 1.0, "longestWord": "three"}},
	// ü is 2 UTF-8 bytes, 😀 one character of 4 bytes (a UTF-16 surrogate pair).
	{"grüezi mitenand\nzwei Zeilen 😀", map[string]any{"characters": 29.0, "bytes": 33.0, "words": 5.0, "lines": 2.0, "longestWord": "mitenand"}},
	{"\"quoted\"\ttab\\", map[string]any{"characters": 13.0, "bytes": 13.0, "words": 2.0, "lines": 1.0, "longestWord": "\"quoted\""}},
}

func TestAssemblyScriptPluginTools(t *testing.T) {
	h := newHost(t, wasm.EgressOptions{}, nil)
	p := loadAS(t, h)
	if tools := p.Manifest().Tools; len(tools) != 10 {
		t.Fatalf("manifest tools = %d, want the 10 the code registers", len(tools))
	}
	for _, c := range asStats {
		r := call(t, p, "stats", map[string]any{"text": c.text})
		if !r.OK {
			t.Fatalf("stats(%q): %+v", c.text, r.Error)
		}
		var got map[string]any
		if err := json.Unmarshal(r.Data, &got); err != nil {
			t.Fatalf("stats(%q): %v in %s", c.text, err, r.Data)
		}
		if fmt.Sprint(got) != fmt.Sprint(c.want) {
			t.Errorf("stats(%q) = %v, want %v", c.text, got, c.want)
		}
	}
	if r := call(t, p, "stats", map[string]any{"text": "a b"}); r.Text != "2 words, 1 lines" {
		t.Errorf("stats summary = %q", r.Text)
	}
	big := strings.Repeat("grüezi ", 50000)
	if r := call(t, p, "repeat", map[string]any{"text": "grüezi ", "times": 50000}); !r.OK || r.Text != big {
		t.Fatalf("repeat: ok %v, %d bytes, error %+v", r.OK, len(r.Text), r.Error)
	}
	// The host validates arguments against the schema the code declared.
	if r := call(t, p, "stats", map[string]any{"text": 1}); r.OK || r.Error.Code != wasm.CodeInvalidArguments {
		t.Fatalf("stats with a number: %+v", r)
	}
}

// TestAssemblyScriptPluginProgress: an agenthost capability (JSON in kernel
// memory, pdk.request / pdk.answer) from AssemblyScript.
func TestAssemblyScriptPluginProgress(t *testing.T) {
	h := newHost(t, wasm.EgressOptions{}, nil)
	p := loadAS(t, h)
	var reports []wasm.Progress
	r := p.Call(context.Background(), "work", json.RawMessage(`{"text":"the pile"}`), &wasm.CallOptions{
		OnProgress: func(pr wasm.Progress) { reports = append(reports, pr) },
	})
	if !r.OK || r.Text != "done" {
		t.Fatalf("work: %+v", r)
	}
	if len(reports) != 1 || reports[0].Fraction != 0.5 || reports[0].Message != "halfway through the pile" || reports[0].Tool != "work" {
		t.Fatalf("reports = %+v", reports)
	}
}

func TestAssemblyScriptPluginHTTP(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "hello %s %s", r.Method, r.URL.Path)
	}))
	defer srv.Close()
	u, _ := url.Parse(srv.URL)
	h := newHost(t, wasm.EgressOptions{AllowPrivateHosts: []string{"allowed.test:" + u.Port()}, Resolver: fakeDNS{"allowed.test": "127.0.0.1", "evil.test": "127.0.0.1"}}, nil)
	p := loadAS(t, h)
	r := call(t, p, "fetch", map[string]any{"url": "http://allowed.test:" + u.Port() + "/x"})
	if !r.OK || string(r.Data) != `{"status":200,"body":"hello GET /x"}` {
		t.Fatalf("fetch allowed: %+v %s", r.Error, r.Data)
	}
	// A host outside the manifest's allowedHosts ends the call.
	r = call(t, p, "fetch", map[string]any{"url": "http://evil.test:" + u.Port() + "/"})
	if r.OK || r.Error.Code != wasm.CodeHTTPDenied {
		t.Fatalf("fetch evil.test: %+v", r)
	}
}

// TestAssemblyScriptPluginIsContained runs the hostile cases that apply to a
// plugin of any language against the AssemblyScript plugin, checking after
// each that the plugin still serves a normal call.
func TestAssemblyScriptPluginIsContained(t *testing.T) {
	h := newHost(t, wasm.EgressOptions{}, nil)
	p := loadAS(t, h)
	healthy := func(t *testing.T) {
		t.Helper()
		if r := call(t, p, "stats", map[string]any{"text": "still here"}); !r.OK || !bytes.Contains(r.Data, []byte(`"words":2`)) {
			t.Fatalf("the plugin no longer serves normal calls: %+v", r)
		}
	}
	if err := h.Warm(context.Background()); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, tool string
		args       map[string]any
		codes      []string // any of
		message    string
	}{
		{"an endless loop stops at the deadline", "spin", nil, []string{wasm.CodeTimeout}, ""},
		// AssemblyScript's allocator traps (unreachable) when memory.grow
		// fails, and says nothing: the host sees a trap at the limit.
		{"a memory bomb stops at the limit", "allocate", nil, []string{wasm.CodeOutOfMemory, wasm.CodeTrap}, ""},
		{"an answer that is no result frame", "badFrame", nil, []string{wasm.CodeInvalidOutput}, ""},
		{"an abort is the plugin's panic, with its message", "fail", nil, []string{wasm.CodePanic}, "abort: deliberate failure"},
		{"output past the limit", "repeat", map[string]any{"text": "x", "times": 1500000}, []string{wasm.CodeOutputTooLarge}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.args == nil {
				c.args = map[string]any{}
			}
			t0 := time.Now()
			r := call(t, p, c.tool, c.args)
			if r.OK || !containsString(c.codes, r.Error.Code) || !strings.Contains(r.Error.Message, c.message) {
				t.Fatalf("%s: %+v, want one of %v with %q", c.tool, r.Error, c.codes, c.message)
			}
			if limit := uint64(32 << 20); r.Stats.MemoryBytes > limit {
				t.Fatalf("guest memory %d exceeds the declared limit %d", r.Stats.MemoryBytes, limit)
			}
			within(t, time.Since(t0), time.Second+stopBound, c.tool)
			healthy(t)
		})
	}
	t.Run("no state crosses tenants", func(t *testing.T) {
		for _, size := range []int{1, 4} {
			h := newHost(t, wasm.EgressOptions{}, func(c wasm.Config) wasm.Config { return c.WithPoolSize(size) })
			p := loadAS(t, h)
			if r := callAs(t, p, "tenant-a", "remember", map[string]any{"text": "secret of A"}); !r.OK {
				t.Fatal(r.Error)
			}
			if r := callAs(t, p, "tenant-b", "recall", map[string]any{}); !r.OK || string(r.Data) != `{"memory":"","variable":""}` {
				t.Fatalf("pool %d: tenant B saw %s (%+v)", size, r.Data, r.Error)
			}
			// An instance serves one tenant: with one instance, B's call
			// closed A's, so A's memory may be gone, but not its variable.
			if r := callAs(t, p, "tenant-a", "recall", map[string]any{}); !r.OK || !strings.HasSuffix(string(r.Data), `"variable":"secret of A"}`) {
				t.Fatalf("pool %d: tenant A lost its state: %s (%+v)", size, r.Data, r.Error)
			}
		}
	})
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// asCrossCases are calls and the outputs every Extism host must give.
var asCrossCases = []struct {
	fn, input, want string
}{
	{"call", "stats\n" + `{"text":"grüezi mitenand 😀"}`, "{\"ok\":true,\"body\":\"json\",\"text\":\"3 words, 1 lines\"}\n" + `{"characters":17,"bytes":21,"words":3,"lines":1,"longestWord":"mitenand"}`},
	{"call", "repeat\n" + `{"text":"0123456789ü","times":1000}`, "{\"ok\":true,\"body\":\"text\"}\n" + strings.Repeat("0123456789ü", 1000)},
	// The test hosts serve agenthost:progress as any Extism host may.
	{"call", "work\n" + `{"text":"the pile"}`, "{\"ok\":true,\"body\":\"text\"}\ndone"},
	{"call", "nosuch\n{}", `{"ok":false,"error":{"code":"unknown_tool","message":"this plugin has no tool \"nosuch\""}}` + "\n"},
	{"call", "stats\n{\"text\":", `{"ok":false,"error":{"code":"invalid_arguments","message":"unexpected end at offset 8"}}` + "\n"},
}

func TestAssemblyScriptRunsInExtismGoSDK(t *testing.T) {
	ctx := context.Background()
	// The agenthost:progress capability as another Extism host serves it
	// (docs/plugin-abi.md#capabilities): JSON request and answer in kernel
	// memory.
	var progress []string
	report := extism.NewHostFunctionWithStack("report", func(_ context.Context, cp *extism.CurrentPlugin, stack []uint64) {
		req, err := cp.ReadBytes(stack[0])
		if err != nil {
			panic(err)
		}
		progress = append(progress, string(req))
		if stack[0], err = cp.WriteString(`{"ok":true,"data":{}}`); err != nil {
			panic(err)
		}
	}, []extism.ValueType{extism.ValueTypeI64}, []extism.ValueType{extism.ValueTypeI64})
	report.SetNamespace("agenthost:progress")
	// Without WASI: the plugin imports nothing but extism:host/env and
	// agenthost:progress.
	p, err := extism.NewPlugin(ctx, extism.Manifest{Wasm: []extism.Wasm{extism.WasmData{Data: asModule(t)}}}, extism.PluginConfig{}, []extism.HostFunction{report})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close(ctx)
	for _, c := range asCrossCases {
		rc, out, err := p.Call(c.fn, []byte(c.input))
		if err != nil || rc != 0 {
			t.Fatalf("%s(%.30q): rc %d, %v", c.fn, c.input, rc, err)
		}
		if string(out) != c.want {
			t.Fatalf("%s(%.30q) = %.200q, want %.200q", c.fn, c.input, out, c.want)
		}
	}
	if len(progress) != 1 || progress[0] != `{"fraction":0.5,"message":"halfway through the pile"}` {
		t.Fatalf("progress requests = %q", progress)
	}
	_, out, err := p.Call("describe", nil)
	if err != nil || !bytes.Contains(out, []byte(`"name":"stats"`)) {
		t.Fatalf("describe: %v %s", err, out)
	}
	// An abort fails the call (the Go SDK reports the trap, not the
	// message error_set left before it).
	if _, _, err := p.Call("call", []byte("fail\n{}")); err == nil || !strings.Contains(err.Error(), "unreachable") {
		t.Fatalf("fail: %v", err)
	}
}

func TestAssemblyScriptRunsInExtismJS(t *testing.T) {
	module := asModule(t)
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatal("node is required for this test (see .ci/testdeps)")
	}
	dir := "../../pdk/as"
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@extism", "extism")); err != nil {
		t.Fatalf("@extism/extism is not installed: run `npm install` in pdk/as (make testdeps does)")
	}
	file := filepath.Join(t.TempDir(), "astext.wasm")
	if err := os.WriteFile(file, module, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range asCrossCases {
		cmd := exec.Command(node, "--no-warnings", filepath.Join(dir, "test", "run.mjs"), file, c.fn, c.input)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("node: %v\n%s", err, stderr.String())
		}
		if string(out) != c.want {
			t.Fatalf("%s(%.30q) = %.200q, want %.200q", c.fn, c.input, out, c.want)
		}
		if strings.HasPrefix(c.input, "work\n") && !strings.Contains(stderr.String(), `progress {"fraction":0.5,"message":"halfway through the pile"}`) {
			t.Fatalf("the progress request did not reach the host: %s", stderr.String())
		}
	}
}

// BenchmarkAssemblyScriptCall measures calls of the AssemblyScript plugin in
// agenthost's host, to compare with plugin.call.* of the Go echo plugin: a
// small stats call, and 1 MiB in (stats) and out (repeat), which move through
// the Extism kernel 8 bytes per host call (pdk/as has no fast I/O).
func BenchmarkAssemblyScriptCall(b *testing.B) {
	h := newHost(b, wasm.EgressOptions{}, nil)
	p := loadAS(b, h)
	ctx := context.Background()
	for _, c := range []struct {
		name, tool string
		args       json.RawMessage
		n          int
	}{
		{"stats.64B", "stats", echoArgs(64), 5000},
		{"stats.1MiB", "stats", json.RawMessage(`{"text":"` + strings.Repeat("word ", (1<<20)/5) + `"}`), 30},
		{"repeat.1MiB", "repeat", json.RawMessage(`{"text":"0123456789abcdef","times":` + fmt.Sprint((1<<20)/16-8) + `}`), 30},
	} {
		if r := p.Call(ctx, c.tool, c.args, nil); !r.OK {
			b.Fatalf("%s: %+v", c.name, r.Error)
		}
		d := make([]time.Duration, c.n)
		for i := range d {
			t0 := time.Now()
			r := p.Call(ctx, c.tool, c.args, nil)
			d[i] = time.Since(t0)
			if !r.OK {
				b.Fatalf("%s: %+v", c.name, r.Error)
			}
		}
		figure.Report("plugin.as.call."+c.name+".p50", figure.Micros(figure.Percentile(d, 50)), "us")
	}
}
