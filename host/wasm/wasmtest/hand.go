package wasmtest

import (
	"encoding/json"
	"testing"

	"github.com/agenthost/agenthost/host/wasm/manifest"
	asm "github.com/agenthost/agenthost/host/wasm/wasmtest/wasmasm"
)

// HandModule assembles a hostile guest by hand, what no Go compiler would
// emit, named name. It imports WASI's sched_yield (so a host instruments
// it), has one page of memory, exports `call` (no parameters, an i32
// result) with the given body, and carries a manifest declaring one
// read-only tool "run" (its tool name is name+"Run" when name is not
// "hand", so several can be loaded beside each other). start, when set,
// is the body of the module's start function.
func HandModule(tb testing.TB, name string, call, start []byte) []byte {
	tb.Helper()
	m := asm.New()
	void := m.Type(nil, nil)
	ret := m.Type(nil, []asm.ValType{asm.I32})
	m.ImportFunc("wasi_snapshot_preview1", "sched_yield", ret)
	m.Memory(1, 1)
	m.ExportFunc("call", m.Func(ret, nil, call))
	if start != nil {
		m.Start(m.Func(void, nil, start))
	}
	tool := "run"
	if name != "hand" {
		tool = name + "Run"
	}
	man := manifest.Manifest{ManifestVersion: manifest.Version, Name: name, Version: "1.0.0", Kind: manifest.KindTool,
		Description: "hand-written hostile guest",
		Tools: []manifest.Tool{{Name: tool, Description: "runs", ReadOnly: true,
			InputSchema: json.RawMessage(`{"type":"object","properties":{},"additionalProperties":false}`)}}}
	out, err := manifest.Embed(m.Bytes(), &man)
	if err != nil {
		tb.Fatal(err)
	}
	return out
}

// Spin is a loop that never ends: loop body... br 0 end.
func Spin(body ...[]byte) []byte {
	out := asm.Loop()
	for _, b := range body {
		out = append(out, b...)
	}
	out = append(out, asm.Br(0)...)
	return append(out, asm.End()...)
}

// Forever is Spin as the body of a function returning an i32.
func Forever(body ...[]byte) []byte { return append(Spin(body...), asm.I32Const(0)...) }
