//go:build wasip1

package client

//go:wasmimport agenthost:client sample
func sample(req uint64) uint64

//go:wasmimport agenthost:client elicit
func elicit(req uint64) uint64

//go:wasmimport agenthost:client log
func logMessage(req uint64) uint64

//go:wasmimport agenthost:client poll
func poll(req uint64) uint64

//go:wasmimport agenthost:client roots
func roots(req uint64) uint64
