package manifest

import (
	"strings"
	"testing"
)

// A plugin's MCP prompts and resources must each name one of its tools,
// and their fields are checked by the schema.
func TestMCPSection(t *testing.T) {
	withMCP := func(mcp map[string]any) []byte {
		return edit(t, func(m map[string]any) { m["mcp"] = mcp })
	}
	res := func(tool string) map[string]any {
		return map[string]any{"resources": []any{map[string]any{"uri": "test://a", "name": "a", "tool": tool}}}
	}
	ok, err := Parse(withMCP(map[string]any{
		"resources":         []any{map[string]any{"uri": "test://a", "name": "a", "mimeType": "text/plain", "tool": "fetchPage"}},
		"resourceTemplates": []any{map[string]any{"uriTemplate": "test://t/{id}", "name": "t", "tool": "fetchPage"}},
		"prompts":           []any{map[string]any{"name": "p", "tool": "fetchPage", "arguments": []any{map[string]any{"name": "x", "required": true}}}},
	}))
	if err != nil || ok.MCP == nil || len(ok.MCP.Prompts) != 1 || !ok.MCP.Prompts[0].Arguments[0].Required {
		t.Fatalf("valid section: %v %+v", err, ok)
	}
	for _, c := range []struct {
		name, field string
		doc         []byte
	}{
		{"a resource of another plugin's tool", "/mcp/resources/0/tool", withMCP(res("someoneElses"))},
		{"a prompt of no tool", "/mcp/prompts/0", withMCP(map[string]any{"prompts": []any{map[string]any{"name": "p"}}})},
		{"a resource without a scheme", "/mcp/resources/0/uri", withMCP(map[string]any{"resources": []any{map[string]any{"uri": "no-scheme", "name": "a", "tool": "fetchPage"}}})},
		{"an unknown field", "/mcp", withMCP(map[string]any{"tools": []any{}})},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse(c.doc)
			if err == nil || !strings.Contains(err.Error(), c.field) {
				t.Fatalf("error %v, want one naming %s", err, c.field)
			}
		})
	}
}
