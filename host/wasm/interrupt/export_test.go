package interrupt

import (
	"bytes"
	"fmt"

	"github.com/agenthost/agenthost/host/wasm/wasmbin"
)

// CheckTail is how every check Instrument inserts ends (after its cost),
// for tests that take an instrumented module apart.
func CheckTail(flag, fuel, yield uint32) []byte { return checkTail(flag, fuel, yield) }

// MaxRun is the most weight of code between two checks.
const MaxRun = maxRun

// NopAfterEveryInstruction returns module with a nop after every instruction
// as the rewriter decodes them (and no check), after the rewriter's checks.
func NopAfterEveryInstruction(module []byte) ([]byte, error) {
	secs, err := wasmbin.Parse(module)
	if err != nil {
		return nil, err
	}
	m, err := analyse(secs)
	if err != nil {
		return nil, err
	}
	for i, s := range secs {
		if s.ID == wasmbin.SecCode {
			if secs[i].Payload, err = rewriteCode(s.Payload, m, walker{m: m, every: []byte{0x01}}); err != nil {
				return nil, err
			}
		}
	}
	return wasmbin.Encode(secs), nil
}

// Uninstrument takes the rewrite out of the code of an instrumented module
// whose original defined defined functions: it returns their bodies with
// every check removed and every call of a helper replaced by the
// instruction the helper stands for, decoding instruction by instruction.
// When the rewrite added the sched_yield import (addedYield), the functions
// it names are numbered back as the original had them.
func Uninstrument(out []byte, defined uint32, addedYield bool) ([][]byte, error) {
	secs, err := wasmbin.Parse(out)
	if err != nil {
		return nil, err
	}
	var noExports []wasmbin.Section // the rewrite's own exports are refused in input
	for _, s := range secs {
		if s.ID != wasmbin.SecExport {
			noExports = append(noExports, s)
		}
	}
	m, err := analyse(noExports)
	if err != nil {
		return nil, err
	}
	fuel := m.globals - 1
	flag := fuel - 1
	if m.yield < 0 {
		return nil, fmt.Errorf("no sched_yield import")
	}
	tail := checkTail(flag, fuel, uint32(m.yield))
	getFuel := wasmbin.AppendU32([]byte{0x23}, fuel)
	var code []byte
	for _, s := range secs {
		if s.ID == wasmbin.SecCode {
			code = s.Payload
		}
	}
	if code == nil {
		return nil, nil
	}
	r := wasmbin.NewReader(code)
	n, err := r.U32()
	if err != nil {
		return nil, err
	}
	var bodies [][]byte
	for i := uint32(0); i < n; i++ {
		size, _ := r.U32()
		b, err := r.Bytes(int(size))
		if err != nil {
			return nil, err
		}
		bodies = append(bodies, b)
	}
	if n < defined {
		return nil, fmt.Errorf("%d bodies, %d defined", n, defined)
	}
	base := m.importedFuncs + defined
	// A helper's last instruction is the one it stands for.
	var helperInstr [][]byte
	for i := defined; i < n; i++ {
		w := &walker{m: m, fn: m.importedFuncs + i}
		var last []byte
		if _, err := w.decode(bodies[i], func(instr []byte) bool {
			if instr[0] != 0x0B || w.depth > 0 {
				last = instr
			}
			return false
		}); err != nil {
			return nil, fmt.Errorf("helper %d: %w", i, err)
		}
		helperInstr = append(helperInstr, last)
	}
	var res [][]byte
	for i := uint32(0); i < defined; i++ {
		w := &walker{m: m, fn: m.importedFuncs + i}
		var orig []byte
		prefix, err := w.decode(bodies[i], func(instr []byte) bool {
			if bytes.HasPrefix(instr, getFuel) {
				return true // the start of a check: skipped by decode
			}
			if instr[0] == 0x10 {
				if f, _ := wasmbin.NewReader(instr[1:]).U32(); f >= base {
					orig = append(orig, helperInstr[f-base]...)
					return false
				}
			}
			if addedYield && (instr[0] == 0x10 || instr[0] == 0x12 || instr[0] == 0xD2) {
				r := wasmbin.NewReader(instr[1:])
				if f, _ := r.U32(); f > uint32(m.yield) {
					// The rewrite kept a padded width; where the index
					// grew a byte, the original's was canonical.
					width := r.Offset()
					if len(wasmbin.AppendU32(nil, f)) == width {
						width = 0
					}
					orig = appendIndex(append(orig, instr[0]), f-1, width)
					return false
				}
			}
			orig = append(orig, instr...)
			return false
		}, tail...)
		if err != nil {
			return nil, fmt.Errorf("function %d: %w", i, err)
		}
		res = append(res, append(append([]byte(nil), bodies[i][:prefix]...), orig...))
	}
	return res, nil
}

// decode walks a body's instructions, calling visit with each; when visit
// returns true the instruction starts a check (global.get $fuel; i32.const
// cost) and what must follow it, tail, is skipped too. It returns the length
// of the locals' declarations.
func (w *walker) decode(code []byte, visit func(instr []byte) bool, tail ...byte) (int, error) {
	r := wasmbin.NewReader(code)
	groups, err := r.U32()
	if err != nil {
		return 0, err
	}
	locals := w.m.typeParams[w.m.funcTypes[w.fn]]
	for g := uint32(0); g < groups; g++ {
		c, _ := r.U32()
		locals += c
		if _, err := r.Byte(); err != nil {
			return 0, err
		}
	}
	w.locals = locals
	prefix := r.Offset()
	w.depth = 1
	for w.depth > 0 {
		start := r.Offset()
		op, err := r.Byte()
		if err != nil {
			return 0, err
		}
		switch op {
		case 0x02, 0x03, 0x04:
			w.depth++
			err = w.blockType(r)
		case 0x0B:
			w.depth--
		default:
			err = w.immediates(r, op)
		}
		if err != nil {
			return 0, err
		}
		if visit(code[start:r.Offset()]) {
			if b, err := r.Byte(); err != nil || b != 0x41 {
				return 0, fmt.Errorf("offset %d: a check without its cost", start)
			}
			if _, err := r.S32(); err != nil {
				return 0, err
			}
			rest, err := r.Bytes(len(tail))
			if err != nil || !bytes.Equal(rest, tail) {
				return 0, fmt.Errorf("offset %d: a check with another tail", start)
			}
		}
	}
	if r.Len() != 0 {
		return 0, fmt.Errorf("%d bytes after the body", r.Len())
	}
	return prefix, nil
}
