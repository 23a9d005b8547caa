package main

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/agenthost/agenthost/host/wasm/build"
)

// TestPluginTestAssemblyScript: `agenthost plugin test` builds the
// AssemblyScript test plugin (host/wasm/testdata/plugins/astext) with asc and
// passes its fixtures, a recorded HTTP answer and an abort among them.
func TestPluginTestAssemblyScript(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a plugin")
	}
	dir := "../../host/wasm/testdata/plugins/astext"
	if _, err := exec.LookPath("node"); err != nil {
		skipOrFailWithoutNode(t, "node is not on PATH")
	}
	if _, err := build.FindASC(dir); err != nil {
		skipOrFailWithoutNode(t, err.Error())
	}
	out, stderr, err := run0(t, "plugin", "test", dir)
	if err != nil || !strings.Contains(out, "5 passed, 0 failed") {
		t.Fatalf("plugin test: %v\n%s%s", err, out, stderr)
	}
	for _, want := range []string{"PASS counts-words.json", "PASS fetches-a-recorded-page.json", "error panic: abort: deliberate failure"} {
		if !strings.Contains(out, want) {
			t.Errorf("the report lacks %q:\n%s", want, out)
		}
	}
}

// skipOrFailWithoutNode skips a test of AssemblyScript plugins on a machine
// without their npm packages, and fails it in CI, where .ci/testdeps
// installs them.
func skipOrFailWithoutNode(t *testing.T, why string) {
	t.Helper()
	if os.Getenv("CI") != "" {
		t.Fatalf("%s (.ci/testdeps installs it)", why)
	}
	t.Skipf("%s (make testdeps)", why)
}
