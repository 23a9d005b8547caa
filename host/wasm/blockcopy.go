package wasm

import (
	"context"

	"github.com/tetratelabs/wazero/api"
)

// KernelModule is the import module of the agenthost kernel extension: whole
// kernel blocks copied between kernel memory and the guest's memory in one
// host call (docs/plugin-abi.md), where the Extism ABI moves 8 bytes a call.
// Every plugin may import it, like the Extism kernel; the PDK does so only on
// the capability path, so a plugin that uses no agenthost capability imports
// nothing but the standard Extism ABI.
const KernelModule = CapabilityPrefix + "kernel"

// blockFunctions are KernelModule's functions:
//
//	read(offset i64, ptr i32, len i32)  copies the live block at offset, len
//	                                   being its whole length, to guest [ptr, ptr+len)
//	write(ptr i32, len i32) -> i64      allocates a block of len bytes holding
//	                                   guest [ptr, ptr+len) and returns its offset (0 for len 0)
//
// Anything out of range — an offset that is not a live block of this call,
// a length other than the block's, a guest range past the guest's memory —
// traps the call; nothing is copied partly.
func blockFunctions() []HostFunction {
	return []HostFunction{
		{
			Module: KernelModule, Name: "read",
			Params: []api.ValueType{i64, i32, i32},
			Func: func(_ context.Context, c *Call, s []uint64) {
				off, ptr, n := s[0], uint32(s[1]), uint32(s[2])
				b, err := c.k.block(off)
				if err != nil {
					panic(c.Fail(CodeTrap, "%s.read: %v", KernelModule, err))
				}
				if uint64(n) != uint64(len(b)) {
					panic(c.Fail(CodeTrap, "%s.read: length %d is not the length %d of the block at offset %d", KernelModule, n, len(b), off))
				}
				if len(b) == 0 {
					return
				}
				if c.mem == nil || !c.mem.Write(ptr, b) {
					panic(c.Fail(CodeTrap, "%s.read: destination [%d,+%d) is outside the guest's memory (%d bytes)", KernelModule, ptr, n, memSize(c.mem)))
				}
			},
		},
		{
			Module: KernelModule, Name: "write",
			Params:  []api.ValueType{i32, i32},
			Results: []api.ValueType{i64},
			Func: func(_ context.Context, c *Call, s []uint64) {
				ptr, n := uint32(s[0]), uint32(s[1])
				if n == 0 {
					s[0] = 0
					return
				}
				var src []byte
				ok := false
				if c.mem != nil {
					src, ok = c.mem.Read(ptr, n)
				}
				if !ok {
					panic(c.Fail(CodeTrap, "%s.write: source [%d,+%d) is outside the guest's memory (%d bytes)", KernelModule, ptr, n, memSize(c.mem)))
				}
				off, err := c.k.write(src)
				if err != nil {
					panic(c.Fail(CodeOutOfMemory, "%s.write: %v", KernelModule, err))
				}
				s[0] = off
			},
		},
	}
}

func memSize(m api.Memory) uint32 {
	if m == nil {
		return 0
	}
	return m.Size()
}
