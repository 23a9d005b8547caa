//go:build wasip1

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
