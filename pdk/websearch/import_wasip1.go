//go:build wasip1

package websearch

//go:wasmimport agenthost:websearch search
func search(req uint64) uint64
