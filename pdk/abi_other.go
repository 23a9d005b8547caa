//go:build !wasip1

package pdk

// Outside a Wasm plugin there is no Extism host: these exist so the package
// builds and its pure logic (schemas, frames) is testable natively.

func notInPlugin() { panic("pdk: the Extism ABI is only available inside a wasip1 plugin") }

func extismInputLength() uint64        { notInPlugin(); return 0 }
func extismInputLoadU64(uint64) uint64 { notInPlugin(); return 0 }
func extismInputLoadU8(uint64) uint32  { notInPlugin(); return 0 }
func extismAlloc(uint64) uint64        { notInPlugin(); return 0 }
func extismFree(uint64)                { notInPlugin() }
func extismLength(uint64) uint64       { notInPlugin(); return 0 }
func extismLoadU64(uint64) uint64      { notInPlugin(); return 0 }
func extismLoadU8(uint64) uint32       { notInPlugin(); return 0 }
func extismStoreU64(uint64, uint64)    { notInPlugin() }
func extismStoreU8(uint64, uint32)     { notInPlugin() }
func extismOutputSet(uint64, uint64)   { notInPlugin() }
func extismErrorSet(uint64)            { notInPlugin() }
func extismConfigGet(uint64) uint64    { notInPlugin(); return 0 }
func extismVarGet(uint64) uint64       { notInPlugin(); return 0 }
func extismVarSet(uint64, uint64)      { notInPlugin() }
func extismLogDebug(uint64)            { notInPlugin() }
func extismLogInfo(uint64)             { notInPlugin() }
func extismLogWarn(uint64)             { notInPlugin() }
func extismLogError(uint64)            { notInPlugin() }
