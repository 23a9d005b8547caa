//go:build wasip1

package files

//go:wasmimport agenthost:files read
func read(req uint64) uint64

//go:wasmimport agenthost:files write
func write(req uint64) uint64
