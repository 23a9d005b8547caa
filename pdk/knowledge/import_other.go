//go:build !wasip1

package knowledge

func search(uint64) uint64      { panic(only) }
func index(uint64) uint64       { panic(only) }
func readObjects(uint64) uint64 { panic(only) }
func readSection(uint64) uint64 { panic(only) }
func extractItem(uint64) uint64 { panic(only) }
func folder(uint64) uint64      { panic(only) }

const only = "knowledge: only available inside a wasip1 plugin"
