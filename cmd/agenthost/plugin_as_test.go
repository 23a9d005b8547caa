package main

import (
	"os"
	"os/exec"
	"path/filepath"
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
	if err != nil || !strings.Contains(out, "6 passed, 0 failed") {
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

// TestPluginBuildPrebuiltModule: `plugin build DIR -wasm MODULE` gives a
// module compiled outside agenthost (here by asc run by hand, as an author
// of another language runs their compiler) the manifest of DIR/plugin.json
// and the tools its describe export lists, and the result passes plugin test.
func TestPluginBuildPrebuiltModule(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a plugin")
	}
	dir := "../../host/wasm/testdata/plugins/astext"
	asc, err := build.FindASC(dir)
	if err != nil {
		skipOrFailWithoutNode(t, err.Error())
	}
	raw := filepath.Join(t.TempDir(), "raw.wasm")
	cmd := exec.Command(asc, "--config", "asconfig.json", "--outFile", raw)
	cmd.Dir = dir
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("asc: %v\n%s", err, b)
	}
	built := filepath.Join(t.TempDir(), "astext.wasm")
	out, stderr, err := run0(t, "plugin", "build", dir, "-wasm", raw, "-o", built)
	if err != nil || !strings.Contains(out, "built astext 1.0.0 (10 tools") {
		t.Fatalf("build -wasm: %v %s%s", err, out, stderr)
	}
	if out, stderr, err := run0(t, "plugin", "test", dir, "-wasm", built); err != nil || !strings.Contains(out, "6 passed, 0 failed") {
		t.Fatalf("plugin test -wasm: %v\n%s%s", err, out, stderr)
	}
	// A module that is not a plugin is refused, naming why.
	if _, _, err := run0(t, "plugin", "build", dir, "-wasm", filepath.Join(dir, "plugin.json"), "-o", built); err == nil {
		t.Fatal("plugin.json as a module was accepted")
	}
}
