package wasmasm_test

import (
	"bytes"
	"context"
	"testing"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"

	"github.com/agenthost/agenthost/host/wasm/wasmbin"
	asm "github.com/agenthost/agenthost/host/wasm/wasmtest/wasmasm"
)

// TestAssembledModuleRuns builds a module with every kind of section the
// builder writes and runs it on wazero: the start function, a loop, a call
// through a table, a data segment, memory.init from a passive one.
func TestAssembledModuleRuns(t *testing.T) {
	ctx := context.Background()
	m := asm.New()
	i32 := []asm.ValType{asm.I32}
	void := m.Type(nil, nil)
	unary := m.Type(i32, i32)
	yield := m.ImportFunc("wasi_snapshot_preview1", "sched_yield", m.Type(nil, i32))
	m.Memory(1, asm.NoMax)
	m.Table(asm.FuncRef, 1, 1)
	counter := m.Global(asm.I32, true, asm.I32Const(0))
	base := m.Global(asm.I32, false, asm.I32Const(100))
	// sum(n) = 1 + ... + n, by a loop.
	sum := m.Func(unary, []asm.ValType{asm.I32},
		asm.Block(), asm.Loop(),
		asm.LocalGet(0), asm.Ops(asm.OpI32Eqz), asm.BrIf(1),
		asm.LocalGet(1), asm.LocalGet(0), asm.Ops(asm.OpI32Add), asm.LocalSet(1),
		asm.LocalGet(0), asm.I32Const(1), asm.Ops(asm.OpI32Sub), asm.LocalSet(0),
		asm.Br(0),
		asm.End(), asm.End(),
		asm.LocalGet(1))
	// viaTable(n) = sum(n) called through table slot 0, plus global base.
	viaTable := m.Func(unary, nil, asm.LocalGet(0), asm.I32Const(0), asm.CallIndirect(unary, 0), asm.GlobalGet(base), asm.Ops(asm.OpI32Add))
	// The start function counts its runs and yields once.
	start := m.Func(void, nil, asm.GlobalGet(counter), asm.I32Const(1), asm.Ops(asm.OpI32Add), asm.GlobalSet(counter), asm.Call(yield), asm.Drop())
	// load(addr) reads an i32 of memory.
	load := m.Func(unary, nil, asm.LocalGet(0), asm.I32Load(0))
	passive := m.PassiveData([]byte{0x2A, 0, 0, 0})
	// initAt(addr) copies the passive segment to addr.
	initAt := m.Func(m.Type(i32, nil), nil, asm.LocalGet(0), asm.I32Const(0), asm.I32Const(4), asm.MemoryInit(passive))
	m.Elem(asm.I32Const(0), sum)
	m.Data(asm.I32Const(16), []byte{7, 0, 0, 0})
	m.Start(start)
	m.ExportFunc("sum", sum)
	m.ExportFunc("viaTable", viaTable)
	m.ExportFunc("load", load)
	m.ExportFunc("initAt", initAt)
	m.Export("counter", asm.KindGlobal, counter)
	m.Custom("agenthost.manifest", []byte(`{"name":"asm"}`))
	module := m.Bytes()

	if p, ok, err := wasmbin.CustomSection(module, "agenthost.manifest"); err != nil || !ok || !bytes.Equal(p, []byte(`{"name":"asm"}`)) {
		t.Fatalf("custom section = %q, %v, %v", p, ok, err)
	}
	rt := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfigCompiler())
	defer rt.Close(ctx)
	wasi_snapshot_preview1.MustInstantiate(ctx, rt)
	mod, err := rt.InstantiateWithConfig(ctx, module, wazero.NewModuleConfig().WithName("asm"))
	if err != nil {
		t.Fatalf("instantiate: %v", err)
	}
	if got := mod.ExportedGlobal("counter").Get(); got != 1 {
		t.Fatalf("start function ran %d times, want 1", got)
	}
	call := func(name string, args ...uint64) uint64 {
		t.Helper()
		r, err := mod.ExportedFunction(name).Call(ctx, args...)
		if err != nil {
			t.Fatalf("%s%v: %v", name, args, err)
		}
		if len(r) == 0 {
			return 0
		}
		return r[0]
	}
	for _, tc := range []struct {
		name string
		args []uint64
		want uint64
	}{
		{"sum", []uint64{0}, 0},
		{"sum", []uint64{10}, 55},
		{"viaTable", []uint64{4}, 110},
		{"load", []uint64{16}, 7},
	} {
		if got := call(tc.name, tc.args...); got != tc.want {
			t.Errorf("%s%v = %d, want %d", tc.name, tc.args, got, tc.want)
		}
	}
	call("initAt", 32)
	if got := call("load", 32); got != 42 {
		t.Errorf("after memory.init, load(32) = %d, want 42", got)
	}
}

// TestInstructionEncodings pins the helpers' bytes against the binary format.
func TestInstructionEncodings(t *testing.T) {
	for _, tc := range []struct {
		name      string
		got, want []byte
	}{
		{"i32.const -1", asm.I32Const(-1), []byte{0x41, 0x7F}},
		{"i32.const 64", asm.I32Const(64), []byte{0x41, 0xC0, 0x00}},
		{"i64.const 1<<40", asm.I64Const(1 << 40), []byte{0x42, 0x80, 0x80, 0x80, 0x80, 0x80, 0x20}},
		{"global.set 300", asm.GlobalSet(300), []byte{0x24, 0xAC, 0x02}},
		{"loop", asm.Loop(), []byte{0x03, 0x40}},
		{"block (result i32)", asm.BlockT(asm.ValBlock(asm.I32)), []byte{0x02, 0x7F}},
		{"if (type 3)", asm.IfT(asm.TypeBlock(3)), []byte{0x04, 0x03}},
		{"br_table 0 1 default 2", asm.BrTable([]uint32{0, 1}, 2), []byte{0x0E, 2, 0, 1, 2}},
		{"call_indirect 1 0", asm.CallIndirect(1, 0), []byte{0x11, 1, 0}},
		{"i32.load offset=8", asm.I32Load(8), []byte{0x28, 2, 8}},
		{"memory.init 3", asm.MemoryInit(3), []byte{0xFC, 8, 3, 0}},
		{"f32.const 1", asm.F32Const(1), []byte{0x43, 0, 0, 0x80, 0x3F}},
	} {
		if !bytes.Equal(tc.got, tc.want) {
			t.Errorf("%s = % x, want % x", tc.name, tc.got, tc.want)
		}
	}
}

// TestHostileModuleIsWrittenAsAsked checks the builder leaves invalid
// modules invalid: wazero must refuse a global.set of an undefined global.
func TestHostileModuleIsWrittenAsAsked(t *testing.T) {
	ctx := context.Background()
	m := asm.New()
	m.Global(asm.I32, true, asm.I32Const(0))
	m.ExportFunc("f", m.Func(m.Type(nil, nil), nil, asm.I32Const(1), asm.GlobalSet(1)))
	rt := wazero.NewRuntime(ctx)
	defer rt.Close(ctx)
	if _, err := rt.CompileModule(ctx, m.Bytes()); err == nil {
		t.Fatal("wazero compiled a module that sets an undefined global")
	}
}
