package interrupt_test

import (
	"bytes"
	"context"
	"fmt"
	"testing"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/experimental"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"

	"github.com/agenthost/agenthost/host/wasm/interrupt"
	"github.com/agenthost/agenthost/host/wasm/wasmbin"
	asm "github.com/agenthost/agenthost/host/wasm/wasmtest/wasmasm"
)

// noYieldModule names its functions in every way the binary format allows,
// and imports no sched_yield: the rewrite adds the import and renumbers
// every function the module defines. Function 0 is an import (WASI's
// args_sizes_get), which keeps its index; each defined function returns a
// number of its own, and each export reaches one by another route.
func noYieldModule() []byte {
	i32 := []asm.ValType{asm.I32}
	m := asm.New()
	ret := m.Type(nil, i32)
	argsSizes := m.ImportFunc("wasi_snapshot_preview1", "args_sizes_get", m.Type([]asm.ValType{asm.I32, asm.I32}, i32))
	m.Table(asm.FuncRef, 32, 32)
	m.Memory(1, 1)
	var f []uint32 // f[i] returns 11*(i+1)
	for i := 0; i < 9; i++ {
		f = append(f, m.Func(ret, nil, asm.I32Const(int32(11*(i+1)))))
	}
	g := m.Global(asm.FuncRef, false, asm.RefFunc(f[8]))
	// Every form of element segment: active (0, 2, 4, 6), passive (1, 5)
	// and declarative (3, 7), with function lists and with expressions.
	refExpr := func(fn uint32) []byte { return append(asm.RefFunc(fn), 0x0B) }
	var elems [][]byte
	elem := func(parts ...[]byte) { elems = append(elems, bytes.Join(parts, nil)) }
	vec := func(items ...[]byte) []byte {
		return append(wasmbin.AppendU32(nil, uint32(len(items))), bytes.Join(items, nil)...)
	}
	idx := func(fn uint32) []byte { return wasmbin.AppendU32(nil, fn) }
	off := func(at int32) []byte { return append(asm.I32Const(at), 0x0B) }
	elem([]byte{0}, off(0), vec(idx(f[0])))
	elem([]byte{2, 0}, off(1), []byte{0}, vec(idx(f[1])))
	elem([]byte{4}, off(2), vec(refExpr(f[2])))
	elem([]byte{6, 0}, off(3), []byte{0x70}, vec(refExpr(f[3]), []byte{0xD0, 0x70, 0x0B}))
	elem([]byte{1, 0}, vec(idx(f[4])))        // segment 4
	elem([]byte{5, 0x70}, vec(refExpr(f[5]))) // segment 5
	elem([]byte{3, 0}, vec(idx(f[6])))        // declares f[6] for ref.func
	elem([]byte{7, 0x70}, vec(refExpr(f[7]))) // declares f[7]
	m.Raw(wasmbin.SecElement, vec(elems...))
	ind := m.Type(i32, i32)
	m.ExportFunc("indirect", m.Func(ind, nil, asm.LocalGet(0), asm.CallIndirect(ret, 0)))
	m.ExportFunc("direct", m.Func(ret, nil, asm.Call(f[0]), asm.Call(f[8]), asm.Ops(asm.OpI32Add)))
	m.ExportFunc("import", m.Func(ret, nil, asm.I32Const(100), asm.I32Const(104), asm.Call(argsSizes),
		asm.I32Const(100), asm.I32Load(0), asm.Ops(asm.OpI32Add)))
	m.ExportFunc("tinit", m.Func(ret, nil,
		asm.I32Const(10), asm.I32Const(0), asm.I32Const(1), asm.TableInit(4, 0),
		asm.I32Const(11), asm.I32Const(0), asm.I32Const(1), asm.TableInit(5, 0),
		asm.I32Const(10), asm.CallIndirect(ret, 0), asm.I32Const(11), asm.CallIndirect(ret, 0), asm.Ops(asm.OpI32Add)))
	setCall := func(at int32, ref []byte) []byte {
		return bytes.Join([][]byte{asm.I32Const(at), ref, {0x26, 0x00}, asm.I32Const(at), asm.CallIndirect(ret, 0)}, nil)
	}
	m.ExportFunc("refs", m.Func(ret, nil, setCall(12, asm.RefFunc(f[6])), setCall(13, asm.RefFunc(f[7])), asm.Ops(asm.OpI32Add),
		setCall(14, asm.GlobalGet(g)), asm.Ops(asm.OpI32Add)))
	m.ExportFunc("tail", m.Func(ret, nil, []byte{0x12}, idx(f[3]))) // return_call
	m.ExportFunc("fill", m.Func(ret, nil, asm.I32Const(300), asm.I32Const(7), asm.I32Const(200<<10&0xFFFF), asm.MemoryFill(),
		asm.I32Const(300), asm.I32Load(0)))
	m.Export("f5", asm.KindFunc, f[4])
	m.Export("mem", asm.KindMemory, 0)
	// The start function leaves a mark; peek reads it.
	m.Start(m.Func(m.Type(nil, nil), nil, asm.I32Const(200), asm.I32Const(0x5A5A), asm.I32Store(0)))
	m.ExportFunc("peek", m.Func(ret, nil, asm.I32Const(200), asm.I32Load(0)))
	// Function names (subsection 1) and local names (2), by function.
	var names, locals []byte
	names = wasmbin.AppendU32(names, uint32(len(f)))
	locals = wasmbin.AppendU32(locals, uint32(len(f)))
	for i, fn := range f {
		names = wasmbin.AppendName(wasmbin.AppendU32(names, fn), fmt.Sprintf("f%d", i))
		locals = append(wasmbin.AppendU32(locals, fn), 0) // no locals named
	}
	section := append(wasmbin.AppendU32([]byte{1}, uint32(len(names))), names...)
	section = append(append(section, 2), wasmbin.AppendU32(nil, uint32(len(locals)))...)
	m.Custom("name", append(section, locals...))
	return m.Bytes()
}

// TestAddedYieldKeepsSemantics: a module without sched_yield is rewritten
// with the import added; every way of naming a function still reaches the
// same one, and each export answers as the original's does.
func TestAddedYieldKeepsSemantics(t *testing.T) {
	orig := noYieldModule()
	out, err := interrupt.Instrument(orig, interrupt.Options{AllowStart: true})
	if err != nil {
		t.Fatalf("Instrument: %v", err)
	}
	imports, err := wasmbin.Imports(out)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(imports); n != 2 || imports[1].Module != "wasi_snapshot_preview1" || imports[1].Name != "sched_yield" {
		t.Fatalf("imports of the rewrite: %+v, want args_sizes_get and sched_yield", imports)
	}
	ctx := context.Background()
	run := func(module []byte) (map[string]string, map[string]string) {
		cfg := wazero.NewRuntimeConfigCompiler().WithCoreFeatures(api.CoreFeaturesV2 | experimental.CoreFeaturesTailCall)
		rt := wazero.NewRuntimeWithConfig(ctx, cfg)
		defer rt.Close(ctx)
		wasi_snapshot_preview1.MustInstantiate(ctx, rt)
		cm, err := rt.CompileModule(ctx, module)
		if err != nil {
			t.Fatalf("compile: %v", err)
		}
		names := map[string]string{}
		for name, d := range cm.ExportedFunctions() {
			names[name] = d.Name()
		}
		mod, err := rt.InstantiateModule(ctx, cm, wazero.NewModuleConfig().WithName(""))
		if err != nil {
			t.Fatalf("instantiate: %v", err)
		}
		results := map[string]string{}
		for _, c := range []struct {
			fn   string
			args []uint64
		}{
			{"indirect", []uint64{0}}, {"indirect", []uint64{1}}, {"indirect", []uint64{2}}, {"indirect", []uint64{3}},
			{"indirect", []uint64{4}}, {"indirect", []uint64{5}}, // null, empty
			{"direct", nil}, {"import", nil}, {"tinit", nil}, {"refs", nil}, {"tail", nil}, {"fill", nil},
			{"f5", nil}, {"peek", nil},
		} {
			res, err := mod.ExportedFunction(c.fn).Call(ctx, c.args...)
			results[fmt.Sprint(c.fn, c.args)] = fmt.Sprint(res, err != nil)
		}
		return results, names
	}
	a, an := run(orig)
	b, bn := run(out)
	for k, v := range a {
		if b[k] != v {
			t.Errorf("%s: original %s, rewrite %s", k, v, b[k])
		}
	}
	if fmt.Sprint(an) != fmt.Sprint(bn) {
		t.Errorf("exported functions' names: original %v, rewrite %v", an, bn)
	}
	if an["f5"] != "f4" {
		t.Errorf("the name section did not name f5's function: %v", an)
	}
}

// TestAddedYieldSmallModules: the import is added to modules that have no
// import section, no type section, or nothing at all, and what comes out
// compiles.
func TestAddedYieldSmallModules(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name  string
		build func() []byte
		want  uint64
	}{
		{"header only", func() []byte { return []byte{0, 'a', 's', 'm', 1, 0, 0, 0} }, 0},
		{"no imports", func() []byte {
			m := asm.New()
			m.ExportFunc("f", m.Func(m.Type([]asm.ValType{asm.I32}, []asm.ValType{asm.I32}), nil, asm.I32Const(7)))
			return m.Bytes()
		}, 7},
		{"no imports, a bulk helper and no () -> i32 type", func() []byte {
			m := asm.New()
			m.Memory(1, 1)
			i32 := []asm.ValType{asm.I32}
			m.ExportFunc("f", m.Func(m.Type(i32, i32), nil, asm.I32Const(0), asm.LocalGet(0), asm.I32Const(100), asm.MemoryFill(),
				asm.I32Const(99), []byte{0x2D, 0, 0})) // i32.load8_u
			return m.Bytes()
		}, 9},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := interrupt.Instrument(tc.build(), interrupt.Options{})
			if err != nil {
				t.Fatalf("Instrument: %v", err)
			}
			mod := runWASI(t, out)
			if f := mod.ExportedFunction("f"); f != nil {
				res, err := f.Call(ctx, 9)
				if err != nil || res[0] != tc.want {
					t.Fatalf("f(9) = %v, %v; want %d", res, err, tc.want)
				}
			}
			if mod.ExportedGlobal(interrupt.DefaultGlobalExport) == nil {
				t.Fatal("the rewrite exports no flag")
			}
		})
	}
}
