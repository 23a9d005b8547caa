// Package interrupt rewrites a WebAssembly module so that its host can stop it
// at any moment for the price of a few register operations per loop iteration
// and call, like Wasmtime's fuel and epoch interruption.
//
// wazero stops a running guest only in its close-on-context-done mode, which
// makes every loop iteration leave native code to check for cancellation; Go
// plugins measured 5-8× slower under it. Instead, Instrument adds two mutable
// i32 globals, a flag and a fuel counter, and inserts at the top of every loop
// and every function (but one whose straight-line opening leads into a loop,
// whose check then runs at every entry), and within straight-line code:
//
//	fuel = fuel - cost
//	if fuel < 0 {
//	  fuel = YieldEvery
//	  sched_yield()          // WASI's, imported by the module or the rewrite
//	  if flag { unreachable }
//	}
//
// Fuel pays for work, not for iterations: a check's cost is the weight of
// the code run since the check before it on the heaviest path there (an
// instruction weighs 1), and a check is inserted wherever straight-line code
// would otherwise pass maxRun of weight without one. A host call (a call of
// an import, or a call_indirect when a table may hold one) weighs maxRun, so
// a check precedes each. Bulk instructions and growth become calls of
// helpers that do their work in bounded chunks and charge for it by the byte
// (helpers.go). So no path runs more than maxRun instructions or one chunk
// between two checks, loops or none: a function of 2000 memory.fills of
// 128 MiB is as stoppable as an endless loop.
//
// The host sets the flag (and empties the fuel) from another goroutine
// (Trigger) when a call's context ends; the guest traps at its next check,
// and the host discards the instance.
//
// The periodic sched_yield is not optional: compiled Wasm code has no Go
// preemption points, so a guest that never calls the host would hold up every
// stop-the-world phase of the Go garbage collector — and with it the goroutine
// that is to set the flag — forever. The host call gives the Go scheduler a
// safe point every YieldEvery units of work. A module that does not import
// sched_yield gets the import added (yield.go), so leaving it out does not
// take a module out of the rewrite: sched_yield is standard WASI, and the
// rewrite still runs in any host that provides WASI.
//
// A module using what the rewrite does not decode (SIMD, threads,
// exceptions, multi-memory, GC types) is ErrUnsupported: nothing in it can
// be checked, and wazero's close-on-context-done mode, the only other way
// to stop it, stops loops and calls but not straight-line bulk work, nor a
// guest holding up the collector. The host refuses such a module unless
// its operator allows the plugin to run uninterruptible.
//
// The flag and the fuel take the first two global indices the original
// module does not define. Code naming those indices is invalid in the
// original but would be valid, and able to clear the flag or pin the fuel,
// after the rewrite; so Instrument checks every index that code and constant
// expressions name while it decodes them, and refuses (ErrInvalid) a module
// naming anything it does not define. Only the inserted checks touch the
// two globals.
package interrupt

import (
	"errors"
	"fmt"
	"strings"

	"github.com/tetratelabs/wazero/api"

	"github.com/agenthost/agenthost/host/wasm/wasmbin"
)

// DefaultGlobalExport is the export name of the interrupt flag; the fuel
// counter is exported under the same name with the suffix ".fuel".
const DefaultGlobalExport = "agenthost.interrupt"

// Version names the instrumentation's output; it changes whenever Instrument
// rewrites or refuses differently, so modules instrumented by an older host
// are not reused from a cache. Version 2 refuses modules that name indices
// they do not define, which version 1 rewrote into valid ones; version 3
// refuses block types and typed selects wazero reads with more bytes, behind
// which version 2 could overlook such an index. A cached rewrite of an older
// version must not outlive the fix. Version 4 leaves out the entry check of
// a function that opens into a loop (loopFirst). Version 5 charges fuel by
// work: checks within straight-line code and before host calls, chunked
// helpers for bulk instructions (a version 4 rewrite let straight-line code
// run unchecked for minutes). Version 6 adds the sched_yield import to a
// module that lacks it, which version 5 left to wazero's mode, and names
// the proposal an undecoded instruction belongs to.
const Version = "6"

// YieldEvery is how much work (in instructions, see the package
// documentation) passes between two host calls. It bounds how long a guest
// can hold off the Go scheduler: about 10-100 µs of guest work.
const YieldEvery = 100000

// ErrUnsupported is returned for modules that use what the rewriter does
// not decode (SIMD, threads, exceptions, multi-memory, GC types and the
// like), that need more helpers than it adds, or that have a start function
// (unless Options.AllowStart). Such a module cannot be stopped by the flag:
// only wazero's close-on-context-done mode could stop it, and that mode
// stops neither straight-line bulk work nor a guest holding up the host's
// garbage collector, so the host refuses it unless its operator allows it
// to run uninterruptible. That mode runs the module as written, which
// wazero validates itself; an invalid module is refused with ErrInvalid
// instead, since only its rewrite could have turned it valid. A module that
// does not import sched_yield is not unsupported: the rewrite adds the
// import (yield.go).
var ErrUnsupported = errors.New("module cannot be instrumented for interruption")

// Options configure Instrument.
type Options struct {
	// GlobalExport names the exported flag; DefaultGlobalExport when empty.
	GlobalExport string
	// AllowStart instruments a module with a start function too. The flag
	// cannot reach a start function (it runs inside instantiation, before
	// the host holds the instance), but its checks still yield every
	// YieldEvery units of work: a host whose sched_yield traps once the
	// instantiation is to stop can stop it there. Without it such a module
	// is ErrUnsupported, and would run in wazero's mode, where straight-line
	// work is not bounded at all.
	AllowStart bool
}

// Instrument returns a copy of module with the interrupt flag and checks added.
// Global and type indices do not change, nor do function indices unless the
// module lacks the sched_yield import, which is added after its function
// imports (moving each function it defines up by one). It decodes every
// instruction, so malformed input yields an error wrapping wasmbin.ErrMalformed,
// never a panic. It checks every index the module's code and constant
// expressions name while it decodes them: a module naming an index it does
// not define yields an error wrapping ErrInvalid, and must be refused rather
// than run uninstrumented.
func Instrument(module []byte, opts Options) ([]byte, error) {
	name := opts.GlobalExport
	if name == "" {
		name = DefaultGlobalExport
	}
	if !strings.HasPrefix(name, ReservedExportPrefix) {
		// The module's exports are checked against the reserved prefix
		// only: a name outside it could collide with one of them.
		return nil, fmt.Errorf("interrupt: export name %q must start with %q", name, ReservedExportPrefix)
	}
	secs, err := wasmbin.Parse(module)
	if err != nil {
		return nil, err
	}
	m, err := analyse(secs)
	if err != nil {
		return nil, err
	}
	// The flag and the fuel take the first two global indices the module
	// does not define; the code walk makes sure its code names none of them.
	globalIdx := m.globals
	m.addYield = m.yield < 0
	// Every body is walked, even of a module that is to run uninstrumented:
	// the walk refuses what wazero would only refuse after allocating for
	// it (four billion locals cost its decoder gigabytes), and an invalid
	// module must be refused rather than left to the fallback.
	var code []byte
	var helps *helpers
	for _, s := range secs {
		if s.ID == wasmbin.SecCode {
			if code, helps, err = instrumentCode(s.Payload, m, globalIdx, globalIdx+1); err != nil {
				return nil, err
			}
		}
	}
	helperTypes := 0
	if helps != nil {
		if len(helps.instrs) > 0 && helps.base()+uint32(len(helps.instrs)) > maxFunctions {
			return nil, fmt.Errorf("%w: no room for the rewrite's %d helper functions", ErrUnsupported, len(helps.instrs))
		}
		helperTypes = len(helps.newTypes)
	}
	if hasSection(secs, wasmbin.SecStart) && !opts.AllowStart {
		// wazero runs the start function inside instantiation, before the
		// host holds the instance and so before it can reach the flag: an
		// endless start function could not be stopped. wazero's own mode
		// stops it when the instantiation's context ends.
		return nil, fmt.Errorf("%w: the module has a start function, which runs before the host can interrupt it", ErrUnsupported)
	}
	var out []wasmbin.Section
	haveGlobal, haveExport := false, false
	for _, s := range secs {
		if s.ID == wasmbin.SecGlobal {
			payload, err := appendGlobals(s.Payload)
			if err != nil {
				return nil, err
			}
			s.Payload = payload
			haveGlobal = true
		}
		if s.ID == wasmbin.SecCustom && dropsWithCode(s.Name) {
			continue
		}
		out = append(out, s)
	}
	if !haveGlobal {
		payload, _ := appendGlobals([]byte{0})
		out = insertSection(out, wasmbin.Section{ID: wasmbin.SecGlobal, Payload: payload})
	}
	for i, s := range out {
		switch s.ID {
		case wasmbin.SecExport:
			p, err := appendExports(s.Payload, name, globalIdx)
			if err != nil {
				return nil, err
			}
			out[i].Payload = p
			haveExport = true
		case wasmbin.SecCode:
			out[i].Payload = code
		case wasmbin.SecType:
			// Helpers exist only for code, which has types and functions.
			if helps != nil {
				out[i].Payload = helps.appendTypes(s.Payload)
			}
		case wasmbin.SecFunction:
			if helps != nil {
				out[i].Payload = helps.appendFunctions(s.Payload)
			}
		}
	}
	if !haveExport {
		p, _ := appendExports([]byte{0}, name, globalIdx)
		out = insertSection(out, wasmbin.Section{ID: wasmbin.SecExport, Payload: p})
	}
	if m.addYield {
		// After the rewrite's own exports were appended: they name
		// globals, which the import does not move.
		if out, err = m.addYieldTo(out, helperTypes); err != nil {
			return nil, err
		}
	}
	return wasmbin.Encode(out), nil
}

// Trigger sets the interrupt flag of an instantiated module and empties its
// fuel: its next check traps. It is safe to call from any goroutine while the
// guest runs: wazero keeps a module's globals in memory that compiled code
// loads afresh at every global.get (globals are never cached in registers
// across the instrumented check), so the store becomes visible to the running
// guest within a few instructions on every architecture wazero compiles for.
func Trigger(mod api.Module, exportName string) error {
	if exportName == "" {
		exportName = DefaultGlobalExport
	}
	g, ok := mod.ExportedGlobal(exportName).(api.MutableGlobal)
	fuel, ok2 := mod.ExportedGlobal(exportName + ".fuel").(api.MutableGlobal)
	if !ok || !ok2 {
		return fmt.Errorf("module has no mutable global %q: was it instrumented?", exportName)
	}
	g.Set(1)
	// Emptying the fuel sends the guest to the flag check at once. The guest
	// may overwrite it with its own decrement; then it gets there within
	// YieldEvery units of work anyway.
	fuel.Set(api.EncodeI32(-1))
	return nil
}

// Triggered reports whether the module's flag is set, i.e. whether a trap came
// from Trigger rather than from the guest's own fault.
func Triggered(mod api.Module, exportName string) bool {
	if exportName == "" {
		exportName = DefaultGlobalExport
	}
	g := mod.ExportedGlobal(exportName)
	return g != nil && g.Get() != 0
}

// sectionOrder is the order non-custom sections must appear in.
var sectionOrder = [...]byte{
	wasmbin.SecType, wasmbin.SecImport, wasmbin.SecFunction, wasmbin.SecTable,
	wasmbin.SecMemory, wasmbin.SecGlobal, wasmbin.SecExport, wasmbin.SecStart,
	wasmbin.SecElement, wasmbin.SecDataCount, wasmbin.SecCode, wasmbin.SecData,
}

func rank(id byte) int {
	for i, s := range sectionOrder {
		if s == id {
			return i
		}
	}
	return -1
}

// insertSection puts s before the first non-custom section that must follow it.
func insertSection(secs []wasmbin.Section, s wasmbin.Section) []wasmbin.Section {
	r := rank(s.ID)
	for i, x := range secs {
		if x.ID != wasmbin.SecCustom && rank(x.ID) > r {
			return append(secs[:i], append([]wasmbin.Section{s}, secs[i:]...)...)
		}
	}
	return append(secs, s)
}

// dropsWithCode names custom sections that point into the code section: their
// offsets would be wrong after the rewrite.
func dropsWithCode(name string) bool {
	return name == "sourceMappingURL" || name == "external_debug_info" || len(name) > 7 && name[:7] == ".debug_"
}

// appendGlobals adds the flag `(global (mut i32) (i32.const 0))` and the fuel
// `(global (mut i32) (i32.const YieldEvery))` to a global section.
func appendGlobals(payload []byte) ([]byte, error) {
	r := wasmbin.NewReader(payload)
	n, err := r.U32()
	if err != nil {
		return nil, err
	}
	out := wasmbin.AppendU32(nil, n+2)
	out = append(out, payload[r.Offset():]...)
	out = append(out, 0x7F, 0x01, 0x41, 0x00, 0x0B)
	out = append(out, 0x7F, 0x01, 0x41)
	out = wasmbin.AppendS64(out, YieldEvery)
	out = append(out, 0x0B)
	return out, nil
}

// appendExports exports the flag as name and the fuel as name+".fuel".
func appendExports(payload []byte, name string, flag uint32) ([]byte, error) {
	r := wasmbin.NewReader(payload)
	n, err := r.U32()
	if err != nil {
		return nil, err
	}
	out := wasmbin.AppendU32(nil, n+2)
	out = append(out, payload[r.Offset():]...)
	out = wasmbin.AppendName(out, name)
	out = append(out, 0x03)
	out = wasmbin.AppendU32(out, flag)
	out = wasmbin.AppendName(out, name+".fuel")
	out = append(out, 0x03)
	return wasmbin.AppendU32(out, flag+1), nil
}
