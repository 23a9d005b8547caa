package manifest

import "fmt"

// MCP is what a plugin offers clients of the MCP server beyond its tools:
// prompts and resources. Each is produced by one of the plugin's own tools
// (named in Tool), so it runs sandboxed, validated and metered like any
// tool call, and only in workspaces whose tool set offers that tool. A
// resource's tool receives {"uri": URI} and returns {"contents": [...]},
// a prompt's tool receives {"name": NAME, "arguments": {...}} and returns
// {"description": ..., "messages": [...]}, both in MCP's shapes, which the
// host checks before they leave (docs/mcp.md).
type MCP struct {
	Prompts           []MCPPrompt           `json:"prompts,omitempty"`
	Resources         []MCPResource         `json:"resources,omitempty"`
	ResourceTemplates []MCPResourceTemplate `json:"resourceTemplates,omitempty"`
}

// MCPPrompt is one prompt (prompts/list, prompts/get).
type MCPPrompt struct {
	Name        string              `json:"name"`
	Description string              `json:"description,omitempty"`
	Arguments   []MCPPromptArgument `json:"arguments,omitempty"`
	Tool        string              `json:"tool"`
}

// MCPPromptArgument is one argument a prompt takes.
type MCPPromptArgument struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	Required    bool   `json:"required,omitempty"`
}

// MCPResource is one resource with a fixed URI (resources/list, resources/read).
type MCPResource struct {
	URI         string `json:"uri"`
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	MIMEType    string `json:"mimeType,omitempty"`
	Tool        string `json:"tool"`
}

// MCPResourceTemplate is a family of resources (an RFC 6570 URI template).
type MCPResourceTemplate struct {
	URITemplate string `json:"uriTemplate"`
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	MIMEType    string `json:"mimeType,omitempty"`
	Tool        string `json:"tool"`
}

// checkMCP makes sure every prompt and resource names a tool of the plugin.
func (m *Manifest) checkMCP() error {
	if m.MCP == nil {
		return nil
	}
	has := func(name string) bool { _, ok := m.Tool(name); return ok }
	for i, p := range m.MCP.Prompts {
		if !has(p.Tool) {
			return &FieldError{Field: fmt.Sprintf("/mcp/prompts/%d/tool", i), Message: fmt.Sprintf("the plugin has no tool %q", p.Tool)}
		}
	}
	for i, r := range m.MCP.Resources {
		if !has(r.Tool) {
			return &FieldError{Field: fmt.Sprintf("/mcp/resources/%d/tool", i), Message: fmt.Sprintf("the plugin has no tool %q", r.Tool)}
		}
	}
	for i, r := range m.MCP.ResourceTemplates {
		if !has(r.Tool) {
			return &FieldError{Field: fmt.Sprintf("/mcp/resourceTemplates/%d/tool", i), Message: fmt.Sprintf("the plugin has no tool %q", r.Tool)}
		}
	}
	return nil
}
