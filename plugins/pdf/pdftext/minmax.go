package pdftext

import "math"

// fmin and fmax are the builtin min and max of two float64s, with the same
// results (NaN if either is NaN, -0 below +0). Go compiles the builtins for
// floats on wasm to a call into the runtime (runtime.fmin64), and a call
// costs a Go guest a frame on its own stack in linear memory: in the
// per-glyph layout loops they took 4% of the plugin's time under wazero.
// These inline.
func fmin(a, b float64) float64 {
	switch {
	case a < b:
		return a
	case b < a:
		return b
	case a != b:
		return a + b // one is NaN: NaN
	case a == 0:
		return math.Float64frombits(math.Float64bits(a) | math.Float64bits(b)) // -0 if either is
	}
	return a
}

// fmax: see fmin.
func fmax(a, b float64) float64 {
	switch {
	case a > b:
		return a
	case b > a:
		return b
	case a != b:
		return a + b
	case a == 0:
		return math.Float64frombits(math.Float64bits(a) & math.Float64bits(b)) // +0 if either is
	}
	return a
}
