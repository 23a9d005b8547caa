package interrupt

import (
	"fmt"

	"github.com/agenthost/agenthost/host/wasm/wasmbin"
)

// A module that does not import WASI's sched_yield gets the import added, so
// its checks have a host call to yield through: a module cannot opt out of
// the rewrite, and of the host's deadline, by leaving the import out. The
// import goes after the module's own function imports, so every function the
// module defines moves up by one index, and every place that names one is
// renumbered: call, return_call and ref.func in code, ref.func in global and
// element initialisers, element segments' function lists, exports, the start
// section and the function names of the name section. Data segment offsets
// are left alone: a ref.func there is invalid anyway (an offset is an i32),
// and stays so. Nothing else in the binary format names a function.

// yieldModule and yieldName are the import the checks call.
const (
	yieldModule = "wasi_snapshot_preview1"
	yieldName   = "sched_yield"
)

// fn is the rewrite's index of the original module's function i.
func (m *module) fn(i uint32) uint32 {
	if m.addYield && i >= m.importedFuncs {
		return i + 1
	}
	return i
}

// yieldIndex is the function index of sched_yield in the rewrite.
func (m *module) yieldIndex() uint32 {
	if m.addYield {
		return m.importedFuncs
	}
	return uint32(m.yield)
}

// appendIndex appends v as an unsigned LEB128 of at least width bytes: a
// renumbered index keeps the width of the original's encoding where it fits
// (a padded encoding stays padded), so renumbering changes no length but
// where an index crosses a power of 128.
func appendIndex(b []byte, v uint32, width int) []byte {
	for i := 0; ; i++ {
		c := byte(v & 0x7f)
		v >>= 7
		if v != 0 || i+1 < width {
			b = append(b, c|0x80)
			continue
		}
		return append(b, c)
	}
}

// renumberInstr appends instr, an instruction that names a function (call,
// return_call or ref.func), with the function renumbered.
func (m *module) renumberInstr(b, instr []byte) []byte {
	r := wasmbin.NewReader(instr[1:])
	f, _ := r.U32() // the walker has read it already
	return appendIndex(append(b, instr[0]), m.fn(f), r.Offset())
}

// renumberFunc reads a function index from r and appends its new number.
func (m *module) renumberFunc(r *wasmbin.Reader, out []byte) ([]byte, error) {
	start := r.Offset()
	f, err := r.U32()
	if err != nil {
		return nil, err
	}
	return appendIndex(out, m.fn(f), r.Offset()-start), nil
}

// copyU32 copies an unsigned LEB128 from r to out and returns its value.
func copyU32(r *wasmbin.Reader, out []byte, src []byte) (uint32, []byte, error) {
	start := r.Offset()
	v, err := r.U32()
	if err != nil {
		return 0, nil, err
	}
	return v, append(out, src[start:r.Offset()]...), nil
}

// renumberConstExpr copies a constant expression, which analyse has checked,
// from r, renumbering ref.func.
func (m *module) renumberConstExpr(r *wasmbin.Reader, src, out []byte) ([]byte, error) {
	for {
		start := r.Offset()
		op, err := r.Byte()
		if err != nil {
			return nil, err
		}
		switch op {
		case 0x0B:
			return append(out, op), nil
		case 0xD2:
			if out, err = m.renumberFunc(r, append(out, op)); err != nil {
				return nil, err
			}
			continue
		case 0x41:
			_, err = r.S32()
		case 0x42:
			_, err = r.S64()
		case 0x43:
			_, err = r.Bytes(4)
		case 0x44:
			_, err = r.Bytes(8)
		case 0x6A, 0x6B, 0x6C, 0x7C, 0x7D, 0x7E:
		case 0xFD:
			if _, err = r.U32(); err == nil {
				_, err = r.Bytes(16)
			}
		case 0xD0:
			_, err = r.Byte()
		case 0x23:
			_, err = r.U32()
		default:
			return nil, fmt.Errorf("%w: opcode 0x%02X in a constant expression", ErrUnsupported, op)
		}
		if err != nil {
			return nil, err
		}
		out = append(out, src[start:r.Offset()]...)
	}
}

// renumberGlobals renumbers the ref.funcs of a global section's initialisers.
func (m *module) renumberGlobals(payload []byte) ([]byte, error) {
	r := wasmbin.NewReader(payload)
	n, out, err := copyU32(r, nil, payload)
	if err != nil {
		return nil, err
	}
	for i := uint32(0); i < n; i++ {
		t, err := r.Bytes(2) // value type, mutability
		if err != nil {
			return nil, err
		}
		if out, err = m.renumberConstExpr(r, payload, append(out, t...)); err != nil {
			return nil, err
		}
	}
	return append(out, payload[r.Offset():]...), nil
}

// renumberExports renumbers the function exports of an export section.
func (m *module) renumberExports(payload []byte) ([]byte, error) {
	r := wasmbin.NewReader(payload)
	n, out, err := copyU32(r, nil, payload)
	if err != nil {
		return nil, err
	}
	for i := uint32(0); i < n; i++ {
		start := r.Offset()
		if _, err := r.Name(); err != nil {
			return nil, err
		}
		kind, err := r.Byte()
		if err != nil {
			return nil, err
		}
		out = append(out, payload[start:r.Offset()]...)
		if kind == wasmbin.ImportFunc {
			out, err = m.renumberFunc(r, out)
		} else {
			_, out, err = copyU32(r, out, payload)
		}
		if err != nil {
			return nil, err
		}
	}
	return append(out, payload[r.Offset():]...), nil
}

// renumberElements renumbers every function an element section names, in
// all eight forms of a segment.
func (m *module) renumberElements(payload []byte) ([]byte, error) {
	r := wasmbin.NewReader(payload)
	n, out, err := copyU32(r, nil, payload)
	if err != nil {
		return nil, err
	}
	for i := uint32(0); i < n; i++ {
		var flags uint32
		if flags, out, err = copyU32(r, out, payload); err != nil {
			return nil, err
		}
		if flags&2 != 0 && flags&1 == 0 { // active with an explicit table
			if _, out, err = copyU32(r, out, payload); err != nil {
				return nil, err
			}
		}
		if flags&1 == 0 { // active: the offset
			if out, err = m.renumberConstExpr(r, payload, out); err != nil {
				return nil, err
			}
		}
		if flags&3 != 0 { // elemkind or reftype
			b, err := r.Byte()
			if err != nil {
				return nil, err
			}
			out = append(out, b)
		}
		var k uint32
		if k, out, err = copyU32(r, out, payload); err != nil {
			return nil, err
		}
		for j := uint32(0); j < k; j++ {
			if flags&4 != 0 {
				out, err = m.renumberConstExpr(r, payload, out)
			} else {
				out, err = m.renumberFunc(r, out)
			}
			if err != nil {
				return nil, err
			}
		}
	}
	return append(out, payload[r.Offset():]...), nil
}

// renumberStart renumbers the start section.
func (m *module) renumberStart(payload []byte) ([]byte, error) {
	r := wasmbin.NewReader(payload)
	out, err := m.renumberFunc(r, nil)
	if err != nil {
		return nil, err
	}
	return append(out, payload[r.Offset():]...), nil
}

// renumberNames renumbers the name section's function names (subsection 1)
// and the local and label names kept per function (2 and 3). It reports
// false for a section it cannot read, which the caller keeps as it is:
// wazero refuses a malformed name section either way.
func (m *module) renumberNames(payload []byte) ([]byte, bool) {
	r := wasmbin.NewReader(payload)
	var out []byte
	for r.Len() > 0 {
		id, err := r.Byte()
		if err != nil {
			return nil, false
		}
		size, err := r.U32()
		if err != nil {
			return nil, false
		}
		sub, err := r.Bytes(int(size))
		if err != nil {
			return nil, false
		}
		if id == 1 || id == 2 || id == 3 {
			if sub, err = m.renumberNameMap(sub, id != 1); err != nil {
				return nil, false
			}
		}
		out = wasmbin.AppendU32(append(out, id), uint32(len(sub)))
		out = append(out, sub...)
	}
	return out, true
}

// renumberNameMap renumbers the function indices of a name map (or, when
// indirect, of a map from functions to name maps).
func (m *module) renumberNameMap(sub []byte, indirect bool) ([]byte, error) {
	r := wasmbin.NewReader(sub)
	n, out, err := copyU32(r, nil, sub)
	if err != nil {
		return nil, err
	}
	for i := uint32(0); i < n; i++ {
		if out, err = m.renumberFunc(r, out); err != nil {
			return nil, err
		}
		start := r.Offset()
		if !indirect {
			_, err = r.Name()
		} else {
			var k uint32
			if k, err = r.U32(); err == nil {
				for j := uint32(0); j < k && err == nil; j++ {
					if _, err = r.U32(); err == nil {
						_, err = r.Name()
					}
				}
			}
		}
		if err != nil {
			return nil, err
		}
		out = append(out, sub[start:r.Offset()]...)
	}
	if r.Len() != 0 {
		return nil, fmt.Errorf("%w: %d bytes after a name map", wasmbin.ErrMalformed, r.Len())
	}
	return out, nil
}

// appendYieldImport adds the import of sched_yield, of type typ, to an
// import section.
func appendYieldImport(payload []byte, typ uint32) ([]byte, error) {
	r := wasmbin.NewReader(payload)
	n, err := r.U32()
	if err != nil {
		return nil, err
	}
	out := wasmbin.AppendU32(nil, n+1)
	out = append(out, payload[r.Offset():]...)
	out = wasmbin.AppendName(out, yieldModule)
	out = wasmbin.AppendName(out, yieldName)
	out = append(out, wasmbin.ImportFunc)
	return wasmbin.AppendU32(out, typ), nil
}

// yieldType is sched_yield's type, () -> i32, as a type section entry.
func yieldType() []byte { return []byte{0x60, 0x00, 0x01, 0x7F} }

// addYieldTo renumbers the sections of a module that lacks sched_yield and
// adds the import (and its type, when the module has none of it; it goes
// after the types the helpers add, whose indices are fixed already).
// Instrument has rewritten the code section already.
func (m *module) addYieldTo(secs []wasmbin.Section, helperTypes int) ([]wasmbin.Section, error) {
	typ := uint32(m.yieldType)
	newType := m.yieldType < 0
	if newType {
		typ = uint32(len(m.typeParams) + helperTypes)
	}
	haveTypes, haveImports := false, false
	out := make([]wasmbin.Section, 0, len(secs)+2)
	for _, s := range secs {
		var err error
		switch s.ID {
		case wasmbin.SecType:
			haveTypes = true
			if newType {
				s.Payload, err = appendEntry(s.Payload, yieldType())
			}
		case wasmbin.SecImport:
			haveImports = true
			s.Payload, err = appendYieldImport(s.Payload, typ)
		case wasmbin.SecGlobal:
			s.Payload, err = m.renumberGlobals(s.Payload)
		case wasmbin.SecExport:
			s.Payload, err = m.renumberExports(s.Payload)
		case wasmbin.SecStart:
			s.Payload, err = m.renumberStart(s.Payload)
		case wasmbin.SecElement:
			s.Payload, err = m.renumberElements(s.Payload)
		case wasmbin.SecCustom:
			if s.Name == "name" {
				if p, ok := m.renumberNames(s.Payload); ok {
					s.Payload = p
				}
			}
		}
		if err != nil {
			return nil, fmt.Errorf("adding the sched_yield import: section %d: %w", s.ID, err)
		}
		out = append(out, s)
	}
	if !haveTypes {
		p, _ := appendEntry([]byte{0}, yieldType())
		out = insertSection(out, wasmbin.Section{ID: wasmbin.SecType, Payload: p})
	}
	if !haveImports {
		p, _ := appendYieldImport([]byte{0}, typ)
		out = insertSection(out, wasmbin.Section{ID: wasmbin.SecImport, Payload: p})
	}
	return out, nil
}

// appendEntry appends an encoded entry to a vector section.
func appendEntry(payload, entry []byte) ([]byte, error) {
	r := wasmbin.NewReader(payload)
	n, err := r.U32()
	if err != nil {
		return nil, err
	}
	out := wasmbin.AppendU32(nil, n+1)
	out = append(out, payload[r.Offset():]...)
	return append(out, entry...), nil
}
