package wasmtest

import (
	"encoding/binary"
	"encoding/json"
	"testing"

	"github.com/agenthost/agenthost/host/wasm/manifest"
	asm "github.com/agenthost/agenthost/host/wasm/wasmtest/wasmasm"
)

// HandModule assembles a hostile guest by hand, what no Go compiler would
// emit, named name. It imports WASI's sched_yield (so a host instruments
// it), has one page of memory, exports `call` (no parameters, an i32
// result) with the given body and a `describe` that answers as the PDK
// does, and carries a manifest declaring one read-only tool "run" (its tool
// name is name+"Run" when name is not "hand", so several can be loaded
// beside each other). start, when set, is the body of the module's start
// function.
func HandModule(tb testing.TB, name string, call, start []byte) []byte {
	tb.Helper()
	return HandModuleWith(tb, name, func(m *asm.Module) ([]byte, []byte) {
		m.Memory(1, 1)
		return call, start
	})
}

// HandModuleWith is HandModule for guests that need more memory, a table or
// other imports: build adds them (sched_yield is already function 0; its
// imports come next) and a memory of at least one page, and returns the
// bodies of `call` and of the start function (nil for none). The first
// kilobyte of memory holds describe's answer.
func HandModuleWith(tb testing.TB, name string, build func(m *asm.Module) (call, start []byte)) []byte {
	tb.Helper()
	return handModule(tb, name, true, build)
}

// HandModuleWithoutYield is HandModuleWith without the sched_yield import:
// a guest that declines the host call its checks would yield through (its
// imports start at function 0).
func HandModuleWithoutYield(tb testing.TB, name string, build func(m *asm.Module) (call, start []byte)) []byte {
	tb.Helper()
	return handModule(tb, name, false, build)
}

func handModule(tb testing.TB, name string, yield bool, build func(m *asm.Module) (call, start []byte)) []byte {
	tb.Helper()
	tool := "run"
	if name != "hand" {
		tool = name + "Run"
	}
	man := manifest.Manifest{ManifestVersion: manifest.Version, Name: name, Version: "1.0.0", Kind: manifest.KindTool,
		Description: "hand-written hostile guest",
		Tools: []manifest.Tool{{Name: tool, Description: "runs", ReadOnly: true,
			InputSchema: json.RawMessage(`{"type":"object","properties":{},"additionalProperties":false}`)}}}
	tools, err := json.Marshal(man.Tools)
	if err != nil {
		tb.Fatal(err)
	}
	m := asm.New()
	void := m.Type(nil, nil)
	ret := m.Type(nil, []asm.ValType{asm.I32})
	if yield {
		m.ImportFunc("wasi_snapshot_preview1", "sched_yield", ret)
	}
	call, start := build(m)
	i32 := asm.I32
	fdWrite := m.ImportFunc("wasi_snapshot_preview1", "fd_write", m.Type([]asm.ValType{i32, i32, i32, i32}, []asm.ValType{i32}))
	// describe writes one result frame (docs/plugin-abi.md) to stdout: an
	// iovec at 0 names the frame at 16.
	frame := binary.LittleEndian.AppendUint64([]byte("\x00AGHOUT1"), uint64(len(tools)))
	frame = append(frame, tools...)
	data := binary.LittleEndian.AppendUint32(nil, 16)
	data = binary.LittleEndian.AppendUint32(data, uint32(len(frame)))
	data = append(data, make([]byte, 8)...)
	m.Data(asm.I32Const(0), append(data, frame...))
	m.ExportFunc("describe", m.Func(ret, nil, asm.I32Const(1), asm.I32Const(0), asm.I32Const(1), asm.I32Const(8),
		asm.Call(fdWrite), asm.Drop(), asm.I32Const(0)))
	m.ExportFunc("call", m.Func(ret, nil, call))
	if start != nil {
		m.Start(m.Func(void, nil, start))
	}
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
