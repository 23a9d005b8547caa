package wasmasm

import (
	"encoding/binary"
	"math"

	"github.com/agenthost/agenthost/host/wasm/wasmbin"
)

// Instructions. Each helper returns the encoding of one instruction; pass
// them (or literal bytes, or Ops) to Func and Global.

// Ops returns opcodes without immediates as an instruction sequence, e.g.
// Ops(OpI32Add, OpDrop).
func Ops(ops ...byte) []byte { return ops }

// Opcodes of instructions without immediates.
const (
	OpUnreachable byte = 0x00
	OpNop         byte = 0x01
	OpElse        byte = 0x05
	OpEnd         byte = 0x0B
	OpReturn      byte = 0x0F
	OpDrop        byte = 0x1A
	OpSelect      byte = 0x1B
	OpI32Eqz      byte = 0x45
	OpI32Eq       byte = 0x46
	OpI32Ne       byte = 0x47
	OpI32LtS      byte = 0x48
	OpI32LtU      byte = 0x49
	OpI32GtS      byte = 0x4A
	OpI32GtU      byte = 0x4B
	OpI32Add      byte = 0x6A
	OpI32Sub      byte = 0x6B
	OpI32Mul      byte = 0x6C
	OpI32And      byte = 0x71
	OpI64Add      byte = 0x7C
)

// BlockType is the type of a block, loop or if: EmptyBlock, ValBlock(t) or
// TypeBlock(typ); it is encoded as a signed LEB128 of 33 bits.
type BlockType int64

// EmptyBlock is the block type of a block without parameters or results.
const EmptyBlock BlockType = -0x40

// ValBlock is the block type of a block with one result of type t.
func ValBlock(t ValType) BlockType { return BlockType(int64(t) - 0x80) }

// TypeBlock is the block type of function type typ (parameters and results).
func TypeBlock(typ uint32) BlockType { return BlockType(typ) }

// Unreachable traps.
func Unreachable() []byte { return []byte{OpUnreachable} }

// Nop does nothing.
func Nop() []byte { return []byte{OpNop} }

// Block opens a block without parameters or results.
func Block() []byte { return BlockT(EmptyBlock) }

// Loop opens a loop without parameters or results; br to it jumps back to
// its start.
func Loop() []byte { return LoopT(EmptyBlock) }

// If opens an if without parameters or results; it pops the condition.
func If() []byte { return IfT(EmptyBlock) }

// BlockT opens a block of type bt.
func BlockT(bt BlockType) []byte { return wasmbin.AppendS64([]byte{0x02}, int64(bt)) }

// LoopT opens a loop of block type bt.
func LoopT(bt BlockType) []byte { return wasmbin.AppendS64([]byte{0x03}, int64(bt)) }

// IfT opens an if of block type bt.
func IfT(bt BlockType) []byte { return wasmbin.AppendS64([]byte{0x04}, int64(bt)) }

// Else starts the else branch of an If.
func Else() []byte { return []byte{OpElse} }

// End closes a block, loop or if (Func closes the function body itself).
func End() []byte { return []byte{OpEnd} }

// Br branches to the label depth levels out (0: the innermost block).
func Br(depth uint32) []byte { return wasmbin.AppendU32([]byte{0x0C}, depth) }

// BrIf pops a condition and branches when it is not zero.
func BrIf(depth uint32) []byte { return wasmbin.AppendU32([]byte{0x0D}, depth) }

// BrTable pops an index and branches to labels[index], or to def.
func BrTable(labels []uint32, def uint32) []byte {
	b := wasmbin.AppendU32([]byte{0x0E}, uint32(len(labels)))
	for _, l := range labels {
		b = wasmbin.AppendU32(b, l)
	}
	return wasmbin.AppendU32(b, def)
}

// Return returns from the function.
func Return() []byte { return []byte{OpReturn} }

// Call calls function fn.
func Call(fn uint32) []byte { return wasmbin.AppendU32([]byte{0x10}, fn) }

// CallIndirect pops a table index and calls the function there in table
// table, which must have type typ.
func CallIndirect(typ, table uint32) []byte {
	return wasmbin.AppendU32(wasmbin.AppendU32([]byte{0x11}, typ), table)
}

// Drop pops a value.
func Drop() []byte { return []byte{OpDrop} }

// LocalGet pushes local i (parameters come first).
func LocalGet(i uint32) []byte { return wasmbin.AppendU32([]byte{0x20}, i) }

// LocalSet pops a value into local i.
func LocalSet(i uint32) []byte { return wasmbin.AppendU32([]byte{0x21}, i) }

// LocalTee stores the top of the stack into local i and keeps it.
func LocalTee(i uint32) []byte { return wasmbin.AppendU32([]byte{0x22}, i) }

// GlobalGet pushes global i.
func GlobalGet(i uint32) []byte { return wasmbin.AppendU32([]byte{0x23}, i) }

// GlobalSet pops a value into global i.
func GlobalSet(i uint32) []byte { return wasmbin.AppendU32([]byte{0x24}, i) }

// I32Load pushes the i32 at address (popped) + offset of memory 0.
func I32Load(offset uint32) []byte { return memarg(0x28, 2, offset) }

// I32Store pops a value and an address and stores the value at address +
// offset of memory 0.
func I32Store(offset uint32) []byte { return memarg(0x36, 2, offset) }

// I32Store8 stores the low byte of a popped value (see I32Store).
func I32Store8(offset uint32) []byte { return memarg(0x3A, 0, offset) }

func memarg(op byte, align, offset uint32) []byte {
	return wasmbin.AppendU32(wasmbin.AppendU32([]byte{op}, align), offset)
}

// MemorySize pushes the size of memory 0 in pages.
func MemorySize() []byte { return []byte{0x3F, 0x00} }

// MemoryGrow pops a page count, grows memory 0 and pushes the old size or -1.
func MemoryGrow() []byte { return []byte{0x40, 0x00} }

// MemoryInit pops destination, source offset and length and copies from
// passive data segment data into memory 0.
func MemoryInit(data uint32) []byte {
	return append(wasmbin.AppendU32([]byte{0xFC, 0x08}, data), 0x00)
}

// DataDrop discards passive data segment data.
func DataDrop(data uint32) []byte { return wasmbin.AppendU32([]byte{0xFC, 0x09}, data) }

// I32Const pushes v.
func I32Const(v int32) []byte { return wasmbin.AppendS64([]byte{0x41}, int64(v)) }

// I64Const pushes v.
func I64Const(v int64) []byte { return wasmbin.AppendS64([]byte{0x42}, v) }

// F32Const pushes v.
func F32Const(v float32) []byte {
	return binary.LittleEndian.AppendUint32([]byte{0x43}, math.Float32bits(v))
}

// F64Const pushes v.
func F64Const(v float64) []byte {
	return binary.LittleEndian.AppendUint64([]byte{0x44}, math.Float64bits(v))
}

// RefFunc pushes a reference to function fn.
func RefFunc(fn uint32) []byte { return wasmbin.AppendU32([]byte{0xD2}, fn) }

// RefNull pushes a null reference of type t (FuncRef or ExternRef).
func RefNull(t ValType) []byte { return []byte{0xD0, byte(t)} }

// MemoryCopy pops destination, source and length and copies within memory 0.
func MemoryCopy() []byte { return []byte{0xFC, 0x0A, 0x00, 0x00} }

// MemoryFill pops destination, byte value and length and fills memory 0.
func MemoryFill() []byte { return []byte{0xFC, 0x0B, 0x00} }

// TableInit pops destination, source offset and length and copies from
// element segment elem into table.
func TableInit(elem, table uint32) []byte {
	return wasmbin.AppendU32(wasmbin.AppendU32([]byte{0xFC, 0x0C}, elem), table)
}

// TableCopy pops destination, source and length and copies from table src
// into table dst.
func TableCopy(dst, src uint32) []byte {
	return wasmbin.AppendU32(wasmbin.AppendU32([]byte{0xFC, 0x0E}, dst), src)
}

// TableGrow pops an initial reference and a count, grows table and pushes
// the old size or -1.
func TableGrow(table uint32) []byte { return wasmbin.AppendU32([]byte{0xFC, 0x0F}, table) }

// TableSize pushes the size of table.
func TableSize(table uint32) []byte { return wasmbin.AppendU32([]byte{0xFC, 0x10}, table) }

// TableFill pops destination, a reference and length and fills table.
func TableFill(table uint32) []byte { return wasmbin.AppendU32([]byte{0xFC, 0x11}, table) }

// Repeat returns n copies of the instructions, for straight-line code.
func Repeat(n int, instrs ...[]byte) []byte {
	var one []byte
	for _, in := range instrs {
		one = append(one, in...)
	}
	out := make([]byte, 0, n*len(one))
	for range n {
		out = append(out, one...)
	}
	return out
}
