package main

import (
	"runtime/debug"
	"testing"
)

// TestApplyMemoryLimit: a process running plugins gets DefaultMemoryLimit
// as its soft memory limit, unless GOMEMLIMIT sets one (which the Go
// runtime applied at start and is left as it is).
func TestApplyMemoryLimit(t *testing.T) {
	was := debug.SetMemoryLimit(-1)
	t.Cleanup(func() { debug.SetMemoryLimit(was) })

	debug.SetMemoryLimit(3 << 30) // as GOMEMLIMIT=3GiB would have
	if got := applyMemoryLimit(func(k string) string { return map[string]string{"GOMEMLIMIT": "3GiB"}[k] }); got != 3<<30 || debug.SetMemoryLimit(-1) != 3<<30 {
		t.Fatalf("with GOMEMLIMIT set: applied %d, in force %d; want the operator's 3 GiB kept", got, debug.SetMemoryLimit(-1))
	}
	if got := applyMemoryLimit(func(string) string { return "" }); got != DefaultMemoryLimit || debug.SetMemoryLimit(-1) != DefaultMemoryLimit {
		t.Fatalf("without GOMEMLIMIT: applied %d, in force %d; want %d", got, debug.SetMemoryLimit(-1), DefaultMemoryLimit)
	}
}
