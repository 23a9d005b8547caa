//go:build !linux

package procguard

import (
	"errors"
	"fmt"
	"runtime"
)

// Undumpable is Linux's only: elsewhere it fails, so that callers that need
// the guarantee (stdio MCP servers) refuse to go without it.
func Undumpable() error {
	return fmt.Errorf("procguard: hiding the process from its user's other processes is not implemented on %s: %w", runtime.GOOS, errors.ErrUnsupported)
}

// Dumpable is true where Undumpable is not implemented.
func Dumpable() (bool, error) { return true, nil }
