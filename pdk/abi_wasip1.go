//go:build wasip1

//lint:file-ignore U1000 reached from //go:wasmexport functions, which the host calls and staticcheck cannot see

package pdk

// The Extism guest ABI (module extism:host/env). Offsets address the host's
// kernel memory, not ours; bytes move in and out through these calls.

//go:wasmimport extism:host/env input_length
func extismInputLength() uint64

//go:wasmimport extism:host/env input_load_u64
func extismInputLoadU64(offset uint64) uint64

//go:wasmimport extism:host/env input_load_u8
func extismInputLoadU8(offset uint64) uint32

//go:wasmimport extism:host/env alloc
func extismAlloc(n uint64) uint64

//go:wasmimport extism:host/env free
func extismFree(offset uint64)

//go:wasmimport extism:host/env length
func extismLength(offset uint64) uint64

//go:wasmimport extism:host/env load_u64
func extismLoadU64(offset uint64) uint64

//go:wasmimport extism:host/env load_u8
func extismLoadU8(offset uint64) uint32

//go:wasmimport extism:host/env store_u64
func extismStoreU64(offset uint64, v uint64)

//go:wasmimport extism:host/env store_u8
func extismStoreU8(offset uint64, v uint32)

//go:wasmimport extism:host/env output_set
func extismOutputSet(offset, n uint64)

//go:wasmimport extism:host/env error_set
func extismErrorSet(offset uint64)

//go:wasmimport extism:host/env config_get
func extismConfigGet(offset uint64) uint64

//go:wasmimport extism:host/env var_get
func extismVarGet(offset uint64) uint64

//go:wasmimport extism:host/env var_set
func extismVarSet(name, value uint64)

//go:wasmimport extism:host/env log_debug
func extismLogDebug(offset uint64)

//go:wasmimport extism:host/env log_info
func extismLogInfo(offset uint64)

//go:wasmimport extism:host/env log_warn
func extismLogWarn(offset uint64)

//go:wasmimport extism:host/env log_error
func extismLogError(offset uint64)
