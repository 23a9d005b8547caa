package jobs_test

import (
	"fmt"
	"os"
	"testing"

	"github.com/agenthost/agenthost/host/testenv"
)

func TestMain(m *testing.M) {
	// The crash test's worker process is this binary again (see crashChild).
	if os.Getenv(envCrashChild) != "" {
		err := crashChild()
		fmt.Fprintln(os.Stderr, "crash test worker:", err)
		os.Exit(2)
	}
	os.Exit(testenv.Main(m))
}
