// Command guest is a test module for package interrupt: a WASI reactor with
// an endless loop, a loop-free recursion and a compute-heavy function.
package main

import "crypto/sha256"

var sink uint64

//go:wasmexport spin
func spin() {
	for {
		sink++
	}
}

//go:wasmexport recurse
func recurse(n int32) int32 {
	if n == 0 {
		return 0
	}
	return 1 + recurse(n-1)
}

// compute runs a sha256 chain of n rounds and returns the first 4 bytes.
//
//go:wasmexport compute
func compute(n int32) int32 {
	h := sha256.Sum256([]byte("agenthost"))
	for i := int32(0); i < n; i++ {
		h = sha256.Sum256(h[:])
	}
	return int32(h[0])<<24 | int32(h[1])<<16 | int32(h[2])<<8 | int32(h[3])
}

func main() {}
