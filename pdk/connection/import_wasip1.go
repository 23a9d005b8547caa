//go:build wasip1

package connection

//go:wasmimport agenthost:connection request
func request(req uint64) uint64

//go:wasmimport agenthost:connection info
func info(req uint64) uint64
