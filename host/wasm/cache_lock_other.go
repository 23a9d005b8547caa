//go:build !unix

package wasm

// lockFile is a no-op where flock is missing: there, one process at a time
// may use a compile cache directory.
func lockFile(path string, exclusive bool) (func(), error) { return func() {}, nil }
