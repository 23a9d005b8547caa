//go:build wasip1

package model

//go:wasmimport agenthost:model info
func info(req uint64) uint64

//go:wasmimport agenthost:model count
func count(req uint64) uint64

//go:wasmimport agenthost:model complete
func complete(req uint64) uint64

//go:wasmimport agenthost:model ocr
func ocr(req uint64) uint64
