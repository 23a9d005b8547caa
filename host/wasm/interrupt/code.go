package interrupt

import (
	"errors"
	"fmt"

	"github.com/agenthost/agenthost/host/wasm/wasmbin"
)

// maxLocals bounds the declared locals of one function, maxTotalLocals those
// of all. wazero accepts up to 2^32 per function and allocates for every
// one (some 24 bytes each: a 30-byte module declaring 2^28 locals cost it
// 6 GB and 48 s), so these bounds are what keeps a tiny module from
// exhausting the host's memory. Go plugins declare about 4 locals per
// function and 12,000 in all.
const (
	maxLocals      = 50000
	maxTotalLocals = 1 << 22
)

// instrumentCode rewrites every function body of a code section, checking
// that each names only what the module defines (see ErrInvalid), and returns
// it with the bodies of the helpers the rewrite calls appended. A body with
// an instruction it does not decode makes it return ErrUnsupported, but
// only after checking the other bodies: an invalid one among them must still
// be refused. It names functions as the rewrite numbers them (m.fn): the
// checks call sched_yield, added when the module does not import it.
func instrumentCode(payload []byte, m *module, flag, fuel uint32) ([]byte, *helpers, error) {
	yield := m.yieldIndex()
	for {
		in := &instrumentation{flag: flag, fuel: fuel, yield: yield, helpers: newHelpers(m)}
		out, err := rewriteCode(payload, m, walker{m: m, in: in})
		if errors.Is(err, errImportRef) {
			// A ref.func in code named an import only after earlier
			// bodies were rewritten with call_indirect as a guest call.
			m.importRef = true
			continue
		}
		if err != nil {
			return nil, nil, err
		}
		return in.helpers.appendBodies(out, in), in.helpers, nil
	}
}

// errImportRef restarts a rewrite that met a ref.func naming an import.
var errImportRef = errors.New("interrupt: a ref.func names an imported function")

// rewriteCode is instrumentCode with a given walker (tests insert other code
// at other places).
func rewriteCode(payload []byte, m *module, w walker) ([]byte, error) {
	var unsupported error

	r := wasmbin.NewReader(payload)
	n, err := r.U32()
	if err != nil {
		return nil, err
	}
	if n != m.definedFuncs {
		return nil, invalid("the code section has %d bodies for %d functions", n, m.definedFuncs)
	}
	out := make([]byte, 0, len(payload)+len(payload)/8)
	out = wasmbin.AppendU32(out, n)
	body := make([]byte, 0, 4096)
	for i := uint32(0); i < n; i++ {
		w.fn = m.importedFuncs + i
		size, err := r.U32()
		if err != nil {
			return nil, fmt.Errorf("function %d: %w", w.fn, err)
		}
		code, err := r.Bytes(int(size))
		if err != nil {
			return nil, fmt.Errorf("function %d: %w", w.fn, err)
		}
		body, err = w.instrumentBody(body[:0], code)
		switch {
		case errors.Is(err, ErrInvalid):
			return nil, err // names the function already
		case errors.Is(err, errImportRef):
			return nil, err
		case errors.Is(err, ErrUnsupported):
			if unsupported == nil {
				unsupported = fmt.Errorf("function %d: %w", w.fn, err)
			}
			continue
		case err != nil:
			return nil, fmt.Errorf("function %d: %w", w.fn, err)
		}
		out = wasmbin.AppendU32(out, uint32(len(body)))
		out = append(out, body...)
	}
	if r.Len() != 0 {
		return nil, fmt.Errorf("%w: %d trailing bytes in code section", wasmbin.ErrMalformed, r.Len())
	}
	if unsupported != nil {
		return nil, unsupported
	}
	return out, nil
}

// maxRun bounds the weight of the code a guest runs between two checks
// (see the package documentation): an ordinary instruction weighs 1, a
// host call maxRun, so every host call has a check before it.
const maxRun = 256

// checkTail follows the cost of a check: it subtracts it from the fuel and,
// once the fuel runs out, refills it, yields and traps if the flag is set.
func checkTail(flag, fuel, yield uint32) []byte {
	getFuel := wasmbin.AppendU32([]byte{0x23}, fuel)
	setFuel := wasmbin.AppendU32([]byte{0x24}, fuel)
	c := []byte{0x6B} // i32.sub
	c = append(c, setFuel...)
	c = append(c, getFuel...)
	c = append(c, 0x41, 0x00, 0x48) // i32.const 0; i32.lt_s
	c = append(c, 0x04, 0x40)       // if
	c = append(c, 0x41)             //   i32.const YieldEvery
	c = wasmbin.AppendS64(c, YieldEvery)
	c = append(c, setFuel...)                                                    //   global.set $fuel
	c = append(wasmbin.AppendU32(append(c, 0x10), yield), 0x1A)                  //   call $sched_yield; drop
	c = append(wasmbin.AppendU32(append(c, 0x23), flag), 0x04, 0x40, 0x00, 0x0B) // if $flag: unreachable
	return append(c, 0x0B)                                                       // end
}

// instrumentation is what the walker inserts: checks on the two globals and
// calls to helpers in place of bulk instructions.
type instrumentation struct {
	flag, fuel, yield uint32
	helpers           *helpers
	tail              []byte // checkTail, made once
}

// frame is an open block of the body being rewritten, with the weight of
// the code that reaches its end or, for a loop, its header.
type frame struct {
	loop   bool
	reach  int // largest weight since a check on a path to its end (for a loop: its header); -1 for none yet
	start  int // for an if before its else: the weight at the if, which falls through without an else; else -1
	header int // for a loop: the index of its header check in the body's patches
}

// patch is a check whose cost is only known later: a loop header's or a
// function entry's.
type patch struct{ pos, cost int }

// walker decodes the instructions of one function body at a time and checks
// every index they name against the module's index spaces. Its decoding must
// be at least as strict as wazero's: where the two could read an instruction
// with different lengths, a check inserted by the rewrite could land inside
// what wazero takes for an immediate.
type walker struct {
	m      *module
	fn     uint32 // index of the function being walked, for messages
	locals uint32 // parameters and declared locals
	total  uint64 // declared locals of the functions walked so far
	depth  uint32 // open blocks, counting the function's own
	// in is what to insert; nil only for every's tests.
	in *instrumentation
	// every, when set, is inserted after every instruction but the final
	// end: a test compares wazero's verdicts on a module with nops there
	// and without, which differ where the two decoders disagree.
	every []byte

	frames  []frame
	patches []patch
	scratch []byte
}

// invalid reports an index the module does not define in the current function.
func (w *walker) invalid(instr string, idx uint32, what string, have uint32) error {
	return fmt.Errorf("%w: function %d: %s %d names a %s the module does not define (it has %d)", ErrInvalid, w.fn, instr, idx, what, have)
}

// instrumentBody copies one function body, inserting checks (see the package
// documentation) and calling helpers for bulk instructions.
//
// The weight since the last check is counted along every path: a block's
// end takes the largest weight of the paths that reach it (falling through
// or branching), a loop's header the largest of its entry and its back
// edges; code after an unconditional branch is unreachable and weighs
// nothing. Before an instruction that would take the weight past maxRun a
// check is inserted, charging the weight so far. A check at a loop header or
// the entry charges what reaches it, known only at the loop's end or the
// body's, and its cost is patched in then; the entry's (or, in a body that
// opens into a loop, the first header's) also charges the heaviest way out
// of the function, which no check follows.
func (w *walker) instrumentBody(out, code []byte) ([]byte, error) {
	r := wasmbin.NewReader(code)
	groups, err := r.U32()
	if err != nil {
		return nil, err
	}
	locals := uint64(w.m.typeParams[w.m.funcTypes[w.fn]])
	for g := uint32(0); g < groups; g++ {
		c, err := r.U32()
		if err != nil {
			return nil, err
		}
		if locals += uint64(c); locals > maxLocals {
			return nil, fmt.Errorf("%w: function %d: %d locals (at most %d are accepted)", ErrInvalid, w.fn, locals, maxLocals)
		}
		if w.total += uint64(c); w.total > maxTotalLocals {
			return nil, fmt.Errorf("%w: function %d: over %d locals in all (at most %d are accepted)", ErrInvalid, w.fn, w.total, maxTotalLocals)
		}
		t, err := r.Byte()
		if err != nil {
			return nil, err
		}
		if err := valType(t); err != nil {
			return nil, err
		}
	}
	w.locals = uint32(locals)
	in := w.in
	body := w.scratch[:0]
	body = append(body, code[:r.Offset()]...)
	w.frames = append(w.frames[:0], frame{reach: -1, start: -1})
	w.patches = w.patches[:0]
	exitPatch := -1 // the check that charges the way out
	if in != nil && !loopFirst(code[r.Offset():]) {
		body = w.pendingCheck(body)
		exitPatch = 0
	}
	weight := 0 // since the last check; -1 when unreachable
	w.depth = 1 // the function body is a block closed by the final end
	for w.depth > 0 {
		start := r.Offset()
		op, err := r.Byte()
		if err != nil {
			return nil, err
		}
		cost := 1
		switch op {
		case 0x02, 0x03, 0x04: // block, loop, if
			w.depth++
			if err := w.blockType(r); err != nil {
				return nil, err
			}
		case 0x0B: // end
			w.depth--
		default:
			if err := w.immediates(r, op); err != nil {
				return nil, err
			}
		}
		instr := code[start:r.Offset()]
		if in == nil {
			body = append(body, instr...)
			if w.every != nil && w.depth > 0 {
				body = append(body, w.every...)
			}
			continue
		}
		if op == 0xD2 && !w.m.importRef {
			if f, _ := wasmbin.NewReader(instr[1:]).U32(); f < w.m.importedFuncs {
				return nil, errImportRef
			}
		}
		heavy := w.heavy(op, instr)
		if heavy {
			cost = maxRun
		}
		if op == 0x0B || op == 0x05 || op == 0x03 {
			cost = 0 // joins: their weight is that of what reaches them
		}
		if weight > 0 && weight+cost > maxRun {
			body = w.check(body, weight)
			weight = 0
		}
		if h, ok, err := in.helpers.replace(op, instr); err != nil {
			return nil, err
		} else if ok {
			body = wasmbin.AppendU32(append(body, 0x10), h) // call $helper
		} else if w.m.addYield && (op == 0x10 || op == 0x12 || op == 0xD2) {
			body = w.m.renumberInstr(body, instr) // call, return_call, ref.func
		} else {
			body = append(body, instr...)
		}
		if weight >= 0 {
			weight += cost
		}
		switch op {
		case 0x02: // block
			w.frames = append(w.frames, frame{reach: -1, start: -1})
		case 0x04: // if
			w.frames = append(w.frames, frame{reach: -1, start: weight})
		case 0x03: // loop: its header check charges its entry and back edges
			f := frame{loop: true, reach: weight, header: len(w.patches)}
			if exitPatch < 0 {
				exitPatch = len(w.patches)
			}
			body = w.pendingCheck(body)
			w.frames = append(w.frames, f)
			weight = 0
		case 0x05: // else
			f := &w.frames[len(w.frames)-1]
			f.reach = max(f.reach, weight)
			weight, f.start = f.start, -1
		case 0x0B: // end
			f := w.frames[len(w.frames)-1]
			w.frames = w.frames[:len(w.frames)-1]
			if f.loop {
				w.patches[f.header].cost = max(w.patches[f.header].cost, f.reach)
				break // falls through with the weight of the body's end
			}
			weight = max(weight, f.reach, f.start)
			if len(w.frames) == 0 && exitPatch >= 0 {
				w.patches[exitPatch].cost = max(w.patches[exitPatch].cost, weight)
			}
		case 0x0C: // br
			w.branch(instr, weight)
			weight = -1
		case 0x0D: // br_if
			w.branch(instr, weight)
		case 0x0E: // br_table
			w.branch(instr, weight)
			weight = -1
		case 0x0F, 0x12, 0x13: // return, return_call, return_call_indirect
			if exitPatch >= 0 && weight >= 0 {
				w.patches[exitPatch].cost = max(w.patches[exitPatch].cost, weight)
			}
			weight = -1
		case 0x00: // unreachable: traps, nothing follows
			weight = -1
		}
	}
	if r.Len() != 0 {
		return nil, fmt.Errorf("%w: %d bytes after the end of a function body", wasmbin.ErrMalformed, r.Len())
	}
	w.scratch = body
	if in == nil {
		return append(out, body...), nil
	}
	// Splice in the costs of the checks that waited for them.
	prev := 0
	for _, p := range w.patches {
		out = append(out, body[prev:p.pos]...)
		out = wasmbin.AppendS64(out, int64(max(p.cost, 1)))
		prev = p.pos
	}
	return append(out, body[prev:]...), nil
}

// check appends the code inserted at loop headers, function entries and
// within straight-line code (see the package documentation); it charges
// cost units of fuel.
func (w *walker) check(body []byte, cost int) []byte {
	in := w.in
	body = append(wasmbin.AppendU32(append(body, 0x23), in.fuel), 0x41) // global.get $fuel; i32.const
	return append(wasmbin.AppendS64(body, int64(cost)), w.tail()...)
}

// pendingCheck appends a check whose cost is patched in at the end of the
// body.
func (w *walker) pendingCheck(body []byte) []byte {
	in := w.in
	body = append(wasmbin.AppendU32(append(body, 0x23), in.fuel), 0x41) // global.get $fuel; i32.const
	w.patches = append(w.patches, patch{pos: len(body)})
	return append(body, w.tail()...)
}

// tail is checkTail, made once.
func (w *walker) tail() []byte {
	in := w.in
	if in.tail == nil {
		in.tail = checkTail(in.flag, in.fuel, in.yield)
	}
	return in.tail
}

// branch records the weight a br, br_if or br_table (whose labels the walker
// has checked) carries to its targets.
func (w *walker) branch(instr []byte, weight int) {
	if weight < 0 {
		return
	}
	r := wasmbin.NewReader(instr[1:])
	n := uint32(1)
	if instr[0] == 0x0E {
		n, _ = r.U32()
		n++
	}
	for i := uint32(0); i < n; i++ {
		l, _ := r.U32()
		f := &w.frames[len(w.frames)-1-int(l)]
		f.reach = max(f.reach, weight)
	}
}

// heavy reports whether an instruction may take long whatever its weight: a
// call to an import is a host call (random_get fills a gigabyte), and so is
// call_indirect when a table may hold an import.
func (w *walker) heavy(op byte, instr []byte) bool {
	switch op {
	case 0x10, 0x12: // call, return_call
		f, _ := wasmbin.NewReader(instr[1:]).U32()
		return f < w.m.importedFuncs
	case 0x11, 0x13: // call_indirect, return_call_indirect
		return w.m.importRef
	}
	return false
}

// loopFirst reports whether a function body (its instructions) reaches a
// loop header before it can branch, call or trap: when it opens with
// straight-line code of blocks, constants and local and global accesses
// and then a loop, the loop's check runs at every entry, so the entry's own
// check would only repeat it. Go compiles every function with jumps that
// way (its blocks are dispatched by a br_table in one outer loop), and half
// a call's checks, each a possible call that makes wazero reload what it
// keeps in registers, cost Go guests some 10%. Anything it does not
// recognise keeps the entry check.
func loopFirst(code []byte) bool {
	r := wasmbin.NewReader(code)
	for {
		op, err := r.Byte()
		if err != nil {
			return false
		}
		switch op {
		case 0x03: // loop
			return true
		case 0x01: // nop
		case 0x02: // block
			if _, err := r.S33(); err != nil {
				return false
			}
		case 0x20, 0x21, 0x22, 0x23, 0x24: // local.get/set/tee, global.get/set
			if _, err := r.U32(); err != nil {
				return false
			}
		case 0x41: // i32.const
			if _, err := r.S32(); err != nil {
				return false
			}
		case 0x42: // i64.const
			if _, err := r.S64(); err != nil {
				return false
			}
		default:
			return false
		}
	}
}

// blockType reads the type of a block, loop or if. It accepts only the
// types that take one signed LEB128: wazero reads a reference type (0x63,
// 0x64) with a heap type after it, and a decoder that did not would take
// those bytes for instructions, and wazero's next instructions for
// immediates (TestInstrumentDecodesLikeWazero).
func (w *walker) blockType(r *wasmbin.Reader) error {
	bt, err := r.S33()
	if err != nil {
		return err
	}
	switch {
	case bt >= 0:
		if bt >= int64(len(w.m.typeParams)) {
			return w.invalid("block type", uint32(bt), "type", uint32(len(w.m.typeParams)))
		}
	case bt == -0x40: // empty
	case bt >= -5 || bt == -16 || bt == -17: // i32 i64 f32 f64 v128 funcref externref
	default:
		return fmt.Errorf("%w: block type 0x%02X", ErrUnsupported, byte(bt&0x7F))
	}
	return nil
}

// index reads an index immediate and checks it is below have.
func (w *walker) index(r *wasmbin.Reader, instr, what string, have uint32) error {
	i, err := r.U32()
	if err != nil {
		return err
	}
	if i >= have {
		return w.invalid(instr, i, what, have)
	}
	return nil
}

func (w *walker) label(r *wasmbin.Reader, instr string) error {
	return w.index(r, instr, "label", w.depth)
}

// memory checks that memory 0 exists and reads a memory index byte, which
// wazero requires to be a single zero byte.
func (w *walker) memory(r *wasmbin.Reader, instr string) error {
	b, err := r.Byte()
	if err != nil {
		return err
	}
	if b != 0 || w.m.memories == 0 {
		return w.invalid(instr, uint32(b), "memory", w.m.memories)
	}
	return nil
}

// immediates checks and consumes the immediates of every instruction except
// the block-structured ones handled by the caller.
func (w *walker) immediates(r *wasmbin.Reader, op byte) error {
	m := w.m
	switch {
	case op == 0x00 || op == 0x01 || op == 0x05 || op == 0x0F || op == 0x1A || op == 0x1B || op == 0xD1:
		return nil // unreachable nop else return drop select ref.is_null
	case op == 0x0C:
		return w.label(r, "br")
	case op == 0x0D:
		return w.label(r, "br_if")
	case op == 0x10:
		return w.index(r, "call", "function", m.funcs())
	case op == 0x12:
		return w.index(r, "return_call", "function", m.funcs())
	case op == 0xD2:
		return w.index(r, "ref.func", "function", m.funcs())
	case op == 0x0E: // br_table
		n, err := r.U32()
		if err != nil {
			return err
		}
		if int(n) > r.Len() {
			return fmt.Errorf("%w: br_table of %d labels", wasmbin.ErrMalformed, n)
		}
		for i := uint32(0); i <= n; i++ {
			if err := w.label(r, "br_table"); err != nil {
				return err
			}
		}
		return nil
	case op == 0x11 || op == 0x13: // call_indirect return_call_indirect
		if err := w.index(r, "call_indirect", "type", uint32(len(m.typeParams))); err != nil {
			return err
		}
		return w.index(r, "call_indirect", "table", m.tables)
	case op == 0x1C: // select t*: one value type, as wazero reads it
		n, err := r.U32()
		if err != nil {
			return err
		}
		if n != 1 {
			return fmt.Errorf("%w: function %d: select with %d types", ErrInvalid, w.fn, n)
		}
		t, err := r.Byte()
		if err != nil {
			return err
		}
		return valType(t)
	case op == 0x20:
		return w.index(r, "local.get", "local", w.locals)
	case op == 0x21:
		return w.index(r, "local.set", "local", w.locals)
	case op == 0x22:
		return w.index(r, "local.tee", "local", w.locals)
	case op == 0x23:
		return w.index(r, "global.get", "global", m.globals)
	case op == 0x24:
		return w.index(r, "global.set", "global", m.globals)
	case op == 0x25:
		return w.index(r, "table.get", "table", m.tables)
	case op == 0x26:
		return w.index(r, "table.set", "table", m.tables)
	case op >= 0x28 && op <= 0x3E: // loads and stores: memarg
		align, err := r.U32()
		if err != nil {
			return err
		}
		if align&0x40 != 0 {
			return fmt.Errorf("%w: multi-memory memarg", ErrUnsupported)
		}
		if m.memories == 0 {
			return w.invalid(fmt.Sprintf("opcode 0x%02X on memory", op), 0, "memory", 0)
		}
		_, err = r.U32() // offset: 32 bits, as wazero reads it
		return err
	case op == 0x3F:
		return w.memory(r, "memory.size")
	case op == 0x40:
		return w.memory(r, "memory.grow")
	case op == 0x41:
		_, err := r.S32()
		return err
	case op == 0x42:
		_, err := r.S64()
		return err
	case op == 0x43:
		_, err := r.Bytes(4)
		return err
	case op == 0x44:
		_, err := r.Bytes(8)
		return err
	case op >= 0x45 && op <= 0xC4: // numeric and sign extension: no immediates
		return nil
	case op == 0xD0: // ref.null t
		t, err := r.Byte()
		if err != nil {
			return err
		}
		if t != 0x70 && t != 0x6F {
			return fmt.Errorf("%w: ref.null of type 0x%02X", ErrUnsupported, t)
		}
		return nil
	case op == 0xFC:
		return w.prefixed(r)
	}
	return fmt.Errorf("%w: opcode 0x%02X (%s)", ErrUnsupported, op, proposal(op))
}

// proposal names what an opcode the walker does not decode belongs to, for
// the operator who reads why a plugin was refused.
//
// SIMD stays undecoded on purpose: wazero (v1.12) reads the opcode after
// 0xFD as one byte where the format has a LEB128, so from 0x80 on the two
// readings differ in length, and a check inserted where the spec ends an
// instruction could land in what wazero takes for the next one's immediate.
func proposal(op byte) string {
	switch op {
	case 0xFD:
		return "SIMD instructions"
	case 0xFE:
		return "threads: atomic instructions"
	case 0x06, 0x07, 0x08, 0x09, 0x0A, 0x18, 0x19, 0x1F:
		return "exception handling"
	case 0x14, 0x15, 0xD3, 0xD4, 0xD5, 0xD6:
		return "typed function references"
	case 0xFB:
		return "garbage collection"
	}
	return "an instruction this host does not know"
}

// prefixed checks the 0xFC instructions: saturating truncation, bulk memory
// and tables.
func (w *walker) prefixed(r *wasmbin.Reader) error {
	m := w.m
	sub, err := r.U32()
	if err != nil {
		return err
	}
	datas := m.datas
	if !m.hasDataCount {
		datas = 0 // instructions naming data segments need the data count section
	}
	switch sub {
	case 0, 1, 2, 3, 4, 5, 6, 7: // saturating truncation
		return nil
	case 8:
		if err := w.index(r, "memory.init", "data segment", datas); err != nil {
			return err
		}
		return w.memory(r, "memory.init")
	case 9:
		return w.index(r, "data.drop", "data segment", datas)
	case 10:
		if err := w.memory(r, "memory.copy"); err != nil {
			return err
		}
		return w.memory(r, "memory.copy")
	case 11:
		return w.memory(r, "memory.fill")
	case 12:
		if err := w.index(r, "table.init", "element segment", m.elems); err != nil {
			return err
		}
		return w.index(r, "table.init", "table", m.tables)
	case 13:
		return w.index(r, "elem.drop", "element segment", m.elems)
	case 14:
		if err := w.index(r, "table.copy", "table", m.tables); err != nil {
			return err
		}
		return w.index(r, "table.copy", "table", m.tables)
	case 15:
		return w.index(r, "table.grow", "table", m.tables)
	case 16:
		return w.index(r, "table.size", "table", m.tables)
	case 17:
		return w.index(r, "table.fill", "table", m.tables)
	}
	return fmt.Errorf("%w: instruction 0xFC %d", ErrUnsupported, sub)
}
