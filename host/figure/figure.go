// Package figure reports benchmark figures in the one format every issue uses:
//
//	FIGURE <name> <number> <unit>
//
// Benchmarks (go test -bench, run by `make bench`) measure with their own loops,
// take medians over repeated runs, and print each figure once through Report.
package figure

import (
	"fmt"
	"io"
	"os"
	"slices"
	"sync"
	"time"
)

// Reporter prints figures to one writer. The zero value prints to os.Stdout.
type Reporter struct {
	mu sync.Mutex
	W  io.Writer
}

// Report prints one figure line.
func (r *Reporter) Report(name string, value float64, unit string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	w := r.W
	if w == nil {
		w = os.Stdout
	}
	fmt.Fprintf(w, "FIGURE %s %s %s\n", name, format(value), unit)
}

// Report prints one figure line on standard output.
func Report(name string, value float64, unit string) {
	(&Reporter{}).Report(name, value, unit)
}

func format(v float64) string {
	switch {
	case v == float64(int64(v)):
		return fmt.Sprintf("%d", int64(v))
	case v >= 100:
		return fmt.Sprintf("%.1f", v)
	case v >= 1:
		return fmt.Sprintf("%.2f", v)
	default:
		return fmt.Sprintf("%.4g", v)
	}
}

// Percentile returns the p-th percentile (0..100) of the durations, by the
// nearest-rank method. It sorts a copy.
func Percentile(d []time.Duration, p float64) time.Duration {
	if len(d) == 0 {
		return 0
	}
	s := slices.Clone(d)
	slices.Sort(s)
	i := int(float64(len(s))*p/100+0.5) - 1
	i = max(0, min(i, len(s)-1))
	return s[i]
}

// Median returns the median of xs (the mean of the middle two for even counts).
func Median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// Micros and Millis convert a duration to a float count of the unit.
func Micros(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }

// Millis converts a duration to milliseconds.
func Millis(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
