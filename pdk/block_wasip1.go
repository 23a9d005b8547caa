//go:build wasip1

package pdk

import (
	goruntime "runtime"
	"unsafe"
)

// agenthost's block copies (docs/plugin-abi.md, module agenthost:kernel):
// one host call moves a whole kernel block, where the Extism ABI moves 8
// bytes a call. Only Invoke uses them, so a plugin that calls no agenthost
// capability does not import them (Go drops unreferenced imports) and runs
// in any Extism host.

//go:wasmimport agenthost:kernel read
func agenthostBlockRead(offset uint64, ptr, n uint32)

//go:wasmimport agenthost:kernel write
func agenthostBlockWrite(ptr, n uint32) uint64

// blockWrite copies b into a new kernel block and returns its offset.
func blockWrite(b []byte) uint64 {
	if len(b) == 0 {
		return 0
	}
	off := agenthostBlockWrite(uint32(uintptr(unsafe.Pointer(&b[0]))), uint32(len(b)))
	goruntime.KeepAlive(b)
	return off
}

// blockRead copies the kernel block at offset into Go memory and frees it.
func blockRead(off uint64) []byte {
	if off == 0 {
		return nil
	}
	n := extismLength(off)
	b := make([]byte, n)
	if n > 0 {
		agenthostBlockRead(off, uint32(uintptr(unsafe.Pointer(&b[0]))), uint32(n))
	}
	extismFree(off)
	return b
}
