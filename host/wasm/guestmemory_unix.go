//go:build linux || darwin

package wasm

import (
	"os"

	"golang.org/x/sys/unix"
)

var pageSize = os.Getpagesize()

// reserveMemory reserves n bytes of address space, inaccessible and
// charged to nothing until committed (nil for n of 0).
func reserveMemory(n uint64) ([]byte, error) {
	if n == 0 {
		return nil, nil
	}
	return unix.Mmap(-1, 0, int(n), unix.PROT_NONE, unix.MAP_PRIVATE|unix.MAP_ANON|unix.MAP_NORESERVE)
}

// commitMemory makes part of a reservation readable and writable; its pages
// read as zeros and take memory once touched.
func commitMemory(b []byte) error {
	if len(b) == 0 {
		return nil
	}
	return unix.Mprotect(b, unix.PROT_READ|unix.PROT_WRITE)
}

// unmapMemory gives a reservation back to the system.
func unmapMemory(b []byte) error { return unix.Munmap(b) }
