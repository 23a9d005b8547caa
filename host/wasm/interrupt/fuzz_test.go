package interrupt_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"

	"github.com/agenthost/agenthost/host/wasm/interrupt"
	"github.com/agenthost/agenthost/host/wasm/wasmbin"
	asm "github.com/agenthost/agenthost/host/wasm/wasmtest/wasmasm"
)

const (
	// fuzzDeadline is when a fuzzed call's flag is set, fuzzGrace how long
	// after that the call may take to return: generous, so that a loaded
	// machine cannot fail the test, yet far below "never".
	fuzzDeadline = 10 * time.Millisecond
	fuzzGrace    = 2 * time.Second
	// fuzzRunMax bounds the inputs that are compiled and run; larger ones
	// get the structural checks only.
	fuzzRunMax = 64 << 10
)

// FuzzInstrument checks what the rewrite promises for any input:
//   - Instrument returns an error or a module, never panics;
//   - the instrumented code is the original code with the check inserted,
//     so only the check reads or writes the flag and the fuel;
//   - the rewrite never turns a module wazero refuses into one it compiles
//     (the escape of issue #10: code naming the indices the interrupt
//     globals get), and an index its code names but does not define is
//     never a false alarm: wazero refuses such a module too;
//   - every exported function of an instrumented module that wazero
//     compiles returns within fuzzGrace of Trigger;
//   - the rewriter reads instructions as wazero does (checkBoundaries).
//
// The Go-built guest is not a seed: mutating and minimising 2.4 MB inputs
// would slow the fuzzer a hundredfold; TestInstrumentGuestOnlyAddsChecks
// checks it.
func FuzzInstrument(f *testing.F) {
	f.Add([]byte{0, 'a', 's', 'm', 1, 0, 0, 0})
	for _, tc := range hostileModules() {
		f.Add(tc.build())
	}
	f.Add(validModule())
	f.Add(noYieldModule()) // the rewrite adds sched_yield and renumbers
	// Instructions wazero reads with more bytes than a plain decoder would.
	f.Add(misalignedModule())
	f.Add([]byte{0x02, 0x63, 0x70, 0xD0, 0x70, 0x0B, 0x1A, 0x0B}) // block (result (ref null func)), as code
	for _, m := range generatedModules() {
		f.Add(m)
	}
	// Seeds for the second reading of an input: function code.
	for _, c := range codeSeeds {
		f.Add(c.code)
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		checkInstrument(t, in)
		// Read as a module, a random input rarely gets past the first
		// section; read as the code of a function in a well-formed
		// module, it reaches the instruction checks.
		if len(in) <= 4096 {
			checkInstrument(t, codeModule(in))
		}
	})
}

// codeSeeds are function code for codeModule: valid code the rewrite must
// keep working and code naming the flag or the fuel.
var codeSeeds = []struct {
	code  []byte
	valid bool
}{
	{bytes.Join([][]byte{asm.Loop(), asm.Br(0), asm.End(), asm.End()}, nil), true},
	{bytes.Join([][]byte{asm.Block(), asm.Loop(), asm.LocalGet(0), asm.BrTable([]uint32{0, 1}, 0), asm.End(), asm.End(), asm.End()}, nil), true},
	{bytes.Join([][]byte{asm.Loop(), asm.LocalGet(0), asm.I32Const(0), asm.CallIndirect(1, 0), asm.LocalSet(1), asm.LocalGet(1), asm.Call(1), asm.Br(0), asm.End(), asm.End()}, nil), true},
	{bytes.Join([][]byte{asm.I32Const(0), asm.I32Const(0), asm.I32Const(1), asm.MemoryInit(0), asm.I32Const(1), asm.MemoryGrow(), asm.Drop(), asm.End()}, nil), true},
	// Straight-line bulk work: fills, copies, inits and table fills in a row.
	{bytes.Join([][]byte{asm.Repeat(8, asm.I32Const(0), asm.I32Const(7), asm.I32Const(65536), asm.MemoryFill(),
		asm.I32Const(1), asm.I32Const(0), asm.I32Const(65535), asm.MemoryCopy(),
		asm.I32Const(0), asm.I32Const(0), asm.I32Const(4), asm.MemoryInit(0),
		asm.I32Const(0), asm.RefNull(asm.FuncRef), asm.I32Const(1), asm.TableFill(0),
		asm.RefNull(asm.FuncRef), asm.I32Const(0), asm.TableGrow(0), asm.Drop()), asm.End()}, nil), true},
	{bytes.Join([][]byte{asm.Loop(), asm.I32Const(0), asm.GlobalSet(1), asm.Br(0), asm.End(), asm.End()}, nil), false},
	{bytes.Join([][]byte{asm.GlobalGet(0), asm.I32Const(1000), asm.GlobalSet(2), asm.Drop(), asm.End()}, nil), false},
}

// TestCodeSeeds keeps FuzzInstrument's harness honest: its valid code seeds
// compile before and after the rewrite, the others are refused.
func TestCodeSeeds(t *testing.T) {
	for i, c := range codeSeeds {
		m := codeModule(c.code)
		out, err := interrupt.Instrument(m, interrupt.Options{})
		switch {
		case c.valid && (err != nil || !compiles(m) || !compiles(out)):
			t.Errorf("seed %d: Instrument %v; compiles before %v, after %v", i, err, compiles(m), err == nil && compiles(out))
		case !c.valid && !errors.Is(err, interrupt.ErrInvalid):
			t.Errorf("seed %d: Instrument = %v, want ErrInvalid", i, err)
		}
	}
}

// codeModule puts code (instructions up to the function's final end) into a
// module that defines one of each kind of index: the function is function 1
// (sched_yield is 0) of type 2 (one i32 parameter, no results) with one i32
// local, type 1 is i32 -> i32, the module has a table, a memory, a passive data segment and
// global 0; the rewrite will make the flag global 1 and the fuel global 2.
func codeModule(code []byte) []byte {
	m := asm.New()
	m.ImportFunc("wasi_snapshot_preview1", "sched_yield", m.Type(nil, i32))
	m.Table(asm.FuncRef, 1, 1)
	m.Memory(1, 4)
	m.Global(asm.I32, true, asm.I32Const(0))
	m.PassiveData([]byte("data"))
	m.Type(i32, i32)
	f := m.RawFunc(m.Type(i32, nil), append([]byte{1, 1, byte(asm.I32)}, code...))
	m.Elem(asm.I32Const(0), f)
	m.ExportFunc("f", f)
	return m.Bytes()
}

// checkInstrument checks the promises of Instrument (see FuzzInstrument) for
// one input.
func checkInstrument(t *testing.T, in []byte) {
	t.Helper()
	out, err := interrupt.Instrument(in, interrupt.Options{})
	run := len(in) <= fuzzRunMax
	if run {
		checkBoundaries(t, in)
	}
	if err != nil {
		if out != nil {
			t.Fatalf("Instrument returned a module with its error %v", err)
		}
		// Asking wazero about a refused module is only safe once Instrument
		// checked all its counts, i.e. when the code walk refused it, and
		// when no body declares billions of locals: wazero allocates for
		// every declared entry before it validates anything.
		if run && errors.Is(err, interrupt.ErrInvalid) && strings.Contains(err.Error(), " names a ") && fewLocals(in) && compiles(in) {
			t.Fatalf("refused as invalid a module wazero compiles: %v", err)
		}
		return
	}
	if _, err := wasmbin.Parse(out); err != nil {
		t.Fatalf("Instrument produced an unparsable module: %v", err)
	}
	checkOnlyChecksAdded(t, in, out)
	if !run {
		return
	}
	// Custom sections hold no code, and the rewrite writes their headers
	// anew (canonical lengths) and moves the sections it appends behind
	// them, which can change wazero's verdict on a malformed one (it
	// refuses an empty custom section at the very end of a module): the
	// verdicts compared are those on the modules without them.
	switch inOK, outOK := compiles(withoutCustom(in)), compiles(withoutCustom(out)); {
	case outOK && !inOK:
		t.Fatal("the rewrite turned a module wazero refuses into one it compiles")
	case inOK && !outOK:
		t.Fatal("the rewrite broke a module wazero compiles")
	case !outOK:
		return
	}
	runTriggered(t, out)
}

// TestInstrumentGuestOnlyAddsChecks: the rewrite of a real Go module is
// its original code with the checks inserted, and nothing else.
func TestInstrumentGuestOnlyAddsChecks(t *testing.T) {
	out := instrumented(t)
	if _, err := wasmbin.Parse(out); err != nil {
		t.Fatalf("Instrument produced an unparsable module: %v", err)
	}
	checkOnlyChecksAdded(t, guest(t), out)
}

// checkBoundaries compares wazero's verdicts on a module and on the module
// with a nop after every instruction as the rewriter decodes them: a nop is
// valid anywhere between instructions, so the verdicts differ only where
// wazero reads an instruction with other bytes than the rewriter, which is
// where the rewriter could overlook what wazero will run.
func checkBoundaries(t *testing.T, in []byte) {
	t.Helper()
	nopped, err := interrupt.NopAfterEveryInstruction(in)
	if err != nil {
		return // refused, or not decoded: not rewritten
	}
	if a, b := compiles(withoutCustom(in)), compiles(withoutCustom(nopped)); a != b {
		t.Fatalf("wazero compiles the module: %v, with a nop after every instruction as the rewriter reads them: %v", a, b)
	}
}

// withoutCustom returns module without its custom sections.
func withoutCustom(module []byte) []byte {
	secs, err := wasmbin.Parse(module)
	if err != nil {
		return module
	}
	out := secs[:0]
	for _, s := range secs {
		if s.ID != wasmbin.SecCustom {
			out = append(out, s)
		}
	}
	return wasmbin.Encode(out)
}

// fewLocals reports whether every function body of module declares at most
// 2^16 locals.
func fewLocals(module []byte) bool {
	bs, err := codeBodies(module)
	if err != nil {
		return false
	}
	for _, b := range bs {
		r := wasmbin.NewReader(b)
		groups, err := r.U32()
		if err != nil {
			return false
		}
		var n uint64
		for g := uint32(0); g < groups; g++ {
			c, err := r.U32()
			if err != nil {
				return false
			}
			if n += uint64(c); n > 1<<16 {
				return false
			}
			if _, err := r.Byte(); err != nil {
				return false
			}
		}
	}
	return true
}

func newRuntime(ctx context.Context) wazero.Runtime {
	// 64 MiB of memory at most: a fuzzed module may ask for 4 GiB.
	return wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfigCompiler().WithMemoryLimitPages(1024))
}

func compiles(module []byte) bool {
	ctx := context.Background()
	rt := newRuntime(ctx)
	defer rt.Close(ctx)
	_, err := rt.CompileModule(ctx, module)
	return err == nil
}

// checkOnlyChecksAdded takes the check out of every instrumented function
// body and compares what is left with the original body.
func checkOnlyChecksAdded(t *testing.T, in, out []byte) {
	t.Helper()
	flag := exportedGlobal(t, out, interrupt.DefaultGlobalExport)
	if fuel := exportedGlobal(t, out, interrupt.DefaultGlobalExport+".fuel"); fuel != flag+1 {
		t.Fatalf("flag is global %d, fuel %d", flag, fuel)
	}
	imports, err := wasmbin.Imports(in)
	if err != nil {
		t.Fatal(err)
	}
	yield := -1
	funcs := 0
	for _, im := range imports {
		if im.Kind == wasmbin.ImportFunc {
			if im.Module == "wasi_snapshot_preview1" && im.Name == "sched_yield" {
				yield = funcs
			}
			funcs++
		}
	}
	added := yield < 0
	if added {
		yield = funcs // the rewrite adds it after the function imports
	}
	check := interrupt.CheckTail(flag, flag+1, uint32(yield))
	a, b := bodies(t, in), bodies(t, out)
	if len(b) < len(a) {
		t.Fatalf("%d function bodies before, %d after", len(a), len(b))
	}
	orig, err := interrupt.Uninstrument(out, uint32(len(a)), added)
	if err != nil {
		t.Fatalf("taking the rewrite apart: %v", err)
	}
	for i := range a {
		if !bytes.Contains(b[i], check) {
			t.Fatalf("function body %d has no check", i)
		}
		if !bytes.Equal(orig[i], a[i]) {
			t.Fatalf("function body %d without its checks and helpers differs from the original", i)
		}
	}
}

func exportedGlobal(t *testing.T, module []byte, name string) uint32 {
	t.Helper()
	for _, s := range sections(t, module) {
		if s.ID != wasmbin.SecExport {
			continue
		}
		r := wasmbin.NewReader(s.Payload)
		n, _ := r.U32()
		for i := uint32(0); i < n; i++ {
			nm, _ := r.Name()
			kind, _ := r.Byte()
			idx, err := r.U32()
			if err != nil {
				t.Fatal(err)
			}
			if nm == name && kind == asm.KindGlobal {
				return idx
			}
		}
	}
	t.Fatalf("no global export %q", name)
	return 0
}

func sections(t *testing.T, module []byte) []wasmbin.Section {
	t.Helper()
	secs, err := wasmbin.Parse(module)
	if err != nil {
		t.Fatal(err)
	}
	return secs
}

// bodies lists the function bodies of a module's code section.
func bodies(t *testing.T, module []byte) [][]byte {
	t.Helper()
	out, err := codeBodies(module)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func codeBodies(module []byte) ([][]byte, error) {
	secs, err := wasmbin.Parse(module)
	if err != nil {
		return nil, err
	}
	var out [][]byte
	for _, s := range secs {
		if s.ID != wasmbin.SecCode {
			continue
		}
		r := wasmbin.NewReader(s.Payload)
		n, err := r.U32()
		if err != nil {
			return nil, err
		}
		for i := uint32(0); i < n; i++ {
			size, err := r.U32()
			if err != nil {
				return nil, err
			}
			b, err := r.Bytes(int(size))
			if err != nil {
				return nil, err
			}
			out = append(out, b)
		}
	}
	return out, nil
}

// runTriggered calls every exported function of an instrumented module, each
// in a fresh instance, with zero arguments, and sets the flag fuzzDeadline
// into the call: every call must end within fuzzGrace of that.
func runTriggered(t *testing.T, module []byte) {
	ctx := context.Background()
	if hugeTables(module) {
		return // a table of 2^27 entries costs a gigabyte before any code runs
	}
	rt := newRuntime(ctx)
	defer rt.Close(ctx)
	wasi_snapshot_preview1.MustInstantiate(ctx, rt)
	cm, err := rt.CompileModule(ctx, module)
	if err != nil {
		return // a malformed custom section (see checkInstrument)
	}
	for _, def := range cm.ExportedFunctions() {
		mod, err := rt.InstantiateModule(ctx, cm, wazero.NewModuleConfig().WithName("").WithStartFunctions())
		if err != nil {
			return // imports other than WASI, segments out of bounds: not runnable
		}
		fn := mod.ExportedFunction(def.ExportNames()[0])
		done := make(chan error, 1)
		go func() {
			_, err := fn.Call(ctx, make([]uint64, len(def.ParamTypes()))...)
			done <- err
		}()
		var stopped time.Time
		trigger := time.AfterFunc(fuzzDeadline, func() {
			stopped = time.Now()
			if err := interrupt.Trigger(mod, ""); err != nil {
				panic(fmt.Sprintf("Trigger: %v", err))
			}
		})
		select {
		case <-done:
			trigger.Stop()
		case <-time.After(fuzzDeadline + fuzzGrace):
			t.Fatalf("%s still running %v after Trigger", def.ExportNames()[0], time.Since(stopped))
		}
		mod.Close(ctx)
	}
}

// hugeTables reports whether a module declares a table of over 2^16 entries.
func hugeTables(module []byte) bool {
	secs, err := wasmbin.Parse(module)
	if err != nil {
		return true
	}
	for _, s := range secs {
		if s.ID != wasmbin.SecTable {
			continue
		}
		r := wasmbin.NewReader(s.Payload)
		n, _ := r.U32()
		for i := uint32(0); i < n; i++ {
			r.Byte()
			flag, _ := r.Byte()
			min, err := r.U32()
			if err != nil || min > 1<<16 {
				return true
			}
			if flag&1 != 0 {
				r.U32()
			}
		}
	}
	return false
}

// generatedModules are seeds with the control flow the rewrite must handle:
// endless loops, nested loops, br_table, calls in loops, recursion, and
// straight-line code that would run for minutes without a loop or a call
// of its own (bulk instructions, growth, host calls, long runs of ordinary
// instructions).
func generatedModules() [][]byte {
	var out [][]byte
	add := func(build func(m *asm.Module, void, yield uint32)) {
		m := asm.New()
		void := m.Type(nil, nil)
		yield := m.ImportFunc("wasi_snapshot_preview1", "sched_yield", m.Type(nil, i32))
		m.Memory(1, 16)
		build(m, void, yield)
		out = append(out, m.Bytes())
	}
	add(func(m *asm.Module, void, _ uint32) {
		m.ExportFunc("spin", m.Func(void, nil, asm.Loop(), asm.Br(0), asm.End()))
	})
	add(func(m *asm.Module, void, _ uint32) {
		// An endless outer loop around a counted inner one.
		m.ExportFunc("nested", m.Func(void, []asm.ValType{asm.I32},
			asm.Loop(),
			asm.I32Const(10), asm.LocalSet(0),
			asm.Block(), asm.Loop(),
			asm.LocalGet(0), asm.Ops(asm.OpI32Eqz), asm.BrIf(1),
			asm.LocalGet(0), asm.I32Const(1), asm.Ops(asm.OpI32Sub), asm.LocalSet(0),
			asm.Br(0), asm.End(), asm.End(),
			asm.Br(0), asm.End()))
		// A loop that ends by itself.
		m.ExportFunc("countdown", m.Func(m.Type(nil, i32), []asm.ValType{asm.I32},
			asm.I32Const(100000), asm.LocalSet(0),
			asm.Loop(), asm.LocalGet(0), asm.I32Const(1), asm.Ops(asm.OpI32Sub), asm.LocalTee(0), asm.BrIf(0), asm.End(),
			asm.LocalGet(0)))
	})
	add(func(m *asm.Module, void, _ uint32) {
		// br_table whose every target is the loop.
		m.ExportFunc("table", m.Func(m.Type(i32, nil), nil,
			asm.Block(), asm.Loop(), asm.LocalGet(0), asm.BrTable([]uint32{0, 0, 1}, 0), asm.End(), asm.End()))
	})
	add(func(m *asm.Module, void, yield uint32) {
		// Calls in an endless loop, to the host and to a helper.
		helper := m.Func(void, nil, asm.I32Const(0), asm.I32Const(1), asm.I32Store(0))
		m.ExportFunc("calls", m.Func(void, nil, asm.Loop(), asm.Call(helper), asm.Call(yield), asm.Drop(), asm.Br(0), asm.End()))
		// Memory growth until the limit, forever.
		m.ExportFunc("grow", m.Func(void, nil, asm.Loop(), asm.I32Const(1), asm.MemoryGrow(), asm.Drop(), asm.Br(0), asm.End()))
	})
	straight := func(build func(m *asm.Module, void uint32)) {
		m := asm.New()
		m.ImportFunc("wasi_snapshot_preview1", "sched_yield", m.Type(nil, i32))
		build(m, m.Type(nil, nil))
		out = append(out, m.Bytes())
	}
	straight(func(m *asm.Module, void uint32) {
		// 64 MiB, what the fuzz runtime allows.
		m.Memory(1024, 1024)
		m.ExportFunc("fills", m.Func(void, nil, asm.Repeat(3000, asm.I32Const(0), asm.I32Const(1), asm.I32Const(64<<20), asm.MemoryFill())))
		m.ExportFunc("copies", m.Func(void, nil, asm.Repeat(3000, asm.I32Const(0), asm.I32Const(32<<20), asm.I32Const(32<<20), asm.MemoryCopy())))
		m.ExportFunc("loads", m.Func(void, nil, asm.Repeat(5000, asm.I32Const(64), asm.I32Load(0), asm.Drop())))
	})
	straight(func(m *asm.Module, void uint32) {
		// Growth a page at a time, each time filling all the memory; table
		// fills and copies.
		m.Memory(1, 1024)
		m.ExportFunc("grow", m.Func(void, nil, asm.Repeat(1000, asm.I32Const(1), asm.MemoryGrow(), asm.Drop(),
			asm.I32Const(0), asm.I32Const(3), asm.MemorySize(), asm.I32Const(16), asm.Ops(0x74), asm.MemoryFill())))
		m.Table(asm.FuncRef, 1<<16, 1<<16)
		m.ExportFunc("tables", m.Func(void, nil, asm.Repeat(2000,
			asm.I32Const(0), asm.RefNull(asm.FuncRef), asm.I32Const(1<<16), asm.TableFill(0),
			asm.I32Const(1), asm.I32Const(0), asm.I32Const(1<<16-1), asm.TableCopy(0, 0))))
	})
	straight(func(m *asm.Module, void uint32) {
		// Host calls in a row: random_get of 16 MiB each.
		random := m.ImportFunc("wasi_snapshot_preview1", "random_get", m.Type([]asm.ValType{asm.I32, asm.I32}, i32))
		m.Memory(256, 256)
		m.ExportFunc("random", m.Func(void, nil, asm.Repeat(3000, asm.I32Const(0), asm.I32Const(16<<20), asm.Call(random), asm.Drop())))
	})
	add(func(m *asm.Module, void, _ uint32) {
		// Loop-free mutual recursion (ends in a stack overflow) and a loop
		// through call_indirect.
		m.Table(asm.FuncRef, 1, 1)
		unary := m.Type(i32, i32)
		// f is function 1 (after the import), g function 2.
		f := m.Func(unary, nil, asm.LocalGet(0), asm.I32Const(1), asm.Ops(asm.OpI32Add), asm.Call(2))
		g := m.Func(unary, nil, asm.LocalGet(0), asm.Call(f))
		m.ExportFunc("recurse", g)
		m.Elem(asm.I32Const(0), f)
		m.ExportFunc("indirect", m.Func(void, nil, asm.Loop(), asm.I32Const(0), asm.I32Const(0), asm.CallIndirect(unary, 0), asm.Drop(), asm.Br(0), asm.End()))
	})
	return out
}
