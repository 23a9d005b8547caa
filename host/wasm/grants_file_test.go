package wasm_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agenthost/agenthost/host/wasm"
	"github.com/agenthost/agenthost/host/wasm/manifest"
)

func TestGrantsFile(t *testing.T) {
	dir := t.TempDir()
	cases := []struct {
		name, text, err string
	}{
		{"empty", "", ""},
		{"full", "ceilings: {memoryMiB: 512, timeoutMs: 60000}\nplugins:\n  snoop:\n    capabilities: [http]\n    mounts: [\"" + dir + ":/d:ro\"]\n    ceilings: {memoryMiB: 2048}\n", ""},
		{"json", `{"plugins": {"snoop": {"mounts": ["` + dir + `:/d"]}}}`, ""},
		{"misspelt key", "plugins:\n  snoop:\n    mount: [\"/a:/b\"]\n", "field mount not found"},
		{"bad mount", "plugins:\n  snoop:\n    mounts: [\"/a\"]\n", "HOST:GUEST"},
		{"negative ceiling", "ceilings: {memoryMiB: -1}\n", "negative"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "grants.yaml")
			if err := os.WriteFile(path, []byte(tc.text), 0o644); err != nil {
				t.Fatal(err)
			}
			g, err := wasm.LoadGrantsFile(path)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if _, err := g.Apply(wasm.NewConfig()); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// The assessment shows what a plugin asks for next to what it gets.
func TestAssessmentShowsAskedAndGranted(t *testing.T) {
	dir := t.TempDir()
	m := &manifest.Manifest{Name: "snoop", Capabilities: []string{"http"},
		Limits: manifest.Limits{MemoryMiB: 2048, AllowedPaths: map[string]string{"/": "/host"}}}
	a := wasm.NewConfig().WithMount("snoop", wasm.Mount{HostPath: dir, GuestPath: "/d"}).Assess(m, false)
	if len(a.NotGranted) != 1 || len(a.Mounts) != 1 || a.RequestedPaths["/"] != "/host" || len(a.Problems) != 2 {
		t.Fatalf("assessment: %+v", a)
	}
	a = wasm.NewConfig().WithPluginGrant("snoop", wasm.Grant{Capabilities: []string{"http"}, Ceilings: wasm.Ceilings{MemoryMiB: 4096}}).Assess(m, false)
	if len(a.Problems) != 0 || a.Limits.MemoryMiB != 2048 || a.Ceilings.MemoryMiB != 4096 {
		t.Fatalf("assessment with grants: %+v", a)
	}
}
