package tools_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/agenthost/agenthost/host/tools"
	"github.com/agenthost/agenthost/host/wasm/wasmtest"
)

func TestSets(t *testing.T) {
	h := wasmtest.Host(t, "notebook", "echo")
	reg := tools.NewRegistry(h, map[string][]string{
		"core":    {"lookup", "readFile"},
		"chatbot": {"@core", "echo"},
		"all":     {tools.AllTools},
		"loopy":   {"@loopy"},
	})
	names := func(s *tools.Set) []string {
		var out []string
		for _, t := range s.Tools() {
			out = append(out, t.Name)
		}
		return out
	}
	for _, c := range []struct {
		set     string
		extra   []string
		want    []string
		missing []string
		err     string
	}{
		{"", nil, []string{"lookup"}, []string{"readFile"}, ""},
		{"chatbot", []string{"writeNote"}, []string{"lookup", "echo", "writeNote"}, []string{"readFile"}, ""},
		{"all", nil, []string{"echo", "echoJSON", "lookup", "writeNote"}, nil, ""},
		{"loopy", nil, nil, nil, "includes itself"},
		{"nope", nil, nil, nil, "unknown tool set"},
	} {
		s, missing, err := reg.Set(c.set, c.extra...)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%s: err %v, want %q", c.set, err, c.err)
			}
			continue
		}
		if err != nil || !slices.Equal(names(s), c.want) || !slices.Equal(missing, c.missing) {
			t.Errorf("%s: %v missing %v err %v, want %v missing %v", c.set, names(s), missing, err, c.want, c.missing)
		}
	}
	s, _, _ := reg.Set("core")
	if l, ok := s.Lookup("lookup"); !ok || !l.ReadOnly || len(l.Parameters) == 0 {
		t.Fatalf("lookup: %+v", l)
	}
	// A tool outside the set is never called, even if a plugin has it.
	r := s.Call(context.Background(), "writeNote", []byte(`{"text":"x"}`), nil)
	if r.OK || r.Error.Code != "unknown_tool" || !strings.Contains(r.Error.Message, "lookup") {
		t.Fatalf("tool outside the set: %+v", r)
	}
}

// TestPinnedVersions: "tool@1.0.0" offers the tool under its own name, runs
// that version, wins over an unpinned mention of the same tool, and is
// missing (never served by another version) when that version is not
// loaded.
func TestPinnedVersions(t *testing.T) {
	h := wasmtest.Host(t, "echo")
	reg := tools.NewRegistry(h, map[string][]string{
		"pinned": {"echo@1.0.0", "@all"},
		"gone":   {"echo@0.9.0"},
		"all":    {tools.AllTools},
	}).WithVersions(h)
	s, missing, err := reg.Set("pinned")
	if err != nil || len(missing) != 0 {
		t.Fatalf("pinned: missing %v, err %v", missing, err)
	}
	var names []string
	for _, tl := range s.Tools() {
		names = append(names, tl.Name)
	}
	if !slices.Equal(names, []string{"echo", "echoJSON"}) {
		t.Fatalf("pinned set offers %v", names)
	}
	if r := s.Call(context.Background(), "echo", []byte(`{"text":"hi"}`), nil); !r.OK || r.Text != "hi" {
		t.Fatalf("pinned call: %+v", r)
	}
	s, missing, _ = reg.Set("gone")
	if len(s.Tools()) != 0 || !slices.Equal(missing, []string{"echo@0.9.0"}) {
		t.Fatalf("a pin to a version not loaded: tools %v, missing %v", s.Tools(), missing)
	}
	// Without versions known, a pin is missing too.
	if _, missing, _ := tools.NewRegistry(h, map[string][]string{"p": {"echo@1.0.0"}}).Set("p"); !slices.Equal(missing, []string{"echo@1.0.0"}) {
		t.Fatalf("no versions: missing %v", missing)
	}
}
