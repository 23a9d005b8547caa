package procguard_test

import (
	"testing"

	"github.com/agenthost/agenthost/host/procguard"
)

// TestUndumpable: the mark is set, read back, and setting it again is fine.
// (What it hides is tested from inside a child, host/mcpclient's
// TestStdioCannotReadHost.)
func TestUndumpable(t *testing.T) {
	for range 2 {
		if err := procguard.Undumpable(); err != nil {
			t.Fatal(err)
		}
		if d, err := procguard.Dumpable(); err != nil || d {
			t.Fatalf("dumpable %v %v after Undumpable", d, err)
		}
	}
}
