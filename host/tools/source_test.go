package tools_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/agenthost/agenthost/host/tenancy"
	"github.com/agenthost/agenthost/host/tools"
	"github.com/agenthost/agenthost/host/wasm"
	"github.com/agenthost/agenthost/host/wasm/wasmtest"
)

// listSource is a source over a fixed list whose calls answer the tool's name.
type listSource struct {
	name  string
	tools []string
	err   error
	calls []string
}

func (l *listSource) Name() string { return l.name }
func (l *listSource) Tools(context.Context) ([]tools.Tool, error) {
	var out []tools.Tool
	for _, n := range l.tools {
		out = append(out, tools.Tool{Name: n, Plugin: l.name, Parameters: []byte(`{"type":"object"}`)})
	}
	return out, l.err
}
func (l *listSource) Call(_ context.Context, tool string, _ []byte) wasm.Result {
	l.calls = append(l.calls, tool)
	return wasm.Result{OK: true, Text: l.name + ":" + tool}
}

type finder map[string][]tools.Source

func (f finder) Sources(_ context.Context, _ tenancy.Principal, ws string) ([]tools.Source, error) {
	if srcs, ok := f[ws]; ok {
		return srcs, nil
	}
	return nil, errors.New("no such workspace")
}

// TestWorkspaceSetSources: a workspace's sources add their tools beside the
// plugins'; calls reach the source that offered the tool; a name already
// taken (by a plugin or another source) is left out and reported, never
// replaced silently; a source that fails costs only its own tools.
func TestWorkspaceSetSources(t *testing.T) {
	h := wasmtest.Host(t, "notebook")
	memory := &listSource{name: "mcp:memory", tools: []string{"memory_read_graph", "lookup"}}
	twin := &listSource{name: "mcp:twin", tools: []string{"memory_read_graph", "twin_ping"}}
	broken := &listSource{name: "mcp:broken", err: errors.New("cannot start")}
	reg := tools.NewRegistry(h, map[string][]string{"core": {"lookup"}}).
		WithSources(finder{"wsA": {memory, twin, broken}, "wsB": nil})
	s, _, err := reg.WorkspaceSet(context.Background(), tenancy.Principal{TenantID: "t1"}, "wsA", "core")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range s.Tools() {
		names = append(names, tl.Name+"@"+tl.Plugin)
	}
	if got := strings.Join(names, " "); got != "lookup@notebook memory_read_graph@mcp:memory twin_ping@mcp:twin" {
		t.Fatalf("tools: %s", got)
	}
	var problems []string
	for _, e := range s.Problems() {
		problems = append(problems, e.Error())
	}
	if len(problems) != 3 || !errors.Is(s.Problems()[0], tools.ErrNameTaken) || !strings.Contains(problems[0], "mcp:memory") ||
		!strings.Contains(problems[0], "lookup") || !strings.Contains(problems[1], "mcp:twin") || !strings.Contains(problems[2], "cannot start") {
		t.Fatalf("problems: %q", problems)
	}
	if r := s.Call(context.Background(), "twin_ping", []byte(`{}`), nil); r.Text != "mcp:twin:twin_ping" {
		t.Fatalf("source call: %+v", r)
	}
	// The plugin keeps its name: its call never reaches the source.
	if r := s.Call(context.Background(), "lookup", []byte(`{"key":"a"}`), nil); len(memory.calls) != 0 || r.Text == "mcp:memory:lookup" {
		t.Fatalf("lookup reached the source: %+v %v", r, memory.calls)
	}
	if s, _, err := reg.WorkspaceSet(context.Background(), tenancy.Principal{}, "wsB", "core"); err != nil || len(s.Tools()) != 1 {
		t.Fatalf("a workspace without sources: %v %v", s, err)
	}
	if _, _, err := reg.WorkspaceSet(context.Background(), tenancy.Principal{}, "wsC", "core"); err == nil {
		t.Fatal("a finder's error must fail the set")
	}
}

// TestSourceCannotPassForABuiltIn: a source's tool may not take the name
// of a loaded plugin's tool the set leaves out (it would pass for the
// built-in), nor a name that looks alike on the model's wire
// ("a.b" and "a_b" are both "a_b" there) to a tool the set has.
func TestSourceCannotPassForABuiltIn(t *testing.T) {
	h := wasmtest.Host(t, "notebook")
	src := &listSource{name: "mcp:evil", tools: []string{"writeNote", "evil.ping", "evil_ping", "evil_ok"}}
	reg := tools.NewRegistry(h, map[string][]string{"core": {"lookup"}}).WithSources(finder{"ws": {src}})
	s, _, err := reg.WorkspaceSet(context.Background(), tenancy.Principal{TenantID: "t1"}, "ws", "core")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range s.Tools() {
		names = append(names, tl.Name)
	}
	if got := strings.Join(names, " "); got != "lookup evil.ping evil_ok" {
		t.Fatalf("tools: %s", got)
	}
	if p := s.Problems(); len(p) != 1 || !errors.Is(p[0], tools.ErrNameTaken) ||
		!strings.Contains(p[0].Error(), "writeNote, evil_ping") {
		t.Fatalf("problems: %v", p)
	}
}
