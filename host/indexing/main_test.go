package indexing_test

import (
	"fmt"
	"os"
	"testing"
)

// TestMain runs the worker process of TestIndexingSurvivesKill when the test
// binary is re-executed as one, and the tests otherwise.
func TestMain(m *testing.M) {
	if os.Getenv(envKillChild) != "" {
		if err := killChild(); err != nil {
			fmt.Fprintln(os.Stderr, "indexing worker:", err)
			os.Exit(2)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}
