package interrupt_test

import (
	"context"
	"encoding/binary"
	"strings"
	"testing"

	"github.com/tetratelabs/wazero/api"

	"github.com/agenthost/agenthost/host/wasm/interrupt"
	asm "github.com/agenthost/agenthost/host/wasm/wasmtest/wasmasm"
)

// step counts one step of a shape: mem[0] += 1 (weight 6).
func step() []byte {
	return asm.Repeat(1, asm.I32Const(0), asm.I32Const(0), asm.I32Load(0), asm.I32Const(1), asm.Ops(asm.OpI32Add), asm.I32Store(0))
}

// straightLineShapes are guests doing their work without a loop or a call of
// their own: n steps, each some work and a count in mem[0]. weight is the
// least fuel a step must cost.
var straightLineShapes = []struct {
	name   string
	n      int
	weight int
	build  func(m *asm.Module) []byte // adds memory (and more) and returns one step
}{
	{"ordinary instructions", 10000, 6, func(m *asm.Module) []byte {
		m.Memory(1, 1)
		return step()
	}},
	{"memory.fill", 100, 1 << 20 >> 6, func(m *asm.Module) []byte {
		m.Memory(32, 32)
		return append(asm.Repeat(1, asm.I32Const(64), asm.I32Const(9), asm.I32Const(1<<20), asm.MemoryFill()), step()...)
	}},
	{"memory.copy", 100, 1 << 20 >> 6, func(m *asm.Module) []byte {
		m.Memory(32, 32)
		return append(asm.Repeat(1, asm.I32Const(64), asm.I32Const(1<<20), asm.I32Const(1<<20), asm.MemoryCopy()), step()...)
	}},
	{"memory.grow", 60, 1 << 10, func(m *asm.Module) []byte {
		m.Memory(1, 64)
		return append(asm.Repeat(1, asm.I32Const(1), asm.MemoryGrow(), asm.Drop()), step()...)
	}},
	{"table.fill", 100, 100000 >> 3, func(m *asm.Module) []byte {
		m.Memory(1, 1)
		m.Table(asm.FuncRef, 100000, 100000)
		return append(asm.Repeat(1, asm.I32Const(0), asm.RefNull(asm.FuncRef), asm.I32Const(100000), asm.TableFill(0)), step()...)
	}},
	{"table.copy", 100, 50000 >> 3, func(m *asm.Module) []byte {
		m.Memory(1, 1)
		m.Table(asm.FuncRef, 100000, 100000)
		return append(asm.Repeat(1, asm.I32Const(1), asm.I32Const(0), asm.I32Const(50000), asm.TableCopy(0, 0)), step()...)
	}},
	{"host calls", 1000, interrupt.MaxRun, func(m *asm.Module) []byte {
		random := m.ImportFunc("wasi_snapshot_preview1", "random_get", m.Type([]asm.ValType{asm.I32, asm.I32}, i32))
		m.Memory(1, 1)
		return append(asm.Repeat(1, asm.I32Const(64), asm.I32Const(1024), asm.Call(random), asm.Drop()), step()...)
	}},
}

// TestStraightLineWorkIsCharged: fuel pays for work, not for loop
// iterations. With the flag set and the fuel at a known amount, each shape
// traps once it has spent it: after about fuel/weight of its steps, however
// many it has in a row (a loop counts likewise: an iteration costs its
// body's weight). Fuel for a quarter of its steps lets it run no more.
func TestStraightLineWorkIsCharged(t *testing.T) {
	shapes := append(straightLineShapes[:len(straightLineShapes):len(straightLineShapes)], struct {
		name   string
		n      int
		weight int
		build  func(m *asm.Module) []byte
	}{"loop", 4000, 6, nil})
	for _, sc := range shapes {
		t.Run(sc.name, func(t *testing.T) {
			ctx := context.Background()
			fuel := sc.weight * sc.n / 4 // enough for a quarter of the steps
			m := asm.New()
			m.ImportFunc("wasi_snapshot_preview1", "sched_yield", m.Type(nil, i32))
			var body []byte
			if sc.build == nil {
				m.Memory(1, 1)
				body = append(append(asm.Loop(), step()...), append(asm.Br(0), asm.End()...)...)
			} else {
				body = asm.Repeat(sc.n, sc.build(m))
			}
			m.ExportFunc("f", m.Func(m.Type(nil, nil), nil, body))
			out, err := interrupt.Instrument(m.Bytes(), interrupt.Options{})
			if err != nil {
				t.Fatal(err)
			}
			mod := runWASI(t, out)
			mod.ExportedGlobal(interrupt.DefaultGlobalExport).(api.MutableGlobal).Set(1)
			mod.ExportedGlobal(interrupt.DefaultGlobalExport + ".fuel").(api.MutableGlobal).Set(uint64(fuel))
			_, err = mod.ExportedFunction("f").Call(ctx)
			b, _ := mod.Memory().Read(0, 4)
			steps := int(binary.LittleEndian.Uint32(b))
			if err == nil || !strings.Contains(err.Error(), "unreachable") {
				t.Fatalf("f ended with %v after %d steps, want the check's trap", err, steps)
			}
			// The check that finds the fuel spent may come up to MaxRun later.
			if most := (fuel+interrupt.MaxRun)/sc.weight + 2; steps > most || steps < 1 {
				t.Fatalf("%d steps on %d fuel, want 1 to %d", steps, fuel, most)
			}
		})
	}
}
