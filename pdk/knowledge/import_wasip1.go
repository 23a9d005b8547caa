//go:build wasip1

package knowledge

//go:wasmimport agenthost:knowledge search
func search(req uint64) uint64

//go:wasmimport agenthost:knowledge index
func index(req uint64) uint64

//go:wasmimport agenthost:knowledge read_objects
func readObjects(req uint64) uint64

//go:wasmimport agenthost:knowledge read_section
func readSection(req uint64) uint64

//go:wasmimport agenthost:knowledge extract_item
func extractItem(req uint64) uint64

//go:wasmimport agenthost:knowledge folder
func folder(req uint64) uint64
