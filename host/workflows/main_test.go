package workflows_test

import (
	"os"
	"testing"

	"github.com/agenthost/agenthost/host/testenv"
)

func TestMain(m *testing.M) { os.Exit(testenv.Main(m)) }
