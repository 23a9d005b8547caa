// Package wasmasm assembles small WebAssembly binary modules for tests that
// need hand-written, often hostile, guests: a start function that never
// returns, code that names indices the module does not define, a custom
// section with a forged manifest. It writes exactly the bytes asked for and
// validates nothing, so a test can build invalid modules on purpose.
//
// A module is built in a few calls:
//
//	m := wasmasm.New()
//	yield := m.ImportFunc("wasi_snapshot_preview1", "sched_yield", m.Type(nil, []wasmasm.ValType{wasmasm.I32}))
//	spin := m.Func(m.Type(nil, nil), nil, wasmasm.Loop(), wasmasm.Br(0), wasmasm.End())
//	m.ExportFunc("spin", spin)
//	module := m.Bytes()
//
// Function bodies are raw instruction bytes; the helpers below (I32Const,
// GlobalSet, Loop, Call, ...) encode the common instructions and may be mixed
// with literal bytes. Func appends the body's final end itself.
//
// Misuse of the builder (an import after a function was defined) panics: it
// is a bug in the test, not input to handle.
package wasmasm

import (
	"github.com/agenthost/agenthost/host/wasm/wasmbin"
)

// ValType is a value type of the binary format.
type ValType byte

// Value types.
const (
	I32       ValType = 0x7F
	I64       ValType = 0x7E
	F32       ValType = 0x7D
	F64       ValType = 0x7C
	V128      ValType = 0x7B
	FuncRef   ValType = 0x70
	ExternRef ValType = 0x6F
)

// External kinds of imports and exports.
const (
	KindFunc   byte = 0x00
	KindTable  byte = 0x01
	KindMemory byte = 0x02
	KindGlobal byte = 0x03
)

// NoMax leaves a memory's or table's maximum unset.
const NoMax = ^uint32(0)

// Module is a module under construction. The zero value is not usable; call New.
type Module struct {
	types            [][]byte
	imports          [][]byte
	importedFuncs    uint32
	importedGlobals  uint32
	funcTypes        []uint32
	bodies           [][]byte
	tables, memories [][]byte
	globals          [][]byte
	exports          [][]byte
	start            *uint32
	elems, datas     [][]byte
	dataCount        bool
	customs          []wasmbin.Section
	raw              []wasmbin.Section
}

// New starts an empty module.
func New() *Module { return &Module{} }

// Type adds a function type and returns its index; an identical type added
// before is reused.
func (m *Module) Type(params, results []ValType) uint32 {
	t := []byte{0x60}
	t = wasmbin.AppendU32(t, uint32(len(params)))
	for _, p := range params {
		t = append(t, byte(p))
	}
	t = wasmbin.AppendU32(t, uint32(len(results)))
	for _, r := range results {
		t = append(t, byte(r))
	}
	for i, old := range m.types {
		if string(old) == string(t) {
			return uint32(i)
		}
	}
	m.types = append(m.types, t)
	return uint32(len(m.types) - 1)
}

// ImportFunc imports a function of type typ and returns its function index.
// Imports must precede Func, whose indices follow the imported functions'.
func (m *Module) ImportFunc(module, name string, typ uint32) uint32 {
	if len(m.bodies) > 0 {
		panic("wasmasm: ImportFunc after Func would renumber the defined functions")
	}
	m.Import(module, name, KindFunc, wasmbin.AppendU32(nil, typ))
	m.importedFuncs++
	return m.importedFuncs - 1
}

// ImportGlobal imports a global and returns its global index. Imports must
// precede Global.
func (m *Module) ImportGlobal(module, name string, t ValType, mutable bool) uint32 {
	if len(m.globals) > 0 {
		panic("wasmasm: ImportGlobal after Global would renumber the defined globals")
	}
	m.Import(module, name, KindGlobal, []byte{byte(t), b2u(mutable)})
	m.importedGlobals++
	return m.importedGlobals - 1
}

// Import adds an import of any kind with its raw descriptor (the bytes after
// the kind). It does not count towards the indices the other calls return.
func (m *Module) Import(module, name string, kind byte, desc []byte) {
	e := wasmbin.AppendName(nil, module)
	e = wasmbin.AppendName(e, name)
	e = append(e, kind)
	m.imports = append(m.imports, append(e, desc...))
}

// Func defines a function of type typ with the given locals (beyond its
// parameters); body is the concatenated instructions, to which Func appends
// the final end. It returns the function's index.
func (m *Module) Func(typ uint32, locals []ValType, body ...[]byte) uint32 {
	var b []byte
	b = wasmbin.AppendU32(b, uint32(len(locals)))
	for _, l := range locals {
		b = append(b, 0x01, byte(l)) // one group per local: simple and valid
	}
	for _, instr := range body {
		b = append(b, instr...)
	}
	return m.RawFunc(typ, append(b, 0x0B))
}

// RawFunc defines a function whose encoded body (local groups, instructions
// and final end) is given as is, for bodies Func cannot express.
func (m *Module) RawFunc(typ uint32, body []byte) uint32 {
	m.funcTypes = append(m.funcTypes, typ)
	m.bodies = append(m.bodies, body)
	return m.importedFuncs + uint32(len(m.bodies)) - 1
}

// Table adds a table of element type elem (FuncRef or ExternRef) and returns
// its index.
func (m *Module) Table(elem ValType, min, max uint32) uint32 {
	m.tables = append(m.tables, append([]byte{byte(elem)}, limits(min, max)...))
	return uint32(len(m.tables) - 1)
}

// Memory adds a memory of min pages (and max, or NoMax) and returns its index.
func (m *Module) Memory(min, max uint32) uint32 {
	m.memories = append(m.memories, limits(min, max))
	return uint32(len(m.memories) - 1)
}

// Global adds a global initialised by the constant expression init (without
// its end, which Global appends) and returns its global index.
func (m *Module) Global(t ValType, mutable bool, init ...[]byte) uint32 {
	g := []byte{byte(t), b2u(mutable)}
	for _, instr := range init {
		g = append(g, instr...)
	}
	m.globals = append(m.globals, append(g, 0x0B))
	return m.importedGlobals + uint32(len(m.globals)) - 1
}

// Export exports the item idx of the given kind under name.
func (m *Module) Export(name string, kind byte, idx uint32) {
	e := wasmbin.AppendName(nil, name)
	e = append(e, kind)
	m.exports = append(m.exports, wasmbin.AppendU32(e, idx))
}

// ExportFunc exports function fn under name.
func (m *Module) ExportFunc(name string, fn uint32) { m.Export(name, KindFunc, fn) }

// Start makes fn the module's start function, run at instantiation.
func (m *Module) Start(fn uint32) { m.start = &fn }

// Data adds an active data segment for memory 0 at the constant expression
// offset (without its end), e.g. Data(I32Const(1024), []byte("hi")).
func (m *Module) Data(offset []byte, data []byte) uint32 {
	d := append([]byte{0x00}, offset...)
	d = append(d, 0x0B)
	d = wasmbin.AppendU32(d, uint32(len(data)))
	m.datas = append(m.datas, append(d, data...))
	return uint32(len(m.datas) - 1)
}

// PassiveData adds a passive data segment (for memory.init) and a data count
// section, which instructions naming data segments need.
func (m *Module) PassiveData(data []byte) uint32 {
	d := wasmbin.AppendU32([]byte{0x01}, uint32(len(data)))
	m.datas = append(m.datas, append(d, data...))
	m.dataCount = true
	return uint32(len(m.datas) - 1)
}

// Elem adds an active element segment that puts funcs into table 0 at the
// constant expression offset (without its end).
func (m *Module) Elem(offset []byte, funcs ...uint32) {
	e := append([]byte{0x00}, offset...)
	e = append(e, 0x0B)
	e = wasmbin.AppendU32(e, uint32(len(funcs)))
	for _, f := range funcs {
		e = wasmbin.AppendU32(e, f)
	}
	m.elems = append(m.elems, e)
}

// PassiveElem adds a passive element segment of funcs (for table.init) and
// returns its index among the element segments.
func (m *Module) PassiveElem(funcs ...uint32) uint32 {
	e := wasmbin.AppendU32([]byte{0x01, 0x00}, uint32(len(funcs))) // passive, elemkind funcref
	for _, f := range funcs {
		e = wasmbin.AppendU32(e, f)
	}
	m.elems = append(m.elems, e)
	return uint32(len(m.elems) - 1)
}

// Custom adds a custom section, e.g. Custom("agenthost.manifest", json).
// Custom sections are written after all others, in the order added.
func (m *Module) Custom(name string, payload []byte) {
	m.customs = append(m.customs, wasmbin.Section{ID: wasmbin.SecCustom, Name: name, Payload: payload})
}

// Raw adds a section with the given id and payload as is. It is written
// right after the section Module builds for that id (so a second global
// section, say, follows the first), or at the end for unknown ids.
func (m *Module) Raw(id byte, payload []byte) {
	m.raw = append(m.raw, wasmbin.Section{ID: id, Payload: payload})
}

// Bytes encodes the module. Sections without entries are left out.
func (m *Module) Bytes() []byte {
	var secs []wasmbin.Section
	emitted := map[byte]bool{}
	put := func(id byte, payload []byte, present bool) {
		emitted[id] = true
		if present {
			secs = append(secs, wasmbin.Section{ID: id, Payload: payload})
		}
		for _, r := range m.raw {
			if r.ID == id {
				secs = append(secs, r)
			}
		}
	}
	add := func(id byte, entries [][]byte) { put(id, vec(entries), len(entries) > 0) }
	add(wasmbin.SecType, m.types)
	add(wasmbin.SecImport, m.imports)
	var fns [][]byte
	for _, t := range m.funcTypes {
		fns = append(fns, wasmbin.AppendU32(nil, t))
	}
	add(wasmbin.SecFunction, fns)
	add(wasmbin.SecTable, m.tables)
	add(wasmbin.SecMemory, m.memories)
	add(wasmbin.SecGlobal, m.globals)
	add(wasmbin.SecExport, m.exports)
	var start []byte
	if m.start != nil {
		start = wasmbin.AppendU32(nil, *m.start)
	}
	put(wasmbin.SecStart, start, m.start != nil)
	add(wasmbin.SecElement, m.elems)
	put(wasmbin.SecDataCount, wasmbin.AppendU32(nil, uint32(len(m.datas))), m.dataCount)
	var code [][]byte
	for _, b := range m.bodies {
		code = append(code, append(wasmbin.AppendU32(nil, uint32(len(b))), b...))
	}
	add(wasmbin.SecCode, code)
	add(wasmbin.SecData, m.datas)
	for _, r := range m.raw {
		if !emitted[r.ID] {
			secs = append(secs, r)
		}
	}
	secs = append(secs, m.customs...)
	return wasmbin.Encode(secs)
}

func vec(entries [][]byte) []byte {
	out := wasmbin.AppendU32(nil, uint32(len(entries)))
	for _, e := range entries {
		out = append(out, e...)
	}
	return out
}

func limits(min, max uint32) []byte {
	if max == NoMax {
		return wasmbin.AppendU32([]byte{0x00}, min)
	}
	return wasmbin.AppendU32(wasmbin.AppendU32([]byte{0x01}, min), max)
}

func b2u(b bool) byte {
	if b {
		return 1
	}
	return 0
}
