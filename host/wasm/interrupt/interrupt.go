// Package interrupt rewrites a WebAssembly module so that its host can stop it
// at any moment for the price of one load and branch per loop iteration and
// call, like Wasmtime's epoch interruption.
//
// wazero stops a running guest only in its close-on-context-done mode, which
// makes every loop iteration leave native code to check for cancellation; Go
// plugins measured 5-8× slower under it. Instead, Instrument adds a mutable i32
// global, exports it, and inserts
//
//	global.get $flag
//	if
//	  unreachable
//	end
//
// at the top of every loop and every function. The host sets the flag from
// another goroutine (Trigger) when a call's context ends; the guest traps at its
// next loop iteration or call, and the host discards the instance.
package interrupt

import (
	"errors"
	"fmt"

	"github.com/tetratelabs/wazero/api"

	"github.com/agenthost/agenthost/host/wasm/wasmbin"
)

// DefaultGlobalExport is the export name of the interrupt flag.
const DefaultGlobalExport = "agenthost.interrupt"

// ErrUnsupported is returned for modules that use instructions the rewriter
// does not decode (SIMD, threads, exceptions, multi-memory). Callers fall back
// to wazero's close-on-context-done mode for them.
var ErrUnsupported = errors.New("module cannot be instrumented for interruption")

// Options configure Instrument.
type Options struct {
	// GlobalExport names the exported flag; DefaultGlobalExport when empty.
	GlobalExport string
}

// Instrument returns a copy of module with the interrupt flag and checks added.
// Function, global and type indices do not change. It decodes every
// instruction, so malformed input yields an error wrapping wasmbin.ErrMalformed,
// never a panic.
func Instrument(module []byte, opts Options) ([]byte, error) {
	name := opts.GlobalExport
	if name == "" {
		name = DefaultGlobalExport
	}
	secs, err := wasmbin.Parse(module)
	if err != nil {
		return nil, err
	}
	importedGlobals, err := countImportedGlobals(secs)
	if err != nil {
		return nil, err
	}
	var out []wasmbin.Section
	var globalIdx uint32
	haveGlobal, haveExport := false, false
	for _, s := range secs {
		if s.ID == wasmbin.SecGlobal {
			payload, n, err := appendGlobal(s.Payload)
			if err != nil {
				return nil, err
			}
			globalIdx = importedGlobals + n
			s.Payload = payload
			haveGlobal = true
		}
		if s.ID == wasmbin.SecCustom && dropsWithCode(s.Name) {
			continue
		}
		out = append(out, s)
	}
	if !haveGlobal {
		payload, _, _ := appendGlobal([]byte{0})
		globalIdx = importedGlobals
		out = insertSection(out, wasmbin.Section{ID: wasmbin.SecGlobal, Payload: payload})
	}
	for i, s := range out {
		switch s.ID {
		case wasmbin.SecExport:
			p, err := appendExport(s.Payload, name, globalIdx)
			if err != nil {
				return nil, err
			}
			out[i].Payload = p
			haveExport = true
		case wasmbin.SecCode:
			p, err := instrumentCode(s.Payload, globalIdx)
			if err != nil {
				return nil, err
			}
			out[i].Payload = p
		}
	}
	if !haveExport {
		p, _ := appendExport([]byte{0}, name, globalIdx)
		out = insertSection(out, wasmbin.Section{ID: wasmbin.SecExport, Payload: p})
	}
	return wasmbin.Encode(out), nil
}

// Trigger sets the interrupt flag of an instantiated module: its next loop
// iteration or call traps. It is safe to call from any goroutine while the
// guest runs: wazero keeps a module's globals in memory that compiled code
// loads afresh at every global.get (globals are never cached in registers
// across the instrumented check), so the store becomes visible to the running
// guest within a few instructions on every architecture wazero compiles for.
func Trigger(mod api.Module, exportName string) error {
	if exportName == "" {
		exportName = DefaultGlobalExport
	}
	g, ok := mod.ExportedGlobal(exportName).(api.MutableGlobal)
	if !ok {
		return fmt.Errorf("module has no mutable global %q: was it instrumented?", exportName)
	}
	g.Set(1)
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

func countImportedGlobals(secs []wasmbin.Section) (uint32, error) {
	var n uint32
	for _, s := range secs {
		if s.ID != wasmbin.SecImport {
			continue
		}
		imports, err := wasmbin.Imports(wasmbin.Encode([]wasmbin.Section{s}))
		if err != nil {
			return 0, err
		}
		for _, im := range imports {
			if im.Kind == wasmbin.ImportGlobal {
				n++
			}
		}
	}
	return n, nil
}

// appendGlobal adds `(global (mut i32) (i32.const 0))` to a global section and
// returns the new payload and the new global's index among defined globals.
func appendGlobal(payload []byte) ([]byte, uint32, error) {
	r := wasmbin.NewReader(payload)
	n, err := r.U32()
	if err != nil {
		return nil, 0, err
	}
	out := wasmbin.AppendU32(nil, n+1)
	out = append(out, payload[r.Offset():]...)
	out = append(out, 0x7F, 0x01, 0x41, 0x00, 0x0B)
	return out, n, nil
}

func appendExport(payload []byte, name string, global uint32) ([]byte, error) {
	r := wasmbin.NewReader(payload)
	n, err := r.U32()
	if err != nil {
		return nil, err
	}
	out := wasmbin.AppendU32(nil, n+1)
	out = append(out, payload[r.Offset():]...)
	out = wasmbin.AppendName(out, name)
	out = append(out, 0x03)
	return wasmbin.AppendU32(out, global), nil
}
