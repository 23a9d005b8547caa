package interrupt

import (
	"errors"
	"fmt"
	"strings"

	"github.com/agenthost/agenthost/host/wasm/wasmbin"
)

// ErrInvalid is returned for a module that is not valid WebAssembly in a way
// the rewrite could hide: its code or constant expressions name an index
// (global, function, type, table, memory, local, label, data or element
// segment) the module does not define, it already exports a name in the
// host's reserved "agenthost." namespace, or it is absurdly large. Such a
// module must be refused, not run in a fallback mode: the rewrite appends the
// interrupt globals at the first indices the module does not define, so a
// module naming them would become valid and could clear the flag or pin the
// fuel.
var ErrInvalid = errors.New("invalid wasm module")

// ReservedExportPrefix starts every export name the host adds; a module may
// not export such a name itself.
const ReservedExportPrefix = "agenthost."

// Bounds of a sane module. Real plugins stay far below them (a Go plugin has
// a few thousand functions and a handful of globals); they keep a hostile
// count from costing memory before the bytes behind it are even read.
const (
	maxTypes     = 1 << 20
	maxFunctions = 1 << 20
	maxGlobals   = 1 << 16
	maxTables    = 1 << 10
	maxSegments  = 1 << 20 // element and data segments, each
)

// module is what the rewriter knows of the original module's index spaces,
// imports first in each.
type module struct {
	typeParams     []uint32 // parameter count per type
	funcTypes      []uint32 // type per function
	importedFuncs  uint32
	importedGlobal uint32
	globals        uint32
	tables         uint32
	tableTypes     []byte // element type per table (0x70 funcref, 0x6F externref)
	memories       uint32
	elems          uint32
	datas          uint32
	hasDataCount   bool
	definedFuncs   uint32 // entries of the function section
	yield          int    // function index of wasi_snapshot_preview1.sched_yield, or -1
	yieldType      int    // the first type () -> i32, or -1
	// addYield is set when the rewrite adds the sched_yield import, which
	// renumbers the functions the module defines (yield.go).
	addYield bool
	// importRef is set when an element segment or a ref.func names an
	// imported function: a table may then hold one, and call_indirect
	// may be a host call.
	importRef bool
}

func invalid(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrInvalid, fmt.Sprintf(format, args...))
}

// analyse checks every section but the code section (which instrumentCode
// checks while it rewrites) and gathers the index spaces.
func analyse(secs []wasmbin.Section) (*module, error) {
	m := &module{yield: -1, yieldType: -1}
	last := -1
	var yieldType uint32
	var types []funcType
	for _, s := range secs {
		if s.ID == wasmbin.SecCustom {
			continue
		}
		r := rank(s.ID)
		if r < 0 {
			return nil, fmt.Errorf("%w: section id %d", ErrUnsupported, s.ID)
		}
		if r <= last {
			return nil, invalid("section %d is repeated or out of order", s.ID)
		}
		last = r
		rd := wasmbin.NewReader(s.Payload)
		var err error
		switch s.ID {
		case wasmbin.SecType:
			types, err = readTypes(rd)
			for i, t := range types {
				m.typeParams = append(m.typeParams, t.params)
				if t.isYield && m.yieldType < 0 {
					m.yieldType = i
				}
			}
		case wasmbin.SecImport:
			err = m.readImports(rd, len(types))
			if err == nil && m.yield >= 0 {
				yieldType = m.funcTypes[m.yield]
			}
		case wasmbin.SecFunction:
			err = m.readFunctions(rd)
		case wasmbin.SecTable:
			err = m.readTables(rd)
		case wasmbin.SecMemory:
			var n uint32
			if n, err = count(rd, "memories", 1<<10); err == nil {
				for i := uint32(0); i < n && err == nil; i++ {
					err = readLimits(rd)
				}
				m.memories += n
			}
		case wasmbin.SecGlobal:
			err = m.readGlobals(rd)
		case wasmbin.SecExport:
			err = m.readExports(rd)
		case wasmbin.SecStart:
			var f uint32
			if f, err = rd.U32(); err == nil && f >= m.funcs() {
				err = invalid("the start function %d is not defined (the module has %d functions)", f, m.funcs())
			}
		case wasmbin.SecElement:
			err = m.readElements(rd)
		case wasmbin.SecDataCount:
			m.datas, err = rd.U32()
			m.hasDataCount = true
		case wasmbin.SecCode:
			var n uint32
			if n, err = rd.U32(); err == nil && n != m.definedFuncs {
				err = invalid("the code section has %d bodies for %d functions", n, m.definedFuncs)
			}
			if err != nil {
				return nil, fmt.Errorf("section %d: %w", s.ID, err)
			}
			continue // the bodies are checked as they are rewritten
		case wasmbin.SecData:
			err = m.readData(rd)
		}
		if err != nil {
			return nil, fmt.Errorf("section %d: %w", s.ID, err)
		}
		if rd.Len() != 0 {
			return nil, fmt.Errorf("%w: section %d: %d trailing bytes", wasmbin.ErrMalformed, s.ID, rd.Len())
		}
	}
	if m.memories > 1 {
		return nil, fmt.Errorf("%w: %d memories (multi-memory)", ErrUnsupported, m.memories)
	}
	if m.definedFuncs > 0 && !hasSection(secs, wasmbin.SecCode) {
		return nil, invalid("%d functions declared but no code section", m.definedFuncs)
	}
	if m.yield >= 0 && (int(yieldType) >= len(types) || !types[yieldType].isYield) {
		return nil, invalid("imports wasi_snapshot_preview1.sched_yield with a type other than () -> i32")
	}
	return m, nil
}

func hasSection(secs []wasmbin.Section, id byte) bool {
	for _, s := range secs {
		if s.ID == id {
			return true
		}
	}
	return false
}

func (m *module) funcs() uint32 { return uint32(len(m.funcTypes)) }

// count reads a vector's length and refuses more than max entries or more
// entries than bytes left (every entry takes at least one).
func count(r *wasmbin.Reader, what string, max uint32) (uint32, error) {
	n, err := r.U32()
	if err != nil {
		return 0, err
	}
	if n > max {
		return 0, invalid("%d %s (at most %d are accepted)", n, what, max)
	}
	if int(n) > r.Len() {
		return 0, fmt.Errorf("%w: %d %s in %d bytes", wasmbin.ErrMalformed, n, what, r.Len())
	}
	return n, nil
}

type funcType struct {
	params  uint32
	isYield bool // () -> i32, the type of sched_yield
}

func readTypes(r *wasmbin.Reader) ([]funcType, error) {
	n, err := count(r, "types", maxTypes)
	if err != nil {
		return nil, err
	}
	out := make([]funcType, n)
	for i := range out {
		form, err := r.Byte()
		if err != nil {
			return nil, err
		}
		if form != 0x60 {
			return nil, fmt.Errorf("%w: type form 0x%02X (GC types)", ErrUnsupported, form)
		}
		params, _, err := readValTypes(r)
		if err != nil {
			return nil, err
		}
		results, rt, err := readValTypes(r)
		if err != nil {
			return nil, err
		}
		out[i] = funcType{params: params, isYield: params == 0 && results == 1 && rt[0] == 0x7F}
	}
	return out, nil
}

// readValTypes reads a vector of value types.
func readValTypes(r *wasmbin.Reader) (uint32, []byte, error) {
	n, err := r.U32()
	if err != nil {
		return 0, nil, err
	}
	p, err := r.Bytes(int(n))
	if err != nil {
		return 0, nil, err
	}
	for _, t := range p {
		if err := valType(t); err != nil {
			return 0, nil, err
		}
	}
	return n, p, nil
}

func valType(t byte) error {
	switch t {
	case 0x7F, 0x7E, 0x7D, 0x7C, 0x7B, 0x70, 0x6F:
		return nil
	}
	return fmt.Errorf("%w: value type 0x%02X", ErrUnsupported, t)
}

func readLimits(r *wasmbin.Reader) error {
	flag, err := r.Byte()
	if err != nil {
		return err
	}
	if flag > 1 {
		return fmt.Errorf("%w: limits flag 0x%02X (shared or 64-bit)", ErrUnsupported, flag)
	}
	if _, err := r.U32(); err != nil {
		return err
	}
	if flag == 1 {
		_, err = r.U32()
	}
	return err
}

func readRefType(r *wasmbin.Reader) (byte, error) {
	t, err := r.Byte()
	if err != nil {
		return 0, err
	}
	if t != 0x70 && t != 0x6F {
		return 0, fmt.Errorf("%w: reference type 0x%02X", ErrUnsupported, t)
	}
	return t, nil
}

func (m *module) readImports(r *wasmbin.Reader, types int) error {
	n, err := count(r, "imports", maxFunctions)
	if err != nil {
		return err
	}
	for i := uint32(0); i < n; i++ {
		mod, err := r.Name()
		if err != nil {
			return err
		}
		name, err := r.Name()
		if err != nil {
			return err
		}
		kind, err := r.Byte()
		if err != nil {
			return err
		}
		switch kind {
		case wasmbin.ImportFunc:
			t, err := r.U32()
			if err != nil {
				return err
			}
			if int64(t) >= int64(types) {
				return invalid("import %s.%s has type %d, which the module does not define (it has %d)", mod, name, t, types)
			}
			if mod == "wasi_snapshot_preview1" && name == "sched_yield" {
				m.yield = len(m.funcTypes)
			}
			m.funcTypes = append(m.funcTypes, t)
			m.importedFuncs++
		case wasmbin.ImportTable:
			t, err := readRefType(r)
			if err != nil {
				return err
			}
			if err := readLimits(r); err != nil {
				return err
			}
			m.tables++
			m.tableTypes = append(m.tableTypes, t)
		case wasmbin.ImportMemory:
			if err := readLimits(r); err != nil {
				return err
			}
			m.memories++
		case wasmbin.ImportGlobal:
			if err := m.readGlobalType(r); err != nil {
				return err
			}
			m.importedGlobal++
			m.globals++
		default:
			return fmt.Errorf("%w: import %s.%s of kind %d", ErrUnsupported, mod, name, kind)
		}
	}
	return m.checkCounts()
}

// checkCounts refuses index spaces beyond the sane bounds.
func (m *module) checkCounts() error {
	switch {
	case m.funcs() > maxFunctions:
		return invalid("%d functions (at most %d are accepted)", m.funcs(), maxFunctions)
	case m.globals > maxGlobals:
		return invalid("%d globals (at most %d are accepted)", m.globals, maxGlobals)
	case m.tables > maxTables:
		return invalid("%d tables (at most %d are accepted)", m.tables, maxTables)
	}
	return nil
}

func (m *module) readGlobalType(r *wasmbin.Reader) error {
	t, err := r.Byte()
	if err != nil {
		return err
	}
	if err := valType(t); err != nil {
		return err
	}
	mut, err := r.Byte()
	if err != nil {
		return err
	}
	if mut > 1 {
		return fmt.Errorf("%w: global mutability 0x%02X", wasmbin.ErrMalformed, mut)
	}
	return nil
}

func (m *module) readFunctions(r *wasmbin.Reader) error {
	n, err := count(r, "functions", maxFunctions)
	if err != nil {
		return err
	}
	types := uint32(len(m.typeParams))
	for i := uint32(0); i < n; i++ {
		t, err := r.U32()
		if err != nil {
			return err
		}
		if t >= types {
			return invalid("function %d has type %d, which the module does not define (it has %d)", m.funcs(), t, types)
		}
		m.funcTypes = append(m.funcTypes, t)
	}
	m.definedFuncs = n
	return m.checkCounts()
}

func (m *module) readTables(r *wasmbin.Reader) error {
	n, err := count(r, "tables", maxTables)
	if err != nil {
		return err
	}
	for i := uint32(0); i < n; i++ {
		// A table with an initialiser (0x40 0x00) belongs to the typed
		// function references proposal.
		t, err := readRefType(r)
		if err != nil {
			return err
		}
		if err := readLimits(r); err != nil {
			return err
		}
		m.tableTypes = append(m.tableTypes, t)
	}
	m.tables += n
	return m.checkCounts()
}

func (m *module) readGlobals(r *wasmbin.Reader) error {
	n, err := count(r, "globals", maxGlobals)
	if err != nil {
		return err
	}
	for i := uint32(0); i < n; i++ {
		if err := m.readGlobalType(r); err != nil {
			return err
		}
		if err := m.constExpr(r, "global", m.globals+i); err != nil {
			return err
		}
	}
	m.globals += n
	return m.checkCounts()
}

// constExpr checks a constant expression up to its end. Like wazero, it lets
// global.get name imported globals only.
func (m *module) constExpr(r *wasmbin.Reader, what string, idx uint32) error {
	for {
		op, err := r.Byte()
		if err != nil {
			return err
		}
		switch op {
		case 0x0B:
			return nil
		case 0x41:
			_, err = r.S32()
		case 0x42:
			_, err = r.S64()
		case 0x43:
			_, err = r.Bytes(4)
		case 0x44:
			_, err = r.Bytes(8)
		case 0x6A, 0x6B, 0x6C, 0x7C, 0x7D, 0x7E: // extended constants: i32/i64 add sub mul
		case 0xFD: // v128.const, the only vector instruction of a constant expression
			var sub uint32
			if sub, err = r.U32(); err == nil {
				if sub != 12 {
					return fmt.Errorf("%w: instruction 0xFD %d in the initialiser of %s %d", ErrUnsupported, sub, what, idx)
				}
				_, err = r.Bytes(16)
			}
		case 0xD0:
			_, err = readRefType(r)
		case 0x23:
			var g uint32
			if g, err = r.U32(); err == nil && g >= m.importedGlobal {
				return invalid("the initialiser of %s %d reads global %d, which is not an imported global (the module imports %d)", what, idx, g, m.importedGlobal)
			}
		case 0xD2:
			var f uint32
			if f, err = r.U32(); err == nil && f >= m.funcs() {
				return invalid("the initialiser of %s %d names function %d, which the module does not define (it has %d)", what, idx, f, m.funcs())
			}
			if err == nil && f < m.importedFuncs {
				m.importRef = true
			}
		default:
			return fmt.Errorf("%w: opcode 0x%02X in the initialiser of %s %d", ErrUnsupported, op, what, idx)
		}
		if err != nil {
			return err
		}
	}
}

func (m *module) readExports(r *wasmbin.Reader) error {
	n, err := count(r, "exports", maxFunctions)
	if err != nil {
		return err
	}
	for i := uint32(0); i < n; i++ {
		name, err := r.Name()
		if err != nil {
			return err
		}
		if strings.HasPrefix(name, ReservedExportPrefix) {
			return invalid("export %q uses the host's reserved prefix %q", name, ReservedExportPrefix)
		}
		kind, err := r.Byte()
		if err != nil {
			return err
		}
		idx, err := r.U32()
		if err != nil {
			return err
		}
		var have uint32
		var what string
		switch kind {
		case wasmbin.ImportFunc:
			have, what = m.funcs(), "function"
		case wasmbin.ImportTable:
			have, what = m.tables, "table"
		case wasmbin.ImportMemory:
			have, what = m.memories, "memory"
		case wasmbin.ImportGlobal:
			have, what = m.globals, "global"
		default:
			return fmt.Errorf("%w: export %q of kind %d", ErrUnsupported, name, kind)
		}
		if idx >= have {
			return invalid("export %q names %s %d, which the module does not define (it has %d)", name, what, idx, have)
		}
	}
	return nil
}

func (m *module) readElements(r *wasmbin.Reader) error {
	n, err := count(r, "element segments", maxSegments)
	if err != nil {
		return err
	}
	for i := uint32(0); i < n; i++ {
		flags, err := r.U32()
		if err != nil {
			return err
		}
		if flags > 7 {
			return fmt.Errorf("%w: element segment %d has flags %d", wasmbin.ErrMalformed, i, flags)
		}
		table := uint32(0)
		if flags&2 != 0 && flags&1 == 0 { // active with an explicit table
			if table, err = r.U32(); err != nil {
				return err
			}
		}
		if flags&1 == 0 { // active: offset into a table
			if table >= m.tables {
				return invalid("element segment %d names table %d, which the module does not define (it has %d)", i, table, m.tables)
			}
			if err := m.constExpr(r, "element segment", i); err != nil {
				return err
			}
		}
		if flags&3 != 0 { // elemkind or reftype
			if flags&4 == 0 {
				if kind, err := r.Byte(); err != nil {
					return err
				} else if kind != 0 {
					return fmt.Errorf("%w: element kind 0x%02X", wasmbin.ErrMalformed, kind)
				}
			} else if _, err := readRefType(r); err != nil {
				return err
			}
		}
		k, err := count(r, "elements", 1<<27)
		if err != nil {
			return err
		}
		for j := uint32(0); j < k; j++ {
			if flags&4 != 0 {
				if err := m.constExpr(r, "element segment", i); err != nil {
					return err
				}
				continue
			}
			f, err := r.U32()
			if err != nil {
				return err
			}
			if f >= m.funcs() {
				return invalid("element segment %d names function %d, which the module does not define (it has %d)", i, f, m.funcs())
			}
			m.importRef = m.importRef || f < m.importedFuncs
		}
	}
	m.elems = n
	return nil
}

func (m *module) readData(r *wasmbin.Reader) error {
	n, err := count(r, "data segments", maxSegments)
	if err != nil {
		return err
	}
	if m.hasDataCount && n != m.datas {
		return invalid("%d data segments but a data count of %d", n, m.datas)
	}
	for i := uint32(0); i < n; i++ {
		flags, err := r.U32()
		if err != nil {
			return err
		}
		switch flags {
		case 0, 2:
			mem := uint32(0)
			if flags == 2 {
				if mem, err = r.U32(); err != nil {
					return err
				}
			}
			if mem >= m.memories {
				return invalid("data segment %d names memory %d, which the module does not define (it has %d)", i, mem, m.memories)
			}
			if err := m.constExpr(r, "data segment", i); err != nil {
				return err
			}
		case 1:
		default:
			return fmt.Errorf("%w: data segment %d has flags %d", wasmbin.ErrMalformed, i, flags)
		}
		size, err := r.U32()
		if err != nil {
			return err
		}
		if _, err := r.Bytes(int(size)); err != nil {
			return err
		}
	}
	m.datas = n
	return nil
}
