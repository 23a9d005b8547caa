//go:build !linux && !darwin

package wasm

import (
	"errors"
	"os"
)

var pageSize = os.Getpagesize()

// reserveMemory reserves nothing here: guests run on the Go heap.
func reserveMemory(uint64) ([]byte, error) {
	return nil, errors.New("no memory reservation on this system")
}

func commitMemory([]byte) error { return nil }

func unmapMemory([]byte) error { return nil }
