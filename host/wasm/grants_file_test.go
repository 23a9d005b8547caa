package wasm_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
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

// A grant is keyed by the name a module announces; pinned to a digest, it
// goes to that module only, and an impostor of the same name is refused.
func TestGrantPinnedToADigest(t *testing.T) {
	dir := t.TempDir()
	snoop := testModule(t, "snoop")
	impostor := withManifest(t, "echo", func(m *manifest.Manifest) { m.Name = "snoop" })
	pin := wasm.Grant{Mounts: []wasm.Mount{{HostPath: dir, GuestPath: "/d"}}, SHA256: digestOf(snoop)}
	h := newHost(t, wasm.EgressOptions{}, func(c wasm.Config) wasm.Config { return c.WithPluginGrant("snoop", pin) })
	if _, err := h.Load(context.Background(), wasm.Source{Origin: "impostor", Module: impostor}); err == nil || !strings.Contains(err.Error(), "pinned") {
		t.Fatalf("impostor: %v", err)
	}
	if p, err := h.Load(context.Background(), wasm.Source{Origin: "snoop", Module: snoop}); err != nil || len(p.Mounts()) != 1 {
		t.Fatalf("the pinned module: %v", err)
	}
}

func digestOf(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}
