package wasm_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/agenthost/agenthost/host/wasm"
	"github.com/agenthost/agenthost/host/wasm/manifest"
	asm "github.com/agenthost/agenthost/host/wasm/wasmtest/wasmasm"
)

// handModule assembles a hostile guest by hand: what no Go compiler would
// emit. It imports WASI's sched_yield (so the host instruments it), has one
// page of memory, exports `call` with the given body, and carries a
// manifest declaring one read-only tool "run". start, when set, becomes the
// module's start function.
func handModule(tb testing.TB, call []byte, start []byte) []byte {
	tb.Helper()
	m := asm.New()
	void := m.Type(nil, nil)
	ret := m.Type(nil, []asm.ValType{asm.I32})
	m.ImportFunc("wasi_snapshot_preview1", "sched_yield", ret)
	m.Memory(1, 1)
	fn := m.Func(ret, nil, call)
	m.ExportFunc("call", fn)
	if start != nil {
		m.Start(m.Func(void, nil, start))
	}
	man := manifest.Manifest{ManifestVersion: manifest.Version, Name: "hand", Version: "1.0.0", Kind: manifest.KindTool,
		Description: "hand-written hostile guest",
		Tools: []manifest.Tool{{Name: "run", Description: "runs", ReadOnly: true,
			InputSchema: json.RawMessage(`{"type":"object","properties":{},"additionalProperties":false}`)}}}
	out, err := manifest.Embed(m.Bytes(), &man)
	if err != nil {
		tb.Fatal(err)
	}
	return out
}

// spin is a loop that never ends: loop body... br 0 end.
func spin(body ...[]byte) []byte {
	out := asm.Loop()
	for _, b := range body {
		out = append(out, b...)
	}
	out = append(out, asm.Br(0)...)
	return append(out, asm.End()...)
}

// forever is spin as the body of a function returning an i32.
func forever(body ...[]byte) []byte { return append(spin(body...), asm.I32Const(0)...) }

// The rewrite adds the interrupt flag and the fuel counter as the module's
// next globals. A module whose code names them (indices it does not define)
// would, once rewritten, clear the flag or pin the fuel: it is refused at
// load, whatever the instruction.
func hostileInterruptGlobals(t testing.TB) int {
	cases := []struct {
		name string
		call []byte
	}{
		{"clears the flag", forever(asm.I32Const(0), asm.GlobalSet(0))},
		{"pins the fuel", forever(asm.I32Const(1<<30), asm.GlobalSet(1))},
		{"reads the flag", forever(asm.GlobalGet(0), asm.Drop())},
	}
	for _, tc := range cases {
		h := newHost(t, wasm.EgressOptions{}, nil)
		_, err := h.Load(context.Background(), wasm.Source{Origin: "hand", Module: handModule(t, tc.call, nil)})
		if !errors.Is(err, wasm.ErrRefused) || !strings.Contains(err.Error(), "global") {
			t.Fatalf("%s: Load: %v, want a refusal naming the global", tc.name, err)
		}
	}
	return len(cases)
}

// A start section that never returns is bounded like a call: the plugin is
// marked failed with the reason, and the host goes on.
func hostileStartSectionThatNeverReturns(t testing.TB) int {
	h := newHost(t, wasm.EgressOptions{}, func(c wasm.Config) wasm.Config { return c.WithInitTimeout(200 * time.Millisecond) })
	p, err := h.Load(context.Background(), wasm.Source{Origin: "hand", Module: handModule(t, asm.I32Const(0), spin())})
	if err != nil {
		t.Fatal(err)
	}
	echo := load(t, h, "echo")
	if err := h.Warm(context.Background()); err == nil || !strings.Contains(err.Error(), "start") {
		t.Fatalf("Warm: %v, want the start function's failure", err)
	}
	if r := p.Call(context.Background(), "run", nil, nil); r.OK || r.Error.Code != wasm.CodeUnavailable {
		t.Fatalf("run: %+v", r)
	}
	if r := call(t, echo, "echo", map[string]any{"text": "on"}); !r.OK {
		t.Fatalf("echo: %+v", r)
	}
	return 1
}
