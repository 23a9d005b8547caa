package wasmtest

import (
	"testing"

	"github.com/agenthost/agenthost/host/wasm/manifest"
)

// NotesVersion is the test plugin code (notes1: one read-only tool, read;
// notes2: and deleteAll; notes3: read writes) as the plugin "notes" in
// version v, with a tight manifest (http to api.example.com, small limits)
// that edit then changes: the versions an upgrade test widens or narrows.
func NotesVersion(tb testing.TB, code, v string, edit func(*manifest.Manifest)) []byte {
	tb.Helper()
	mod := Module(tb, code)
	m, err := manifest.Read(mod)
	if err != nil {
		tb.Fatal(err)
	}
	m.Name, m.Version = "notes", v
	m.Capabilities = []string{"http"}
	m.Limits = manifest.Limits{TimeoutMs: 1000, MemoryMiB: 64, MaxOutputBytes: 1 << 20, MaxHTTPResponseBytes: 1 << 20, AllowedHosts: []string{"api.example.com"}}
	edit(m)
	out, err := manifest.Embed(mod, m)
	if err != nil {
		tb.Fatal(err)
	}
	return out
}
