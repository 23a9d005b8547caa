package manifest

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

const valid = `{
  "manifestVersion": 1,
  "name": "webfetch",
  "version": "1.2.0",
  "kind": "tool",
  "description": "Fetches web pages.",
  "tools": [{
    "name": "fetchPage",
    "description": "Fetch a page as text.",
    "readOnly": true,
    "inputSchema": {"type": "object", "properties": {"url": {"type": "string"}}, "required": ["url"]}
  }],
  "capabilities": ["http"],
  "limits": {"timeoutMs": 5000, "allowedHosts": ["*.example.org"]}
}`

// edit applies f to the valid manifest decoded as a map and re-encodes it.
func edit(t *testing.T, f func(m map[string]any)) []byte {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(valid), &m); err != nil {
		t.Fatal(err)
	}
	f(m)
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func tool0(m map[string]any) map[string]any { return m["tools"].([]any)[0].(map[string]any) }

func TestParseValid(t *testing.T) {
	m, err := Parse([]byte(valid))
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	if m.Name != "webfetch" || len(m.Tools) != 1 || !m.Tools[0].ReadOnly || !m.HasCapability("http") {
		t.Fatalf("unexpected manifest: %+v", m)
	}
}

func TestParseRefusesBadManifests(t *testing.T) {
	cases := []struct {
		name  string
		doc   []byte
		field string // must appear in the error
	}{
		{"missing name", edit(t, func(m map[string]any) { delete(m, "name") }), "name"},
		{"missing tool description", edit(t, func(m map[string]any) { delete(tool0(m), "description") }), "/tools/0"},
		{"wrong manifest version", edit(t, func(m map[string]any) { m["manifestVersion"] = 2 }), "/manifestVersion"},
		{"bad semver", edit(t, func(m map[string]any) { m["version"] = "1.2" }), "/version"},
		{"unknown kind", edit(t, func(m map[string]any) { m["kind"] = "daemon" }), "/kind"},
		{"bad tool name", edit(t, func(m map[string]any) { tool0(m)["name"] = "fetch page" }), "/tools/0/name"},
		{"invalid input schema", edit(t, func(m map[string]any) {
			tool0(m)["inputSchema"] = map[string]any{"type": "object", "properties": map[string]any{"url": map[string]any{"type": "strin"}}}
		}), "/tools/0/inputSchema"},
		{"duplicate tool name", edit(t, func(m map[string]any) {
			m["tools"] = append(m["tools"].([]any), tool0(m))
		}), "/tools/1/name"},
		{"tool plugin without tools", edit(t, func(m map[string]any) { m["tools"] = []any{} }), "/tools"},
		{"allowed hosts without http", edit(t, func(m map[string]any) { m["capabilities"] = []any{} }), "/limits/allowedHosts"},
		{"allowed host with a bad port", edit(t, func(m map[string]any) {
			m["limits"].(map[string]any)["allowedHosts"] = []any{"api.example.org:443", "api.example.org:99999"}
		}), "/limits/allowedHosts/1"},
		{"unknown field", edit(t, func(m map[string]any) { m["permissions"] = "all" }), "permissions"},
		{"extractor without mime types", edit(t, func(m map[string]any) { m["kind"] = "extractor" }), "/extractor"},
		{"negative timeout", edit(t, func(m map[string]any) { m["limits"].(map[string]any)["timeoutMs"] = -1 }), "/limits/timeoutMs"},
		{"not json", []byte(`{"name":`), "JSON"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse(tc.doc)
			if err == nil {
				t.Fatal("Parse accepted a bad manifest")
			}
			if !errors.Is(err, ErrInvalid) {
				t.Errorf("error does not wrap ErrInvalid: %v", err)
			}
			if !strings.Contains(err.Error(), tc.field) {
				t.Errorf("error %q does not name %q", err, tc.field)
			}
		})
	}
}

func TestEmbedAndRead(t *testing.T) {
	m, err := Parse([]byte(valid))
	if err != nil {
		t.Fatal(err)
	}
	empty := []byte{0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00}
	mod, err := Embed(empty, m)
	if err != nil {
		t.Fatalf("Embed: %v", err)
	}
	got, err := Read(mod)
	if err != nil {
		t.Fatalf("Read: %v", err)
	}
	if got.Name != m.Name || got.Tools[0].Name != "fetchPage" {
		t.Fatalf("round trip lost data: %+v", got)
	}
	// Embedding again replaces the section rather than adding a second one.
	m.Version = "1.2.1"
	mod2, err := Embed(mod, m)
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := Read(mod2); got.Version != "1.2.1" {
		t.Fatalf("version = %q after re-embed", got.Version)
	}
	if len(mod2) != len(mod) {
		t.Fatalf("re-embed changed size %d → %d: section duplicated?", len(mod), len(mod2))
	}
	if _, err := Read(empty); !errors.Is(err, ErrNoManifest) {
		t.Fatalf("Read(no section) = %v, want ErrNoManifest", err)
	}
	if _, err := Read([]byte("not wasm")); err == nil {
		t.Fatal("Read accepted garbage")
	}
}
