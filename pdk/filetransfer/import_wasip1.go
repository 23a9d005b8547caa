//go:build wasip1

package filetransfer

//go:wasmimport agenthost:filetransfer list
func list(req uint64) uint64

//go:wasmimport agenthost:filetransfer stat
func stat(req uint64) uint64

//go:wasmimport agenthost:filetransfer read
func read(req uint64) uint64

//go:wasmimport agenthost:filetransfer write
func write(req uint64) uint64

//go:wasmimport agenthost:filetransfer mkdir
func mkdir(req uint64) uint64
