//go:build wasip1

package output

import "unsafe"

//go:wasmimport agenthost:output begin
func begin(req uint64) uint64

//go:wasmimport agenthost:output write
func hostWrite(ptr uint32, n uint32) uint32

//go:wasmimport agenthost:output end
func end(req uint64) uint64

//go:wasmimport agenthost:output fail
func fail(req uint64) uint64

// write asks the host to copy p from the plugin's memory into the open file.
func write(p []byte) int {
	if len(p) == 0 {
		return 0
	}
	return int(hostWrite(uint32(uintptr(unsafe.Pointer(&p[0]))), uint32(len(p))))
}
