//go:build wasip1

package progress

//go:wasmimport agenthost:progress report
func report(req uint64) uint64
