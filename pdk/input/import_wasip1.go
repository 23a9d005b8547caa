//go:build wasip1

package input

import "unsafe"

//go:wasmimport agenthost:input size
func hostSize() int64

//go:wasmimport agenthost:input read_at
func hostReadAt(off int64, ptr uint32, n uint32) uint32

func size() int64 { return hostSize() }

// readAt asks the host to copy input bytes at off into p's memory.
func readAt(off int64, p []byte) int {
	if len(p) == 0 {
		return 0
	}
	return int(hostReadAt(off, uint32(uintptr(unsafe.Pointer(&p[0]))), uint32(len(p))))
}
