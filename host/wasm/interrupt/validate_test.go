package interrupt_test

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"

	"github.com/agenthost/agenthost/host/wasm/interrupt"
	"github.com/agenthost/agenthost/host/wasm/wasmbin"
	asm "github.com/agenthost/agenthost/host/wasm/wasmtest/wasmasm"
)

var i32 = []asm.ValType{asm.I32}

// base starts a module as a hostile plugin would: it imports sched_yield (so
// it is instrumented, not run in the fallback mode), has a memory and one
// global of its own. The rewrite will give the flag global index 1 and the
// fuel index 2.
func base() (m *asm.Module, void uint32) {
	m = asm.New()
	void = m.Type(nil, nil)
	m.ImportFunc("wasi_snapshot_preview1", "sched_yield", m.Type(nil, i32))
	m.Memory(1, asm.NoMax)
	m.Global(asm.I32, true, asm.I32Const(0))
	return m, void
}

// The would-be indices of the interrupt globals in a module built on base.
const (
	flagIndex = 1
	fuelIndex = 2
)

// hostileModules are invalid modules that the rewrite would have made valid,
// or that could otherwise reach what the rewrite adds. Each is refused with
// ErrInvalid and an error naming what it got wrong.
func hostileModules() []struct {
	name  string
	build func() []byte
	want  string // in the error
	valid bool   // wazero compiles the original: refused by the host's rules only
	heavy bool   // wazero would spend gigabytes on the original: do not ask it
} {
	fn := func(body ...[]byte) func() []byte {
		return func() []byte {
			m, void := base()
			m.ExportFunc("f", m.Func(void, nil, body...))
			return m.Bytes()
		}
	}
	return []struct {
		name  string
		build func() []byte
		want  string
		valid bool
		heavy bool
	}{
		{"global.set of the flag clears it in a loop", fn(asm.Loop(), asm.I32Const(0), asm.GlobalSet(flagIndex), asm.Br(0), asm.End()),
			"global.set 1 names a global the module does not define", false, false},
		{"global.get of the flag", fn(asm.GlobalGet(flagIndex), asm.Drop()), "global.get 1 names a global", false, false},
		{"global.set of the fuel pins it", fn(asm.Loop(), asm.I32Const(1000), asm.GlobalSet(fuelIndex), asm.Br(0), asm.End()),
			"global.set 2 names a global", false, false},
		{"global.get of the fuel", fn(asm.GlobalGet(fuelIndex), asm.Drop()), "global.get 2 names a global", false, false},
		{"global.set far beyond", fn(asm.I32Const(0), asm.GlobalSet(1<<20)), "global.set 1048576", false, false},
		{"call of an undefined function", fn(asm.Call(7)), "call 7 names a function", false, false},
		{"call_indirect of an undefined type", func() []byte {
			m, void := base()
			m.Table(asm.FuncRef, 1, 1)
			m.ExportFunc("f", m.Func(void, nil, asm.I32Const(0), asm.CallIndirect(9, 0)))
			return m.Bytes()
		}, "call_indirect 9 names a type", false, false},
		{"call_indirect without a table", fn(asm.I32Const(0), asm.CallIndirect(0, 0)), "call_indirect 0 names a table", false, false},
		{"local.get beyond the locals", func() []byte {
			m, _ := base()
			m.ExportFunc("f", m.Func(m.Type(i32, nil), []asm.ValType{asm.I32}, asm.LocalGet(2), asm.Drop()))
			return m.Bytes()
		}, "local.get 2 names a local", false, false},
		{"br beyond the open blocks", fn(asm.Block(), asm.Br(2), asm.End()), "br 2 names a label", false, false},
		{"br_table beyond the open blocks", fn(asm.I32Const(0), asm.BrTable([]uint32{0}, 1)), "br_table 1 names a label", false, false},
		{"block of an undefined type", fn(asm.BlockT(asm.TypeBlock(40)), asm.End()), "block type 40 names a type", false, false},
		{"memory.init of an undefined data segment", func() []byte {
			m, void := base()
			m.PassiveData([]byte("x"))
			m.ExportFunc("f", m.Func(void, nil, asm.I32Const(0), asm.I32Const(0), asm.I32Const(1), asm.MemoryInit(3)))
			return m.Bytes()
		}, "memory.init 3 names a data segment", false, false},
		{"load without a memory", func() []byte {
			m := asm.New()
			m.ImportFunc("wasi_snapshot_preview1", "sched_yield", m.Type(nil, i32))
			m.ExportFunc("f", m.Func(m.Type(nil, nil), nil, asm.I32Const(0), asm.I32Load(0), asm.Drop()))
			return m.Bytes()
		}, "names a memory", false, false},
		{"memory.grow of memory 1", fn(asm.I32Const(1), []byte{0x40, 0x01}, asm.Drop()), "memory.grow 1 names a memory", false, false},
		{"global initialiser reads an undefined global", func() []byte {
			m, _ := base()
			m.Global(asm.I32, false, asm.GlobalGet(flagIndex+1))
			return m.Bytes()
		}, "initialiser of global 1 reads global 2", false, false},
		{"global initialiser reads a defined global", func() []byte {
			m, _ := base()
			m.Global(asm.I32, false, asm.GlobalGet(0))
			return m.Bytes()
		}, "reads global 0, which is not an imported global", false, false},
		{"data offset reads the flag", func() []byte {
			m, _ := base()
			m.Data(asm.GlobalGet(flagIndex), []byte("x"))
			return m.Bytes()
		}, "initialiser of data segment 0 reads global 1", false, false},
		{"element offset reads the fuel", func() []byte {
			m, void := base()
			m.Table(asm.FuncRef, 1, 1)
			m.Elem(asm.GlobalGet(fuelIndex), m.Func(void, nil))
			return m.Bytes()
		}, "initialiser of element segment 0 reads global 2", false, false},
		{"element names an undefined function", func() []byte {
			m, _ := base()
			m.Table(asm.FuncRef, 1, 1)
			m.Elem(asm.I32Const(0), 5)
			return m.Bytes()
		}, "element segment 0 names function 5", false, false},
		{"export of the flag under another name", func() []byte {
			m, _ := base()
			m.Export("flag", asm.KindGlobal, flagIndex)
			return m.Bytes()
		}, `export "flag" names global 1`, false, false},
		{"start function undefined", func() []byte {
			m, _ := base()
			m.Start(3)
			return m.Bytes()
		}, "start function 3", false, false},
		{"a second global section", func() []byte {
			m, _ := base()
			m.Raw(wasmbin.SecGlobal, []byte{1, 0x7F, 1, 0x41, 0, 0x0B})
			return m.Bytes()
		}, "section 6 is repeated", false, false},
		{"sched_yield imported with another type", func() []byte {
			m := asm.New()
			m.ImportFunc("wasi_snapshot_preview1", "sched_yield", m.Type(i32, nil))
			return m.Bytes()
		}, "sched_yield with a type other than () -> i32", true, false},
		{"an imported global counts", func() []byte {
			// One imported and one defined global: the flag gets index 2.
			m := asm.New()
			m.ImportFunc("wasi_snapshot_preview1", "sched_yield", m.Type(nil, i32))
			m.ImportGlobal("env", "g", asm.I32, true)
			m.Global(asm.I32, true, asm.I32Const(0))
			m.ExportFunc("f", m.Func(m.Type(nil, nil), nil, asm.I32Const(0), asm.GlobalSet(2)))
			return m.Bytes()
		}, "global.set 2 names a global the module does not define (it has 2)", false, false},
		{"too many globals", func() []byte {
			m := asm.New()
			m.ImportFunc("wasi_snapshot_preview1", "sched_yield", m.Type(nil, i32))
			m.Raw(wasmbin.SecGlobal, wasmbin.AppendU32(nil, 1<<17))
			return m.Bytes()
		}, "131072 globals", false, false},
		{"too many functions", func() []byte {
			m := asm.New()
			m.ImportFunc("wasi_snapshot_preview1", "sched_yield", m.Type(nil, i32))
			m.Raw(wasmbin.SecFunction, wasmbin.AppendU32(nil, 1<<21))
			return m.Bytes()
		}, "2097152 functions", false, false},
		{"export in the host's namespace", func() []byte {
			m, void := base()
			m.ExportFunc("agenthost.interrupt", m.Func(void, nil))
			return m.Bytes()
		}, `export "agenthost.interrupt" uses the host's reserved prefix`, true, false},
		{"invalid code without sched_yield (not left to the fallback)", func() []byte {
			m := asm.New()
			m.Global(asm.I32, true, asm.I32Const(0))
			m.ExportFunc("f", m.Func(m.Type(nil, nil), nil, asm.I32Const(0), asm.GlobalSet(1)))
			return m.Bytes()
		}, "global.set 1 names a global", false, false},
		{"invalid code beside a start function", func() []byte {
			m, void := base()
			m.Start(m.Func(void, nil))
			m.ExportFunc("f", m.Func(void, nil, asm.I32Const(0), asm.GlobalSet(flagIndex)))
			return m.Bytes()
		}, "global.set 1 names a global", false, false},
		{"invalid code after a function the rewriter does not decode", func() []byte {
			m, void := base()
			m.Func(void, nil, []byte{0xFD, 0x0C}, make([]byte, 16), asm.Drop()) // v128.const
			m.ExportFunc("f", m.Func(void, nil, asm.I32Const(0), asm.GlobalSet(fuelIndex)))
			return m.Bytes()
		}, "function 2: global.set 2 names a global", false, false},
		{"four billion locals", func() []byte {
			m := asm.New()
			m.RawFunc(m.Type(nil, nil), append(append([]byte{1}, wasmbin.AppendU32(nil, 1<<32-1)...), byte(asm.I32), 0x0B))
			return m.Bytes()
		}, "4294967295 locals (at most 50000", true, true},
		{"millions of locals in all", func() []byte {
			m := asm.New()
			void := m.Type(nil, nil)
			for i := 0; i < 100; i++ {
				m.RawFunc(void, append(append([]byte{1}, wasmbin.AppendU32(nil, 50000)...), byte(asm.I32), 0x0B))
			}
			return m.Bytes()
		}, "locals in all (at most 4194304", true, true},
	}
}

func TestInstrumentRefusesInvalidModules(t *testing.T) {
	ctx := context.Background()
	rt := wazero.NewRuntime(ctx)
	defer rt.Close(ctx)
	for _, tc := range hostileModules() {
		t.Run(tc.name, func(t *testing.T) {
			mod := tc.build()
			// The module is what the case claims: wazero refuses it as it
			// is, and only the rewrite could have made it valid.
			if !tc.heavy {
				if _, err := rt.CompileModule(ctx, mod); (err == nil) != tc.valid {
					t.Fatalf("wazero compiling the original: %v (want valid=%v)", err, tc.valid)
				}
			}
			out, err := interrupt.Instrument(mod, interrupt.Options{})
			if !errors.Is(err, interrupt.ErrInvalid) || errors.Is(err, interrupt.ErrUnsupported) {
				t.Fatalf("Instrument = %v, want ErrInvalid (and not ErrUnsupported, which means run it in the fallback mode)", err)
			}
			if out != nil {
				t.Fatal("Instrument returned a module with its error")
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %q does not say %q", err, tc.want)
			}
		})
	}
}

// TestInstrumentAcceptsValidModules guards against refusing what is valid:
// modules using each index space legitimately are rewritten, still compile
// and compute what they computed before.
func TestInstrumentAcceptsValidModules(t *testing.T) {
	ctx := context.Background()
	plain := validModule()
	out, err := interrupt.Instrument(plain, interrupt.Options{})
	if err != nil {
		t.Fatalf("Instrument: %v", err)
	}
	results := func(module []byte) []uint64 {
		mod := runWASI(t, module)
		if _, err := mod.ExportedFunction("init").Call(ctx); err != nil {
			t.Fatalf("init: %v", err)
		}
		var got []uint64
		for _, c := range []struct {
			fn  string
			arg uint64
		}{{"sum", 10}, {"indirect", 4}, {"load", 16}, {"load", 64}} {
			r, err := mod.ExportedFunction(c.fn).Call(ctx, c.arg)
			if err != nil {
				t.Fatalf("%s(%d): %v", c.fn, c.arg, err)
			}
			got = append(got, r[0])
		}
		return got
	}
	want, got := results(plain), results(out)
	if want[0] != 60 || want[1] != 15 || want[2] != 2 || want[3] != 10 {
		t.Fatalf("the plain module computes %v, want [60 15 2 10]", want)
	}
	for i := range want {
		if want[i] != got[i] {
			t.Fatalf("instrumented module computes %v, plain %v", got, want)
		}
	}
}

// TestTriggerStopsAssembledSpin: a hand-written endless loop that never
// calls anything is stopped by Trigger.
func TestTriggerStopsAssembledSpin(t *testing.T) {
	ctx := context.Background()
	m, void := base()
	m.ExportFunc("spin", m.Func(void, nil, asm.Loop(), asm.Br(0), asm.End()))
	out, err := interrupt.Instrument(m.Bytes(), interrupt.Options{})
	if err != nil {
		t.Fatal(err)
	}
	mod := runWASI(t, out)
	done := make(chan error, 1)
	go func() {
		_, err := mod.ExportedFunction("spin").Call(ctx)
		done <- err
	}()
	time.Sleep(20 * time.Millisecond)
	if err := interrupt.Trigger(mod, ""); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err == nil || !interrupt.Triggered(mod, "") {
			t.Fatalf("spin ended with %v, flag %v", err, interrupt.Triggered(mod, ""))
		}
	case <-time.After(10 * time.Second):
		t.Fatal("spin still running 10s after Trigger")
	}
}

// TestInstrumentLeavesStartFunctionsToWazero: a start function runs inside
// instantiation, before the host could set the flag, so a module with one is
// left to wazero's close-on-context-done mode, which stops it.
func TestInstrumentLeavesStartFunctionsToWazero(t *testing.T) {
	m, void := base()
	m.Start(m.Func(void, nil, asm.Loop(), asm.Br(0), asm.End()))
	mod := m.Bytes()
	if _, err := interrupt.Instrument(mod, interrupt.Options{}); !errors.Is(err, interrupt.ErrUnsupported) {
		t.Fatalf("Instrument = %v, want ErrUnsupported", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	rt := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfig().WithCloseOnContextDone(true))
	defer rt.Close(context.Background())
	wasi_snapshot_preview1.MustInstantiate(ctx, rt)
	done := make(chan error, 1)
	go func() {
		_, err := rt.InstantiateWithConfig(ctx, mod, wazero.NewModuleConfig().WithName(""))
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil {
			t.Fatal("an endless start function returned")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("wazero's close-on-context-done mode did not stop the start function 10s after its deadline")
	}
}

// validModule uses every index space legitimately: imports, a table with an
// element segment, call_indirect, a passive data segment with memory.init
// and data.drop, a block of a type index, br_table, locals, a global.
func validModule() []byte {
	m := asm.New()
	void := m.Type(nil, nil)
	unary := m.Type(i32, i32)
	yield := m.ImportFunc("wasi_snapshot_preview1", "sched_yield", m.Type(nil, i32))
	m.Memory(1, asm.NoMax)
	m.Table(asm.FuncRef, 2, asm.NoMax)
	g := m.Global(asm.I32, true, asm.I32Const(5))
	// sum(n) = n + ... + 1 + g, with a loop, a block of a type index, br_table.
	sum := m.Func(unary, []asm.ValType{asm.I32},
		asm.GlobalGet(g), asm.LocalSet(1),
		asm.Block(), asm.Loop(),
		asm.LocalGet(0), asm.Ops(asm.OpI32Eqz), asm.BrIf(1),
		asm.LocalGet(1), asm.LocalGet(0), asm.Ops(asm.OpI32Add), asm.LocalSet(1),
		asm.LocalGet(0), asm.I32Const(1), asm.Ops(asm.OpI32Sub), asm.LocalSet(0),
		asm.I32Const(0), asm.BrTable([]uint32{0}, 1),
		asm.End(), asm.End(),
		asm.LocalGet(1), asm.BlockT(asm.TypeBlock(unary)), asm.End())
	indirect := m.Func(unary, nil, asm.LocalGet(0), asm.I32Const(1), asm.CallIndirect(unary, 0))
	seg := m.PassiveData([]byte{9, 0, 0, 0})
	initMem := m.Func(void, nil, asm.I32Const(64), asm.I32Const(0), asm.I32Const(4), asm.MemoryInit(seg), asm.DataDrop(seg),
		asm.Call(yield), asm.Drop())
	load := m.Func(unary, nil, asm.LocalGet(0), asm.I32Load(0), asm.MemorySize(), asm.Ops(asm.OpI32Add))
	m.Elem(asm.I32Const(1), sum)
	m.Data(asm.I32Const(16), []byte{1, 0, 0, 0})
	m.ExportFunc("init", initMem)
	m.ExportFunc("sum", sum)
	m.ExportFunc("indirect", indirect)
	m.ExportFunc("load", load)
	m.Export("g", asm.KindGlobal, g)
	m.Export("memory", asm.KindMemory, 0)
	m.Export("table", asm.KindTable, 0)
	return m.Bytes()
}

// TestInstrumentCountsImports: imported functions, tables, memories and
// globals take the first indices of their spaces; code using them is valid.
func TestInstrumentCountsImports(t *testing.T) {
	ctx := context.Background()
	m := asm.New()
	void := m.Type(nil, nil)
	m.ImportFunc("wasi_snapshot_preview1", "sched_yield", m.Type(nil, i32))
	other := m.ImportFunc("env", "f", void)
	m.Import("env", "table", asm.KindTable, []byte{byte(asm.FuncRef), 0x00, 0x01})
	m.Import("env", "memory", asm.KindMemory, []byte{0x00, 0x01})
	g := m.ImportGlobal("env", "g", asm.I32, true)
	own := m.Global(asm.I32, true, asm.GlobalGet(g))
	m.ExportFunc("f", m.Func(void, nil,
		asm.Call(other),
		asm.I32Const(0), asm.I32Load(0), asm.GlobalSet(g),
		asm.GlobalGet(own), asm.GlobalSet(own),
		asm.I32Const(0), asm.CallIndirect(void, 0)))
	m.Data(asm.GlobalGet(g), []byte("x"))
	m.Elem(asm.GlobalGet(g), other)
	plain := m.Bytes()
	out, err := interrupt.Instrument(plain, interrupt.Options{})
	if err != nil {
		t.Fatalf("Instrument: %v", err)
	}
	rt := wazero.NewRuntime(ctx)
	defer rt.Close(ctx)
	for name, mod := range map[string][]byte{"original": plain, "instrumented": out} {
		if _, err := rt.CompileModule(ctx, mod); err != nil {
			t.Fatalf("compiling the %s module: %v", name, err)
		}
	}
	// The flag follows the imported and the defined global.
	if got := exportedGlobal(t, out, interrupt.DefaultGlobalExport); got != 2 {
		t.Fatalf("flag is global %d, want 2", got)
	}
}

// misalignedModule hides `global.set 2` (the would-be fuel) from a decoder
// that reads block types as wazero did not: wazero 1.12 reads a block type
// 0x63 (ref null) with a heap type after it, here the type index 3584,
// encoded 0x80 0x1C. Read as a plain s33 block type, 0x63 is followed by
// the instructions 0x80 and 0x1C (select t*), whose vector of 32 types
// swallows the global.set. In a loop the guest resets the fuel just before
// every check: it never yields, never sees the flag, and would hold up the
// Go collector.
func misalignedModule() []byte {
	m := asm.New()
	// Types: 0 () -> i32 for sched_yield, 1 () -> (), and enough copies for
	// type index 3584 to exist.
	types := wasmbin.AppendU32(nil, 3585)
	types = append(types, 0x60, 0, 1, byte(asm.I32))
	for i := 1; i < 3585; i++ {
		types = append(types, 0x60, 0, 0)
	}
	m.Raw(wasmbin.SecType, types)
	m.ImportFunc("wasi_snapshot_preview1", "sched_yield", 0)
	m.Memory(1, asm.NoMax)
	m.Global(asm.I32, true, asm.I32Const(0)) // the fuel will be global 2
	// The 32 bytes: local.get's index, nops, global.set 2 and br 1 (to the
	// loop, whose header the check is at: the fuel is reset just before it).
	window := bytes.Join([][]byte{{0x00}, bytes.Repeat([]byte{asm.OpNop}, 27), asm.GlobalSet(2), asm.Br(1)}, nil)
	m.ExportFunc("pin", m.Func(1, []asm.ValType{asm.I32},
		asm.I32Const(1000), asm.LocalSet(0),
		asm.Loop(),
		[]byte{0x02, 0x63, 0x80, 0x1C}, // block (result (ref null 3584))
		[]byte{0x20},                   // local.get, whose index 0 opens the window
		window,
		asm.End(), asm.Drop(), asm.Br(0),
		asm.End()))
	return m.Bytes()
}

// TestInstrumentDecodesLikeWazero: where wazero reads an instruction with
// more bytes than the rewriter would, the rewriter must not accept it, or
// code it took for immediates could name the interrupt globals.
func TestInstrumentDecodesLikeWazero(t *testing.T) {
	ctx := context.Background()
	mod := misalignedModule()
	rt := wazero.NewRuntime(ctx)
	defer rt.Close(ctx)
	if _, err := rt.CompileModule(ctx, mod); err == nil || !strings.Contains(err.Error(), "global") {
		t.Fatalf("wazero compiling the original = %v, want an error about the undefined global", err)
	}
	// Left to the fallback, the module meets wazero's own validation,
	// which refuses it (above).
	out, err := interrupt.Instrument(mod, interrupt.Options{})
	if err == nil {
		_, cerr := rt.CompileModule(ctx, out)
		t.Fatalf("Instrument accepted a module whose hidden global.set pins the fuel (wazero compiles the rewrite: %v)", cerr == nil)
	}
	if !errors.Is(err, interrupt.ErrUnsupported) && !errors.Is(err, interrupt.ErrInvalid) {
		t.Fatalf("Instrument = %v", err)
	}
	for _, tc := range []struct {
		name string
		code []byte
	}{
		{"typed select of a reference type", []byte{0x1C, 0x01, 0x63, 0x70}},
		{"typed select of two types", []byte{0x1C, 0x02, 0x7F, 0x7F}},
		{"ref.null of a concrete type", []byte{0xD0, 0x00}},
		{"block of a non-nullable reference", []byte{0x02, 0x64, 0x70, 0x0B}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := interrupt.Instrument(codeModule(append(tc.code, 0x0B)), interrupt.Options{}); err == nil {
				t.Fatal("Instrument accepted an instruction wazero reads with other immediates")
			}
		})
	}
}

// TestEntryCheckLeftOutOnlyBeforeALoop: a function's entry check is left
// out only when its opening runs straight into a loop (whose check then
// runs at every entry), and every such function is still stopped by
// Trigger; an opening that can call, branch or trap before its loop keeps
// the entry check, and endless recursion through each shape stops.
func TestEntryCheckLeftOutOnlyBeforeALoop(t *testing.T) {
	ctx := context.Background()
	// Function 1 (0 is sched_yield) recurses for ever, the recursion
	// placed as each case says.
	const self = 1
	cases := []struct {
		name   string
		body   [][]byte
		checks int // in the rewritten body
	}{
		{"Go's shape: blocks, locals, then the dispatch loop", [][]byte{
			asm.GlobalGet(0), asm.LocalSet(0), asm.Block(), asm.Loop(), asm.Block(), asm.LocalGet(0),
			asm.BrTable([]uint32{0}, 0), asm.End(), asm.Call(self), asm.End(), asm.End(),
		}, 1},
		{"loop first", [][]byte{asm.Loop(), asm.Call(self), asm.End()}, 1},
		{"call before the loop", [][]byte{asm.Call(self), asm.Loop(), asm.End()}, 2},
		{"branch over the loop", [][]byte{asm.Block(), asm.Br(0), asm.Loop(), asm.End(), asm.End(), asm.Call(self)}, 2},
		{"conditional branch before the loop", [][]byte{asm.Block(), asm.I32Const(1), asm.BrIf(0), asm.Loop(), asm.End(), asm.End(), asm.Call(self)}, 2},
		{"return before the loop", [][]byte{asm.Call(self), asm.Return(), asm.Loop(), asm.End()}, 2},
		{"if before the loop", [][]byte{asm.I32Const(1), asm.If(), asm.Call(self), asm.End(), asm.Loop(), asm.End()}, 2},
		{"a load (may trap) before the loop", [][]byte{asm.I32Const(0), asm.I32Load(0), asm.Drop(), asm.Call(self), asm.Loop(), asm.End()}, 2},
		{"no loop", [][]byte{asm.Call(self)}, 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m, void := base()
			m.ExportFunc("f", m.Func(void, []asm.ValType{asm.I32}, tc.body...))
			out, err := interrupt.Instrument(m.Bytes(), interrupt.Options{})
			if err != nil {
				t.Fatal(err)
			}
			check := interrupt.CheckTail(flagIndex, fuelIndex, 0)
			if n := bytes.Count(bodies(t, out)[0], check); n != tc.checks {
				t.Fatalf("%d checks in the rewritten body, want %d", n, tc.checks)
			}
			mod := runWASI(t, out)
			if err := interrupt.Trigger(mod, ""); err != nil {
				t.Fatal(err)
			}
			// Flag set before the call: the first check reached traps, long
			// before the recursion could exhaust wazero's call stack.
			_, err = mod.ExportedFunction("f").Call(ctx)
			if err == nil || !strings.Contains(err.Error(), "unreachable") {
				t.Fatalf("f ended with %v, want the check's trap (unreachable)", err)
			}
		})
	}
}
