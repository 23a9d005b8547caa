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

func TestParseExternal(t *testing.T) {
	for _, kind := range Externals() {
		m, err := Parse(edit(t, func(m map[string]any) {
			tool0(m)["readOnly"] = false
			tool0(m)["external"] = kind
		}))
		if err != nil {
			t.Fatalf("external %q: %v", kind, err)
		}
		if m.Tools[0].External != kind {
			t.Errorf("external = %q, want %q", m.Tools[0].External, kind)
		}
	}
}

func TestParseConnector(t *testing.T) {
	m, err := Parse(edit(t, func(m map[string]any) {
		m["kind"] = "connector"
		m["capabilities"] = []any{"http", "connection"}
		m["connector"] = map[string]any{"provider": "jira", "services": []any{"issues", "boards"}, "hosts": []any{"*.atlassian.net"},
			"auth": "basic", "scopes": []any{"read:jira-work"}}
	}))
	if err != nil {
		t.Fatal(err)
	}
	c := m.Connector
	if c.Provider != "jira" || !c.HasService("boards") || c.HasService("mail") || c.Auth != "basic" || len(c.Hosts) != 1 || len(c.Scopes) != 1 {
		t.Fatalf("connector %+v", c)
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
		{"unknown side effect", edit(t, func(m map[string]any) {
			tool0(m)["readOnly"] = false
			tool0(m)["external"] = "telepathy"
		}), "/tools/0/external"},
		{"side effect of a read-only tool", edit(t, func(m map[string]any) { tool0(m)["external"] = "mail" }), "/tools/0/external"},
		{"side effect not a string", edit(t, func(m map[string]any) {
			tool0(m)["readOnly"] = false
			tool0(m)["external"] = true
		}), "/tools/0/external"},
		{"tool plugin without tools", edit(t, func(m map[string]any) { m["tools"] = []any{} }), "/tools"},
		{"allowed hosts without http", edit(t, func(m map[string]any) { m["capabilities"] = []any{} }), "/limits/allowedHosts"},
		{"allowed host with a bad port", edit(t, func(m map[string]any) {
			m["limits"].(map[string]any)["allowedHosts"] = []any{"api.example.org:443", "api.example.org:99999"}
		}), "/limits/allowedHosts/1"},
		{"unknown field", edit(t, func(m map[string]any) { m["permissions"] = "all" }), "permissions"},
		{"extractor without mime types", edit(t, func(m map[string]any) { m["kind"] = "extractor" }), "/extractor"},
		{"negative timeout", edit(t, func(m map[string]any) { m["limits"].(map[string]any)["timeoutMs"] = -1 }), "/limits/timeoutMs"},
		{"not json", []byte(`{"name":`), "JSON"},
		{"connector without a connector section", edit(t, func(m map[string]any) { m["kind"] = "connector" }), "/connector"},
		{"connector host malformed", edit(t, func(m map[string]any) {
			m["kind"] = "connector"
			m["capabilities"] = []any{"http", "connection"}
			m["connector"] = map[string]any{"provider": "jira", "services": []any{"issues"}, "hosts": []any{"*.atlassian.net", "a.b:0"}}
		}), "/connector/hosts/1"},
		{"connector hosts without the connection capability", edit(t, func(m map[string]any) {
			m["kind"] = "connector"
			m["connector"] = map[string]any{"provider": "jira", "services": []any{"issues"}, "hosts": []any{"*.atlassian.net"}}
		}), "/connector/hosts"},
		{"connector unknown auth", edit(t, func(m map[string]any) {
			m["kind"] = "connector"
			m["capabilities"] = []any{"http", "connection"}
			m["connector"] = map[string]any{"provider": "jira", "services": []any{"issues"}, "auth": "cookie"}
		}), "/connector/auth"},
		{"connector section on a tool plugin", edit(t, func(m map[string]any) {
			m["connector"] = map[string]any{"provider": "jira", "services": []any{"issues"}}
		}), "/connector"},
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

const validActions = `{
  "manifestVersion": 1,
  "name": "legacy",
  "version": "1.0.0",
  "kind": "actions",
  "description": "Legacy actions.",
  "actions": [
    {"method": "context", "action": "neutralizeData", "description": "Redacts.", "dynamicMode": true,
     "parameters": {"type": "object", "properties": {"text": {"type": "string"}}}},
    {"method": "context", "action": "getIndex", "description": "Lists.", "dynamicMode": true, "readOnly": true,
     "parameters": {"type": "object"}},
    {"method": "trustee", "action": "syncToAccounting", "description": "Syncs.", "dynamicMode": false,
     "parameters": {"type": "object"}}
  ]
}`

func TestParseActions(t *testing.T) {
	m, err := Parse([]byte(validActions))
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Actions) != 3 || len(m.Tools) != 2 {
		t.Fatalf("actions %d, tools %d", len(m.Actions), len(m.Tools))
	}
	tl := m.Tools[0]
	if tl.Name != "context.neutralizeData" || !tl.IsAction() || tl.ReadOnly || string(tl.OutputSchema) != string(ActionResultSchema()) {
		t.Errorf("tool 0: %+v", tl)
	}
	if !m.Tools[1].ReadOnly {
		t.Errorf("context.getIndex is read-only")
	}
	if _, ok := m.Tool("trustee.syncToAccounting"); ok {
		t.Errorf("a non-dynamicMode action became a tool")
	}
	if a, ok := m.Action("trustee.syncToAccounting"); !ok || a.DynamicMode {
		t.Errorf("Action = %+v, %v", a, ok)
	}
	// Written and read again, the tools are derived again, not written.
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), `"tools"`) {
		t.Errorf("derived tools were written: %s", b)
	}
	again, err := Parse(b)
	if err != nil || len(again.Tools) != 2 {
		t.Fatalf("again: %v", err)
	}
}

func TestParseRefusesBadActions(t *testing.T) {
	editActions := func(f func(m map[string]any)) []byte {
		var m map[string]any
		if err := json.Unmarshal([]byte(validActions), &m); err != nil {
			t.Fatal(err)
		}
		f(m)
		b, _ := json.Marshal(m)
		return b
	}
	action0 := func(m map[string]any) map[string]any { return m["actions"].([]any)[0].(map[string]any) }
	cases := []struct {
		name  string
		doc   []byte
		field string
	}{
		{"actions plugin with tools", editActions(func(m map[string]any) {
			var v map[string]any
			json.Unmarshal([]byte(valid), &v)
			m["tools"] = v["tools"]
		}), "/tools"},
		{"actions plugin without actions", editActions(func(m map[string]any) { delete(m, "actions") }), "/actions"},
		{"tool plugin with actions", edit(t, func(m map[string]any) {
			var v map[string]any
			json.Unmarshal([]byte(validActions), &v)
			m["actions"] = v["actions"]
		}), "/actions"},
		{"method with an underscore", editActions(func(m map[string]any) { action0(m)["method"] = "my_context" }), "/actions/0/method"},
		{"action with a dot", editActions(func(m map[string]any) { action0(m)["action"] = "a.b" }), "/actions/0/action"},
		{"missing dynamicMode", editActions(func(m map[string]any) { delete(action0(m), "dynamicMode") }), "/actions/0"},
		{"name too long for the wire", editActions(func(m map[string]any) { action0(m)["action"] = strings.Repeat("a", 60) }), "longer than 64"},
		{"duplicate action", editActions(func(m map[string]any) {
			m["actions"] = append(m["actions"].([]any), action0(m))
		}), "/actions/3"},
		{"invalid parameter schema", editActions(func(m map[string]any) {
			action0(m)["parameters"] = map[string]any{"type": "strin"}
		}), "/actions/0/parameters"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse(c.doc)
			if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), c.field) {
				t.Fatalf("Parse = %v, want an error naming %q", err, c.field)
			}
		})
	}
}

func TestWireName(t *testing.T) {
	for in, want := range map[string]string{"context.neutralizeData": "context_neutralizeData", "fetchPage": "fetchPage", "a-b_c": "a-b_c", "x y/z": "x_y_z"} {
		if got := WireName(in); got != want {
			t.Errorf("WireName(%q) = %q, want %q", in, got, want)
		}
	}
}
