//go:build wasip1

package images

//go:wasmimport agenthost:images generate
func generate(req uint64) uint64
