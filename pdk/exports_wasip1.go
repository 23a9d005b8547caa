//go:build wasip1

//lint:file-ignore U1000 reached from //go:wasmexport functions, which the host calls and staticcheck cannot see

package pdk

// describe returns the plugin's tools as JSON (docs/plugin-abi.md).
//
//go:wasmexport describe
func describeExport() int32 {
	rt.writeOutput(rt.describe())
	return 0
}

// call runs one tool: input TOOL "\n" ARGS, output a result frame.
//
//go:wasmexport call
func callExport() int32 {
	rt.writeOutput(rt.dispatch(rt.readInput())...)
	return 0
}
