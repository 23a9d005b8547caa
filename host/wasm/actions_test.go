package wasm_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/agenthost/agenthost/host/wasm"
	"github.com/agenthost/agenthost/host/wasm/manifest"
)

// TestActionsPlugin: an actions plugin's dynamicMode actions are its tools,
// named method.action, checked against its code at load, validated on the
// way in (parameters) and out (the ActionResult schema).
func TestActionsPlugin(t *testing.T) {
	h := newHost(t, wasm.EgressOptions{}, nil)
	p := load(t, h, "actionsdemo")
	if err := h.Warm(context.Background()); err != nil {
		t.Fatalf("Warm (the manifest matches the code): %v", err)
	}
	m := p.Manifest()
	if len(m.Actions) != 4 {
		t.Fatalf("actions: %+v", m.Actions)
	}
	var tools []string
	for _, ti := range h.Tools() {
		tools = append(tools, ti.Name)
		if !ti.IsAction() || len(ti.OutputSchema) == 0 {
			t.Errorf("%s: action %v, output schema %s", ti.Name, ti.IsAction(), ti.OutputSchema)
		}
	}
	if !slices.Equal(tools, []string{"demo.fail", "demo.peek", "demo.report"}) {
		t.Fatalf("tools = %v (demo.archive is not dynamicMode)", tools)
	}
	if r := h.Call(context.Background(), "demo.archive", []byte(`{}`), nil); r.OK || r.Error.Code != wasm.CodeUnknownTool {
		t.Errorf("demo.archive: %+v", r.Error)
	}
	r := h.Call(context.Background(), "demo.report", []byte(`{"title":"t","rows":2}`), nil)
	if !r.OK {
		t.Fatalf("demo.report: %+v", r.Error)
	}
	var res struct {
		Success   bool
		Documents []struct {
			DocumentName string
			DocumentData []byte
		}
	}
	if err := json.Unmarshal(r.Data, &res); err != nil || !res.Success || len(res.Documents) != 2 || string(res.Documents[0].DocumentData) != "Report: t\n" {
		t.Fatalf("result %s (%v)", r.Data, err)
	}
	if r := h.Call(context.Background(), "demo.report", []byte(`{"title":"t"}`), nil); r.OK || r.Error.Code != wasm.CodeInvalidArguments || r.Stats.MemoryBytes != 0 {
		t.Errorf("missing rows: %+v (memory %d)", r.Error, r.Stats.MemoryBytes)
	}
}

// TestActionsPluginLies: a manifest that lies about its actions, or a
// module that claims another kind than its code has, is refused on its
// first call and by Warm.
func TestActionsPluginLies(t *testing.T) {
	t.Run("liar", func(t *testing.T) {
		h := newHost(t, wasm.EgressOptions{}, nil)
		load(t, h, "actionsliar")
		r := h.Call(context.Background(), "liar.lookup", []byte(`{}`), nil)
		if r.OK || r.Error.Code != wasm.CodeUnavailable || !strings.Contains(r.Error.Message, "readOnly") {
			t.Fatalf("liar.lookup: %+v", r.Error)
		}
		if err := h.Warm(context.Background()); !errors.Is(err, wasm.ErrManifestMismatch) {
			t.Fatalf("Warm = %v, want ErrManifestMismatch", err)
		}
	})
	object := json.RawMessage(`{"type":"object","properties":{},"additionalProperties":false}`)
	cases := []struct {
		name, module string
		m            manifest.Manifest
		call, want   string
	}{
		{"a tool plugin whose code has actions", "actionsdemo",
			manifest.Manifest{Kind: manifest.KindTool, Tools: []manifest.Tool{{Name: "report", Description: "r", InputSchema: object}}},
			"report", "only an actions plugin has actions"},
		{"an actions plugin whose code has tools", "echo",
			manifest.Manifest{Kind: manifest.KindActions, Actions: []manifest.Action{{Method: "echo", Action: "echo", Description: "e", Parameters: object, DynamicMode: true}}},
			"echo.echo", "an actions plugin has only actions"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.m.ManifestVersion, c.m.Name, c.m.Version, c.m.Description = manifest.Version, "pretender", "1.0.0", "pretends"
			mod, err := manifest.Embed(testModule(t, c.module), &c.m)
			if err != nil {
				t.Fatal(err)
			}
			h := newHost(t, wasm.EgressOptions{}, nil)
			if _, err := h.Load(context.Background(), wasm.Source{Origin: "pretender", Module: mod}); err != nil {
				t.Fatal(err)
			}
			r := h.Call(context.Background(), c.call, []byte(`{}`), nil)
			if r.OK || r.Error.Code != wasm.CodeUnavailable || !strings.Contains(r.Error.Message, c.want) {
				t.Fatalf("%s: %+v", c.call, r.Error)
			}
		})
	}
}

func TestCompareActions(t *testing.T) {
	obj := json.RawMessage(`{"type":"object"}`)
	a := manifest.Action{Method: "m", Action: "a", Description: "d", Parameters: obj, DynamicMode: true}
	b := manifest.Action{Method: "m", Action: "b", Description: "d", Parameters: obj}
	with := func(x manifest.Action, f func(*manifest.Action)) manifest.Action { f(&x); return x }
	cases := []struct {
		name             string
		declared, actual []manifest.Action
		want             string
	}{
		{"equal", []manifest.Action{a, b}, []manifest.Action{b, a}, ""},
		{"a description may differ", []manifest.Action{a}, []manifest.Action{with(a, func(x *manifest.Action) { x.Description = "other" })}, ""},
		{"declared, not registered", []manifest.Action{a, b}, []manifest.Action{a}, "m.b is declared"},
		{"registered, not declared", []manifest.Action{a}, []manifest.Action{a, b}, "registers action m.b"},
		{"dynamicMode", []manifest.Action{b}, []manifest.Action{with(b, func(x *manifest.Action) { x.DynamicMode = true })}, "dynamicMode=false"},
		{"readOnly", []manifest.Action{with(a, func(x *manifest.Action) { x.ReadOnly = true })}, []manifest.Action{a}, "readOnly=true"},
		{"parameters", []manifest.Action{a}, []manifest.Action{with(a, func(x *manifest.Action) { x.Parameters = json.RawMessage(`{"type":"string"}`) })}, "parameter schema"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := wasm.CompareActions(c.declared, c.actual)
			if c.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if !errors.Is(err, wasm.ErrManifestMismatch) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want %q", err, c.want)
			}
		})
	}
}

// TestWireNameCollisionRefused: a tool that a model would see under the
// same name as a loaded one (demo_report beside demo.report) is refused.
func TestWireNameCollisionRefused(t *testing.T) {
	h := newHost(t, wasm.EgressOptions{}, nil)
	load(t, h, "actionsdemo")
	m := manifest.Manifest{ManifestVersion: manifest.Version, Name: "lookalike", Version: "1.0.0", Kind: manifest.KindTool, Description: "l",
		Tools: []manifest.Tool{{Name: "demo_report", Description: "r", InputSchema: json.RawMessage(`{"type":"object"}`)}}}
	mod, err := manifest.Embed(testModule(t, "echo"), &m)
	if err != nil {
		t.Fatal(err)
	}
	_, err = h.Load(context.Background(), wasm.Source{Origin: "lookalike", Module: mod})
	if !errors.Is(err, wasm.ErrRefused) || !strings.Contains(err.Error(), `"demo_report" to a model`) {
		t.Fatalf("Load = %v", err)
	}
}
