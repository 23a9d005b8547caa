package interrupt_test

import (
	"bytes"
	"context"
	"fmt"
	"testing"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"

	"github.com/agenthost/agenthost/host/wasm/interrupt"
	asm "github.com/agenthost/agenthost/host/wasm/wasmtest/wasmasm"
)

// bulkModule exports each bulk instruction as a function of its operands
// (i32s; table.fill and table.grow take their reference as a function index
// to put, or -1 for null), on a memory of 64 pages with a pattern in it, a
// passive data segment of 200 KiB, and a table of 40000 entries holding two
// functions by turns, with tdigest summing what the table holds.
func bulkModule() []byte {
	i32 := []asm.ValType{asm.I32}
	m := asm.New()
	m.ImportFunc("wasi_snapshot_preview1", "sched_yield", m.Type(nil, i32))
	m.Table(asm.FuncRef, 40000, 50000)
	m.Memory(64, 80)
	three := m.Type([]asm.ValType{asm.I32, asm.I32, asm.I32}, nil)
	ret := m.Type(nil, i32)
	one := m.Func(ret, nil, asm.I32Const(1))
	two := m.Func(ret, nil, asm.I32Const(2))
	pattern := make([]byte, 200<<10)
	for i := range pattern {
		pattern[i] = byte(i*7 + i>>9)
	}
	m.Data(asm.I32Const(0), pattern)
	seg := m.PassiveData(pattern)
	var elems []uint32
	for i := 0; i < 40000; i++ {
		elems = append(elems, []uint32{one, two}[i%2])
	}
	m.Elem(asm.I32Const(0), elems...)
	var passive []uint32
	for i := 0; i < 30000; i++ {
		passive = append(passive, []uint32{two, one, one}[i%3])
	}
	pseg := m.PassiveElem(passive...)
	args := []byte{}
	args = append(args, asm.LocalGet(0)...)
	args = append(args, asm.LocalGet(1)...)
	args = append(args, asm.LocalGet(2)...)
	m.ExportFunc("fill", m.Func(three, nil, args, asm.MemoryFill()))
	m.ExportFunc("copy", m.Func(three, nil, args, asm.MemoryCopy()))
	m.ExportFunc("init", m.Func(three, nil, args, asm.MemoryInit(seg)))
	m.ExportFunc("drop", m.Func(m.Type(nil, nil), nil, asm.DataDrop(seg)))
	m.ExportFunc("grow", m.Func(m.Type(i32, i32), nil, asm.LocalGet(0), asm.MemoryGrow()))
	ref := func(l uint32) []byte { // the function index in local l as a reference, or null
		b := asm.LocalGet(l)
		b = append(b, asm.I32Const(0)...)
		b = append(b, asm.OpI32LtS)
		b = append(b, asm.IfT(asm.ValBlock(asm.FuncRef))...)
		b = append(b, asm.RefNull(asm.FuncRef)...)
		b = append(b, asm.Else()...)
		b = append(b, asm.RefFunc(one)...)
		b = append(b, asm.End()...)
		return b
	}
	m.ExportFunc("tfill", m.Func(three, nil, asm.LocalGet(0), ref(1), asm.LocalGet(2), asm.TableFill(0)))
	m.ExportFunc("tcopy", m.Func(three, nil, args, asm.TableCopy(0, 0)))
	m.ExportFunc("tinit", m.Func(three, nil, args, asm.TableInit(pseg, 0)))
	m.ExportFunc("tgrow", m.Func(m.Type([]asm.ValType{asm.I32, asm.I32}, i32), nil, ref(0), asm.LocalGet(1), asm.TableGrow(0)))
	// tdigest: sum over i of (i+1) * (null ? 7 : call_indirect i).
	m.ExportFunc("tdigest", m.Func(ret, []asm.ValType{asm.I32, asm.I32},
		asm.Block(), asm.Loop(),
		asm.LocalGet(0), asm.TableSize(0), asm.Ops(0x4F), asm.BrIf(1),
		asm.LocalGet(1),
		asm.LocalGet(0), asm.I32Const(1), asm.Ops(asm.OpI32Add),
		asm.LocalGet(0), []byte{0x25, 0x00}, asm.Ops(0xD1), // table.get 0; ref.is_null
		asm.IfT(asm.ValBlock(asm.I32)), asm.I32Const(7), asm.Else(), asm.LocalGet(0), asm.CallIndirect(ret, 0), asm.End(),
		asm.Ops(asm.OpI32Mul, asm.OpI32Add), asm.LocalSet(1),
		asm.LocalGet(0), asm.I32Const(1), asm.Ops(asm.OpI32Add), asm.LocalSet(0),
		asm.Br(0), asm.End(), asm.End(),
		asm.LocalGet(1)))
	return m.Bytes()
}

// TestBulkHelpersKeepSemantics runs every bulk instruction, in bounds and
// out, small and across many chunks, overlapping both ways, on the original
// module and its rewrite: both must trap alike and leave the same memory and
// table.
func TestBulkHelpersKeepSemantics(t *testing.T) {
	const page = 65536
	mem := uint32(64 * page)
	cases := []struct {
		fn   string
		args []uint32
	}{
		{"fill", []uint32{10, 0xAB, 100}},
		{"fill", []uint32{3, 0xCD, mem - 3}},
		{"fill", []uint32{0, 1, mem}},
		{"fill", []uint32{1, 1, mem}},          // one byte past the end
		{"fill", []uint32{mem, 1, 0}},          // empty at the end
		{"fill", []uint32{mem + 1, 1, 0}},      // empty past the end
		{"fill", []uint32{5, 1, 0xFFFFFFFF}},   // wraps in 32 bits
		{"copy", []uint32{1000, 0, 300 << 10}}, // overlapping, destination above
		{"copy", []uint32{0, 1000, 300 << 10}}, // overlapping, destination below
		{"copy", []uint32{7, 7, 500 << 10}},
		{"copy", []uint32{mem - 200<<10, 17, 200 << 10}},
		{"copy", []uint32{0, mem - 100<<10, 100<<10 + 1}}, // source past the end
		{"copy", []uint32{mem - 100<<10, 0, 100<<10 + 1}}, // destination past the end
		{"copy", []uint32{100, 0xFFFFFF00, 0x200}},
		{"init", []uint32{999, 5, 150 << 10}},
		{"init", []uint32{0, 0, 200 << 10}},
		{"init", []uint32{0, 1, 200 << 10}},             // past the segment
		{"init", []uint32{mem - 100<<10, 0, 150 << 10}}, // past the memory
		{"init", []uint32{0, 200 << 10, 0}},             // empty at the segment's end
		{"init", []uint32{0, 0xFFFFFF00, 0x200}},
		{"drop+init", []uint32{0, 0, 100 << 10}},
		{"drop+init", []uint32{0, 0, 0}},
		{"grow", []uint32{3}},
		{"grow", []uint32{17}},
		{"grow", []uint32{0xFFFFFFFF}},
		{"tfill", []uint32{0, 0xFFFFFFFF, 40000}},
		{"tfill", []uint32{5, 1, 30000}},
		{"tfill", []uint32{5, 1, 39996}},
		{"tcopy", []uint32{100, 0, 30000}},
		{"tcopy", []uint32{0, 100, 30000}},
		{"tcopy", []uint32{0, 100, 39901}},
		{"tinit", []uint32{1, 0, 30000}},
		{"tinit", []uint32{0, 1, 30000}},
		{"tinit", []uint32{10001, 0, 30000}},
		{"tgrow", []uint32{1, 9000}},
		{"tgrow", []uint32{0xFFFFFFFF, 10001}},
	}
	plain, err := compileRun(bulkModule())
	if err != nil {
		t.Fatal(err)
	}
	out, err := interrupt.Instrument(bulkModule(), interrupt.Options{})
	if err != nil {
		t.Fatal(err)
	}
	inst, err := compileRun(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range cases {
		t.Run(fmt.Sprintf("%s%v", tc.fn, tc.args), func(t *testing.T) {
			a, b := plain(t, tc.fn, tc.args), inst(t, tc.fn, tc.args)
			if a.trapped != b.trapped || a.result != b.result || a.digest != b.digest || !bytes.Equal(a.memory, b.memory) {
				t.Fatalf("original: trapped %v, result %d, table %d; rewrite: trapped %v, result %d, table %d; memories equal: %v",
					a.trapped, a.result, a.digest, b.trapped, b.result, b.digest, bytes.Equal(a.memory, b.memory))
			}
		})
	}
}

type bulkOutcome struct {
	trapped bool
	result  uint64
	digest  uint64
	memory  []byte
}

// compileRun returns a function that runs one export of module in a fresh
// instance and reports what it did.
func compileRun(module []byte) (func(t *testing.T, fn string, args []uint32) bulkOutcome, error) {
	ctx := context.Background()
	rt := wazero.NewRuntime(ctx)
	wasi_snapshot_preview1.MustInstantiate(ctx, rt)
	cm, err := rt.CompileModule(ctx, module)
	if err != nil {
		return nil, err
	}
	return func(t *testing.T, fn string, args []uint32) bulkOutcome {
		mod, err := rt.InstantiateModule(ctx, cm, wazero.NewModuleConfig().WithName(""))
		if err != nil {
			t.Fatal(err)
		}
		defer mod.Close(ctx)
		var params []uint64
		for _, a := range args {
			params = append(params, api.EncodeU32(a))
		}
		if fn == "drop+init" {
			if _, err := mod.ExportedFunction("drop").Call(ctx); err != nil {
				t.Fatal(err)
			}
			fn = "init"
		}
		var o bulkOutcome
		res, err := mod.ExportedFunction(fn).Call(ctx, params...)
		o.trapped = err != nil
		if len(res) > 0 {
			o.result = res[0]
		}
		d, err := mod.ExportedFunction("tdigest").Call(ctx)
		if err != nil {
			t.Fatalf("tdigest: %v", err)
		}
		o.digest = d[0]
		o.memory, _ = mod.Memory().Read(0, mod.Memory().Size())
		o.memory = bytes.Clone(o.memory)
		return o
	}, nil
}
