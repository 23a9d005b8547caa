// Package manifest defines the plugin manifest: what a plugin is, which tools it
// offers, and which capabilities and limits it asks for.
//
// A manifest travels inside the plugin's one .wasm file as a custom section named
// [SectionName], so an operator (and the host) can read it without running any of
// the plugin's code. The format is versioned by [Version] and validated by the JSON
// Schema in schema.json, which ships with the code; validation errors name the field.
package manifest

import (
	"encoding/json"
	"slices"
)

// Version is the manifest format version this host reads and writes.
const Version = 1

// SectionName is the name of the Wasm custom section that carries the manifest.
const SectionName = "agenthost.manifest"

// Kind says what a plugin is for.
type Kind string

// The plugin kinds.
const (
	KindTool      Kind = "tool"      // tools an agent calls
	KindExtractor Kind = "extractor" // turns documents into content objects
	KindConnector Kind = "connector" // talks to one provider's services
	KindActions   Kind = "actions"   // legacy method/action descriptors turned into tools
)

// Manifest describes one plugin.
type Manifest struct {
	// ManifestVersion is the format version; this host reads [Version].
	ManifestVersion int `json:"manifestVersion"`
	// Name identifies the plugin: lower case letters, digits and dashes.
	Name string `json:"name"`
	// Version is the plugin's semantic version.
	Version     string `json:"version"`
	Kind        Kind   `json:"kind"`
	Description string `json:"description"`
	// Tools lists every tool the plugin exports. Names are unique within a plugin.
	// An actions plugin declares Actions instead, and its Tools are derived
	// from them when the manifest is read (one per dynamicMode action).
	Tools []Tool `json:"tools,omitempty"`
	// Actions lists an actions plugin's legacy method.action descriptors.
	Actions []Action `json:"actions,omitempty"`
	// Extractor is set for extractor plugins.
	Extractor *Extractor `json:"extractor,omitempty"`
	// Connector is set for connector plugins.
	Connector *Connector `json:"connector,omitempty"`
	// Capabilities names the host capabilities the plugin asks for (see the
	// capability registry in package wasm). Anything not named here is not linked.
	Capabilities []string `json:"capabilities,omitempty"`
	// Limits bounds what one call may use.
	Limits Limits `json:"limits"`
	// MCP lists the prompts and resources the plugin offers MCP clients.
	MCP *MCP `json:"mcp,omitempty"`
}

// Externals lists the side effects a tool may declare (Tool.External).
func Externals() []string {
	return []string{"mail", "upload", "post", "create", "update", "delete", "payment", "other"}
}

// Tool is one callable tool.
type Tool struct {
	// Name is what a model calls; it follows OpenAI's function-name rules.
	Name        string `json:"name"`
	Description string `json:"description"`
	// ReadOnly tools may run in parallel and are linked only to read capabilities.
	ReadOnly bool `json:"readOnly"`
	// External names the side effect the tool has outside agenthost (one
	// of Externals: "mail", "upload", "post", "create", "update",
	// "delete", "payment", "other"); empty is none. A workspace's approval
	// policy decides whether such a call runs, waits for a person or is
	// refused (docs/agent.md#approval-policy). A read-only tool has none.
	External string `json:"external,omitempty"`
	// InputSchema is the JSON Schema of the arguments object.
	InputSchema json.RawMessage `json:"inputSchema"`
	// OutputSchema, when set, is the JSON Schema that structured results must meet.
	OutputSchema json.RawMessage `json:"outputSchema,omitempty"`
	// ContentResult says the tool's JSON result is {"content": [...]} in
	// MCP's content-block format (text, image, audio, resource): MCP
	// clients receive the blocks, an agent the JSON.
	ContentResult bool `json:"contentResult,omitempty"`

	// action marks a tool derived from a legacy action (see IsAction).
	action bool
}

// IsAction reports whether the tool stands for a legacy action of an
// actions plugin: its results are ActionResults (ActionResultSchema).
func (t Tool) IsAction() bool { return t.action }

// Extractor says which documents an extractor plugin handles.
type Extractor struct {
	MIMETypes  []string `json:"mimeTypes"`
	Extensions []string `json:"extensions,omitempty"`
}

// Connector says which provider and services a connector plugin speaks to
// (one provider, n services) and how: the hosts its connection requests may
// reach, the auth scheme its connections use and the scopes it needs. The
// host attaches a connection's credentials only to requests to these hosts
// (and to the connection's own host); the plugin never holds them.
type Connector struct {
	Provider string   `json:"provider"`
	Services []string `json:"services"`
	// Hosts are allow-list entries (as Limits.AllowedHosts) for connection
	// requests; checked by egress.ParseHostEntry.
	Hosts []string `json:"hosts,omitempty"`
	// Auth is "oauth2", "token" or "basic"; empty accepts any.
	Auth string `json:"auth,omitempty"`
	// Scopes are the OAuth scopes the connector needs.
	Scopes []string `json:"scopes,omitempty"`
}

// HasAgentTools reports whether the plugin's tools are agent tools. An
// extractor's tools are the host's (called with a document), and a
// connector's are the connection tools' (called through the resolver with a
// user's connection): neither is in the host-wide tool namespace, so every
// connector may export the same browse, download, upload and search.
func (m *Manifest) HasAgentTools() bool {
	return m.Kind != KindExtractor && m.Kind != KindConnector
}

// HasService reports whether the connector serves service.
func (c *Connector) HasService(service string) bool {
	return c != nil && slices.Contains(c.Services, service)
}

// Limits bounds the resources of one call. Zero values take the host defaults.
type Limits struct {
	// MemoryMiB caps the guest's linear memory.
	MemoryMiB int `json:"memoryMiB,omitempty"`
	// TimeoutMs caps the wall time of one call; the guest is stopped after it.
	TimeoutMs int `json:"timeoutMs,omitempty"`
	// MaxOutputBytes caps what one call may return.
	MaxOutputBytes int64 `json:"maxOutputBytes,omitempty"`
	// MaxHTTPResponseBytes caps one HTTP response body read through the host.
	MaxHTTPResponseBytes int64 `json:"maxHttpResponseBytes,omitempty"`
	// AllowedHosts lists the HTTP hosts the plugin may reach ("*.example.org" matches
	// subdomains); "host:port" restricts a host to that port. Needs the "http"
	// capability. Entries are checked by egress.ParseHostEntry.
	AllowedHosts []string `json:"allowedHosts,omitempty"`
	// AllowedPaths maps host directories to guest paths ("ro:" prefix for read-only).
	AllowedPaths map[string]string `json:"allowedPaths,omitempty"`
}

// Tool returns the named tool, or false.
func (m *Manifest) Tool(name string) (Tool, bool) {
	for _, t := range m.Tools {
		if t.Name == name {
			return t, true
		}
	}
	return Tool{}, false
}

// HasCapability reports whether the manifest asks for capability name.
func (m *Manifest) HasCapability(name string) bool {
	for _, c := range m.Capabilities {
		if c == name {
			return true
		}
	}
	return false
}
