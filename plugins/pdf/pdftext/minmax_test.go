package pdftext

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestMinMaxAsBuiltins: fmin and fmax give the builtins' results bit for
// bit, for the special values and for random ones.
func TestMinMaxAsBuiltins(t *testing.T) {
	special := []float64{0, math.Copysign(0, -1), 1, -1, 0.5, math.Inf(1), math.Inf(-1), math.NaN(), math.MaxFloat64, math.SmallestNonzeroFloat64, -math.SmallestNonzeroFloat64}
	r := rand.New(rand.NewPCG(1, 2))
	vals := append([]float64(nil), special...)
	for range 200 {
		vals = append(vals, r.NormFloat64()*100, float64(r.IntN(5)))
	}
	same := func(a, b float64) bool {
		return math.Float64bits(a) == math.Float64bits(b) || math.IsNaN(a) && math.IsNaN(b)
	}
	for _, a := range vals {
		for _, b := range vals {
			if got, want := fmin(a, b), min(a, b); !same(got, want) {
				t.Fatalf("fmin(%v, %v) = %v, min = %v", a, b, got, want)
			}
			if got, want := fmax(a, b), max(a, b); !same(got, want) {
				t.Fatalf("fmax(%v, %v) = %v, max = %v", a, b, got, want)
			}
		}
	}
}
