package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestPluginNewRefuses: what cannot be scaffolded as a plugin that builds
// is refused with why, and nothing is written.
func TestPluginNewRefuses(t *testing.T) {
	repo, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	busy := t.TempDir()
	if err := os.WriteFile(filepath.Join(busy, "keep.txt"), []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	actions := "needs the PDK for legacy method.action descriptors"
	if _, err := os.Stat(filepath.Join(repo, "pdk", "actions", "actions.go")); err == nil {
		actions = "" // this checkout has it: TestPluginNewKinds makes one
	}
	connector := "needs the connector PDK"
	if _, err := os.Stat(filepath.Join(repo, "pdk", "connector", "connector.go")); err == nil {
		connector = "" // likewise
	}
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"connector without pdk/connector", []string{"-kind", "connector"}, connector},
		{"actions without pdk/actions", []string{"-kind", "actions"}, actions},
		{"unknown kind", []string{"-kind", "widget"}, `unknown -kind "widget"`},
		{"unknown language", []string{"-lang", "cobol"}, `unknown -lang "cobol"`},
		{"an AssemblyScript extractor", []string{"-lang", "assemblyscript", "-kind", "extractor"}, "makes tool plugins only"},
		{"AssemblyScript outside a checkout", []string{"-lang", "assemblyscript", "-agenthost", t.TempDir()}, "is not an agenthost checkout"},
		{"a name the manifest refuses", []string{"Bad_Name"}, "is not a plugin name"},
		{"a folder in use", []string{"-dir", busy}, "is not empty"},
		{"not a checkout", []string{"-agenthost", t.TempDir()}, "is not an agenthost checkout"},
		{"a -pdk that is not a module version", []string{"-pdk", "1.2.0"}, "is not a module version"},
		{"a -pdk of a build with changes", []string{"-pdk", "v0.0.0-20261202150000-2933e72abcde+dirty"}, "is not a module version"},
		{"both -pdk and -agenthost", []string{"-pdk", "v1.2.3", "-agenthost", repo}, "give one"},
	}
	for _, c := range cases {
		if c.want == "" {
			continue
		}
		t.Run(c.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "made")
			args := []string{"plugin", "new"}
			if !strings.HasPrefix(c.args[0], "-") {
				args = append(args, c.args...)
			} else {
				args = append(append(args, "good-name"), c.args...)
			}
			if !slices.Contains(args, "-dir") {
				args = append(args, "-dir", dir)
			}
			_, _, err := run0(t, args...)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v, want %q", err, c.want)
			}
			if _, err := os.Stat(dir); err == nil {
				t.Fatalf("%s was made", dir)
			}
		})
	}
	if b, _ := os.ReadFile(filepath.Join(busy, "keep.txt")); string(b) != "mine" {
		t.Fatal("the busy folder was touched")
	}
}

// TestPluginNewKinds: each kind the checkout can scaffold builds and passes
// its own fixtures as made (the tool kind runs in TestAuthorsPath). The
// connector's fixtures run against the simulated connection: the provider
// must see the fake credential the host attaches, and a site outside the
// connector's hosts and another provider's connection are refused.
func TestPluginNewKinds(t *testing.T) {
	if testing.Short() {
		t.Skip("builds plugins")
	}
	kinds := []string{"extractor"}
	if _, err := os.Stat("../../pdk/actions/actions.go"); err == nil {
		kinds = append(kinds, "actions")
	}
	if _, err := os.Stat("../../pdk/connector/connector.go"); err == nil {
		kinds = append(kinds, "connector")
	}
	// What each kind's report must show beyond "0 failed".
	wants := map[string][]string{
		"connector": {"connector: provider made-connector, services files, hosts api.made-connector.example, auth token",
			"PASS browses-the-root-folder.json", "PASS downloads-a-file.json", "PASS refuses-a-site-outside-its-hosts.json",
			"PASS refuses-another-providers-connection.json", "6 passed, 0 failed"},
	}
	for _, kind := range kinds {
		t.Run(kind, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "made-"+kind)
			if _, stderr, err := run0(t, "plugin", "new", "made-"+kind, "-kind", kind, "-dir", dir); err != nil {
				t.Fatalf("new: %v %s", err, stderr)
			}
			out, stderr, err := run0(t, "plugin", "test", dir)
			if err != nil || !strings.Contains(out, "0 failed") || strings.Contains(out, "FAIL") {
				t.Fatalf("plugin test: %v\n%s%s", err, out, stderr)
			}
			for _, want := range wants[kind] {
				if !strings.Contains(out, want) {
					t.Errorf("plugin test's report lacks %q:\n%s", want, out)
				}
			}
			t.Log(out)
		})
	}
}

// TestPluginNewAssemblyScript: `plugin new -lang assemblyscript` makes an
// npm project on pdk/as that, once `npm install` has run (offline, from the
// cache .ci/testdeps filled), `plugin build` compiles with asc and `plugin
// test` passes as made, in a folder outside the checkout.
func TestPluginNewAssemblyScript(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a plugin")
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("npm is required (.ci/testdeps)")
		}
		t.Skip("npm is not installed")
	}
	dir := filepath.Join(t.TempDir(), "made-as")
	out, stderr, err := run0(t, "plugin", "new", "made-as", "-lang", "assemblyscript", "-dir", dir, "-agenthost", "../..")
	if err != nil || !strings.Contains(out, "npm install") {
		t.Fatalf("new: %v %s%s", err, out, stderr)
	}
	install := exec.Command(npm, "install", "--offline", "--no-audit", "--no-fund")
	install.Dir = dir
	if b, err := install.CombinedOutput(); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("npm install --offline: %v\n%s", err, b)
		}
		t.Skipf("npm install --offline (run make testdeps to fill the cache): %v\n%s", err, b)
	}
	if out, stderr, err := run0(t, "plugin", "build", dir); err != nil || !strings.Contains(out, "built made-as 0.1.0 (1 tools") {
		t.Fatalf("build: %v %s%s", err, out, stderr)
	}
	out, stderr, err = run0(t, "plugin", "test", dir)
	if err != nil || !strings.Contains(out, "PASS greets.json") || !strings.Contains(out, "2 passed, 0 failed") {
		t.Fatalf("plugin test: %v\n%s%s", err, out, stderr)
	}
	// It imports the Extism kernel only (the PDK's HTTP and progress
	// bindings are left out when unused): it runs in any Extism host.
	out, stderr, err = run0(t, "plugin", "inspect", filepath.Join(dir, "made-as.wasm"))
	if err != nil || !strings.Contains(out, "extism:host/env.output_set") {
		t.Fatalf("inspect: %v\n%s%s", err, out, stderr)
	}
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "imports") {
			for _, imp := range strings.Split(strings.TrimSpace(strings.TrimPrefix(l, "imports")), ", ") {
				if !strings.HasPrefix(imp, "extism:host/env.") {
					t.Errorf("the scaffold imports %s", imp)
				}
			}
		}
	}
}

// TestPluginNewWithoutAVersion: a build that names no module version (this
// test's binary, as one built from a checkout with changes), run outside a
// checkout without -pdk or -agenthost, has nothing to require the PDK at:
// it says what to pass, and writes nothing.
func TestPluginNewWithoutAVersion(t *testing.T) {
	if v := serverModuleVersion(); v != "" {
		t.Fatalf("the test binary has module version %q", v)
	}
	outside := t.TempDir()
	t.Chdir(outside)
	dir := filepath.Join(outside, "made")
	_, _, err := run0(t, "plugin", "new", "good-name", "-dir", dir)
	if err == nil || !strings.Contains(err.Error(), "pass -pdk VERSION, or -agenthost PATH") {
		t.Fatalf("got %v", err)
	}
	if _, err := os.Stat(dir); err == nil {
		t.Fatalf("%s was made", dir)
	}
}
