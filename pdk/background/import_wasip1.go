//go:build wasip1

package background

//go:wasmimport agenthost:background start
func start(req uint64) uint64

//go:wasmimport agenthost:background status
func status(req uint64) uint64
