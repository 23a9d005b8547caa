//go:build wasip1

package sqlquery

//go:wasmimport agenthost:sqlquery query
func query(req uint64) uint64
