package interrupt

import (
	"fmt"

	"github.com/agenthost/agenthost/host/wasm/wasmbin"
)

// Bulk instructions (memory.fill, memory.copy, memory.init and their table
// counterparts) and growth do work in proportion to an operand, up to the
// whole memory, in one instruction. wazero compiles each to native code that
// calls the Go runtime's memmove directly, outside any Go safe point, and
// nothing in it looks at the flag: 2000 fills of 128 MiB in straight-line
// code ran for 103 s past a 2 s limit, and the host's garbage collector,
// which must stop every goroutine, waited for them. So the rewrite calls a
// helper in their place that does the same in chunks of at most bulkChunk
// bytes, charging fuel in proportion to the bytes before each: the work
// between two checks is one chunk, whatever the size asked for.
//
// A helper keeps the instruction's semantics: an access out of bounds traps
// before anything is written. It runs the instruction itself whole when it
// is small or out of bounds (then it traps at once); a memory.init or
// table.init, whose segment length code cannot read, first runs it with
// length 0 at the end of the span, which traps exactly when the whole would.
// A copy between overlapping spans goes backwards when its destination lies
// above its source, as memmove does.
const (
	bulkChunk  = 64 << 10 // bytes of memory per chunk
	tableChunk = 8 << 10  // table entries per chunk (8 bytes each)
	// Fuel is charged per 64 bytes of memory or 8 table entries: about
	// what a simple instruction costs.
	memoryShift = 6
	tableShift  = 3
	// maxHelpers bounds the helpers one module gets (one per distinct
	// instruction and immediates; a data or element segment each for
	// init): a module asking for more runs in wazero's own mode.
	maxHelpers = 4096
)

// helpers are the functions the rewrite appends to a module, one per
// distinct bulk instruction (with its immediates).
type helpers struct {
	m        *module
	byInstr  map[string]uint32
	instrs   [][]byte // per helper: the instruction it stands for
	types    []uint32 // per helper: its type, an index into newTypes
	newTypes [][]byte // encoded function types to append to the type section
}

func newHelpers(m *module) *helpers { return &helpers{m: m, byInstr: map[string]uint32{}} }

// base is the function index of the first helper: the helpers follow the
// functions the module defines (and the sched_yield import the rewrite may
// add before those).
func (h *helpers) base() uint32 { return h.m.fn(h.m.funcs()) }

// replace returns the helper to call in place of instr, if it is a bulk
// instruction.
func (h *helpers) replace(op byte, instr []byte) (uint32, bool, error) {
	switch op {
	case 0x40: // memory.grow
	case 0xFC:
		sub, _ := wasmbin.NewReader(instr[1:]).U32()
		switch sub {
		case 8, 10, 11, 12, 14, 15, 17: // memory.init memory.copy memory.fill table.init table.copy table.grow table.fill
		default:
			return 0, false, nil
		}
	default:
		return 0, false, nil
	}
	if i, ok := h.byInstr[string(instr)]; ok {
		return h.base() + i, true, nil
	}
	if len(h.instrs) >= maxHelpers {
		return 0, false, fmt.Errorf("%w: over %d distinct bulk instructions", ErrUnsupported, maxHelpers)
	}
	params, results := h.signature(instr)
	t := wasmbin.AppendU32([]byte{0x60}, uint32(len(params)))
	t = append(t, params...)
	t = append(wasmbin.AppendU32(t, uint32(len(results))), results...)
	ti := -1
	for i, old := range h.newTypes {
		if string(old) == string(t) {
			ti = i
		}
	}
	if ti < 0 {
		ti = len(h.newTypes)
		h.newTypes = append(h.newTypes, t)
	}
	i := uint32(len(h.instrs))
	h.byInstr[string(instr)] = i
	h.instrs = append(h.instrs, append([]byte(nil), instr...))
	h.types = append(h.types, uint32(ti))
	return h.base() + i, true, nil
}

// immediates returns the sub-opcode of a 0xFC instruction and its index
// immediates (segment or tables).
func immediates(instr []byte) (sub uint32, a, b uint32) {
	r := wasmbin.NewReader(instr[1:])
	sub, _ = r.U32()
	a, _ = r.U32()
	b, _ = r.U32()
	return sub, a, b
}

// signature is a helper's parameters and results: the instruction's.
func (h *helpers) signature(instr []byte) (params, results []byte) {
	const i32 = 0x7F
	if instr[0] == 0x40 {
		return []byte{i32}, []byte{i32}
	}
	switch sub, a, _ := immediates(instr); sub {
	case 11: // memory.fill
		return []byte{i32, i32, i32}, nil
	case 17: // table.fill t
		return []byte{i32, h.m.tableTypes[a], i32}, nil
	case 15: // table.grow t
		return []byte{h.m.tableTypes[a], i32}, []byte{i32}
	}
	return []byte{i32, i32, i32}, nil // init and copy
}

// appendBodies adds the helpers' bodies to a rewritten code section.
func (h *helpers) appendBodies(code []byte, in *instrumentation) []byte {
	if len(h.instrs) == 0 {
		return code
	}
	r := wasmbin.NewReader(code)
	n, _ := r.U32()
	out := wasmbin.AppendU32(make([]byte, 0, len(code)+len(h.instrs)*256), n+uint32(len(h.instrs)))
	out = append(out, code[r.Offset():]...)
	for _, instr := range h.instrs {
		b := h.body(instr, in)
		out = append(wasmbin.AppendU32(out, uint32(len(b))), b...)
	}
	return out
}

// appendTypes adds the helpers' types to a type section and the helpers to
// a function section.
func (h *helpers) appendTypes(types []byte) []byte {
	r := wasmbin.NewReader(types)
	n, _ := r.U32()
	out := wasmbin.AppendU32(nil, n+uint32(len(h.newTypes)))
	out = append(out, types[r.Offset():]...)
	for _, t := range h.newTypes {
		out = append(out, t...)
	}
	return out
}

func (h *helpers) appendFunctions(funcs []byte) []byte {
	r := wasmbin.NewReader(funcs)
	n, _ := r.U32()
	out := wasmbin.AppendU32(nil, n+uint32(len(h.instrs)))
	out = append(out, funcs[r.Offset():]...)
	first := uint32(len(h.m.typeParams))
	for _, t := range h.types {
		out = wasmbin.AppendU32(out, first+t)
	}
	return out
}

// Instructions the helper bodies are made of.
func localGet(i byte) []byte  { return []byte{0x20, i} }
func localSet(i byte) []byte  { return []byte{0x21, i} }
func localTee(i byte) []byte  { return []byte{0x22, i} }
func i32Const(v int64) []byte { return wasmbin.AppendS64([]byte{0x41}, v) }

const (
	opI32Add   = 0x6A
	opI32Sub   = 0x6B
	opI32Or    = 0x72
	opI32ShrU  = 0x76
	opI32LeU   = 0x4D
	opI32GtU   = 0x4B
	opI32LtU   = 0x49
	opI64Add   = 0x7C
	opI64GtU   = 0x56
	opI64Shl   = 0x86
	opI64ExtU  = 0xAD
	opSelect   = 0x1B
	opReturn   = 0x0F
	opBrIf     = 0x0D
	opEnd      = 0x0B
	opLoopVoid = 0x03
)

// body is the helper standing for instr (see bulkChunk).
func (h *helpers) body(instr []byte, in *instrumentation) []byte {
	charge := func(cost ...[]byte) []byte { // cost computes an i32
		c := wasmbin.AppendU32([]byte{0x23}, in.fuel)
		for _, x := range cost {
			c = append(c, x...)
		}
		return append(c, checkTail(in.flag, in.fuel, in.yield)...)
	}
	cat := func(parts ...[]byte) []byte {
		var b []byte
		for _, p := range parts {
			b = append(b, p...)
		}
		return b
	}
	b := []byte{0}        // no locals beyond the parameters
	if instr[0] == 0x40 { // memory.grow n: a page costs a chunk's worth
		b = append(b, charge(localGet(0), i32Const(65536), localGet(0), i32Const(65536), []byte{opI32LtU, opSelect},
			i32Const(10), []byte{0x74}, i32Const(1), []byte{opI32Add})...) // min(n, 65536) << 10 + 1
		return append(b, cat(localGet(0), instr, []byte{opEnd})...)
	}
	sub, a, c := immediates(instr)
	memLimit := []byte{0x3F, 0x00, opI64ExtU, 0x42, 16, opI64Shl} // memory.size as i64 bytes
	tableLimit := func(t uint32) []byte {
		return append(wasmbin.AppendU32([]byte{0xFC, 0x10}, t), opI64ExtU) // table.size t as i64
	}
	chunk, shift := int64(bulkChunk), byte(memoryShift)
	var dstLimit, srcLimit []byte // nil srcLimit: a segment, whose length code cannot read
	switch sub {
	case 15: // table.grow t: (ref, n)
		b = append(b, charge(localGet(1), i32Const(tableShift), []byte{opI32ShrU}, i32Const(1), []byte{opI32Add})...)
		return append(b, cat(localGet(0), localGet(1), instr, []byte{opEnd})...)
	case 11: // memory.fill
		dstLimit = memLimit
	case 10: // memory.copy
		dstLimit, srcLimit = memLimit, memLimit
	case 8: // memory.init seg
		dstLimit = memLimit
	case 17: // table.fill t
		dstLimit, chunk, shift = tableLimit(a), tableChunk, tableShift
	case 14: // table.copy dst src
		dstLimit, srcLimit, chunk, shift = tableLimit(a), tableLimit(c), tableChunk, tableShift
	case 12: // table.init seg t
		dstLimit, chunk, shift = tableLimit(c), tableChunk, tableShift
	}
	fill := sub == 11 || sub == 17
	// Parameters: d (0), v or s (1), n (2).
	costOf := func(n []byte) []byte {
		return cat(n, i32Const(int64(shift)), []byte{opI32ShrU}, i32Const(1), []byte{opI32Add})
	}
	chargeN := charge(costOf(localGet(2)))
	chargeChunk := charge(i32Const(chunk>>shift + 1))
	past := func(x byte, limit []byte) []byte { // x + n > limit, in 64 bits
		return cat(localGet(x), []byte{opI64ExtU}, localGet(2), []byte{opI64ExtU, opI64Add}, limit, []byte{opI64GtU})
	}
	whole := cat(localGet(0), localGet(1), localGet(2), instr)
	// Small, or out of bounds: the instruction itself (which then traps).
	cond := cat(localGet(2), i32Const(chunk), []byte{opI32LeU}, past(0, dstLimit), []byte{opI32Or})
	switch {
	case srcLimit != nil:
		cond = cat(cond, past(1, srcLimit), []byte{opI32Or})
	case !fill:
		cond = cat(cond, past(1, []byte{0x42, 0xFF, 0xFF, 0xFF, 0xFF, 0x0F}), []byte{opI32Or}) // s + n > 2^32-1
	}
	b = append(b, cond...)
	b = append(b, 0x04, 0x40) // if
	b = append(b, chargeN...)
	b = append(b, whole...)
	b = append(b, opReturn, opEnd)
	if !fill && srcLimit == nil {
		// The segment's end: traps as the whole would if s + n is past it.
		b = append(b, cat(localGet(0), localGet(2), []byte{opI32Add}, localGet(1), localGet(2), []byte{opI32Add}, i32Const(0), instr)...)
	}
	advance := func(x byte) []byte { return cat(localGet(x), i32Const(chunk), []byte{opI32Add}, localSet(x)) }
	forward := cat([]byte{opLoopVoid, 0x40}, chargeChunk, localGet(0), localGet(1), i32Const(chunk), instr,
		advance(0), func() []byte {
			if fill {
				return nil
			}
			return advance(1)
		}(),
		localGet(2), i32Const(chunk), []byte{opI32Sub}, localTee(2), i32Const(chunk), []byte{opI32GtU, opBrIf, 0, opEnd})
	if sub == 10 || sub == 14 {
		// Destination above the source: backwards, the last chunk first.
		backward := cat([]byte{opLoopVoid, 0x40},
			localGet(2), i32Const(chunk), []byte{opI32Sub}, localSet(2), chargeChunk,
			localGet(0), localGet(2), []byte{opI32Add}, localGet(1), localGet(2), []byte{opI32Add}, i32Const(chunk), instr,
			localGet(2), i32Const(chunk), []byte{opI32GtU, opBrIf, 0, opEnd})
		b = append(b, cat(localGet(0), localGet(1), []byte{opI32GtU, 0x04, 0x40}, backward, []byte{0x05}, forward, []byte{opEnd})...)
	} else {
		b = append(b, forward...)
	}
	// What is left, at most a chunk.
	b = append(b, chargeN...)
	b = append(b, whole...)
	return append(b, opEnd)
}
