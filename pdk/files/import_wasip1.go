//go:build wasip1

package files

//go:wasmimport agenthost:files read
func read(req uint64) uint64

//go:wasmimport agenthost:files write
func write(req uint64) uint64

//go:wasmimport agenthost:files list
func list(req uint64) uint64

//go:wasmimport agenthost:files info
func info(req uint64) uint64

//go:wasmimport agenthost:files set_content
func setContent(req uint64) uint64

//go:wasmimport agenthost:files move
func move(req uint64) uint64

//go:wasmimport agenthost:files tag
func tag(req uint64) uint64

//go:wasmimport agenthost:files propose
func propose(req uint64) uint64
