package builtin

import (
	"github.com/agenthost/agenthost/host/background"
	"github.com/agenthost/agenthost/host/connections"
	"github.com/agenthost/agenthost/host/files"
	"github.com/agenthost/agenthost/host/filetransfer"
	"github.com/agenthost/agenthost/host/knowledge"
	"github.com/agenthost/agenthost/host/llm"
	"github.com/agenthost/agenthost/host/mcpserver"
	"github.com/agenthost/agenthost/host/sqlquery"
	"github.com/agenthost/agenthost/host/wasm"
	"github.com/agenthost/agenthost/host/websearch"
)

// Capabilities are the capabilities the built-in plugins may ask for beyond
// the standard ones: those that act for a tool call's caller on the
// server's services (files, models, knowledge). A plugin host is built
// before those services (indexing runs plugins), so they are held by
// pointer and filled in by the server before it serves; until then, and in
// processes without the services (worker, plugin build, benchmarks), their
// calls answer that the service is unavailable.
type Capabilities struct {
	Files     *files.Capability
	Models    *llm.Capabilities
	Knowledge *knowledge.Capability
	// Background starts background jobs (only serve runs them).
	Background *background.Capability
	// WebSearch and SQL are the operator's search API and databases
	// (webSearch, sqlQuery); unconfigured, their calls say so.
	WebSearch *websearch.Capability
	SQL       *sqlquery.Capability
	// Connections sends connector plugins' requests with users' connections.
	Connections *connections.Capability
	// Connectors serves the connection tools (browse, download, ... through
	// the connectors).
	Connectors *connections.ToolsCapability
	// FileTransfer reaches users' FTP and SFTP servers for connectors.
	FileTransfer *filetransfer.Capability
}

// NewCapabilities returns capabilities not yet connected to any service.
func NewCapabilities() *Capabilities {
	return &Capabilities{Files: &files.Capability{}, Models: &llm.Capabilities{}, Knowledge: &knowledge.Capability{},
		Background: &background.Capability{}, WebSearch: &websearch.Capability{}, SQL: &sqlquery.Capability{},
		Connections: &connections.Capability{}, Connectors: &connections.ToolsCapability{}, FileTransfer: &filetransfer.Capability{}}
}

// List returns every capability a host offers: the standard ones and those
// reaching the services.
// The connection capability takes the same egress options as http.
func (c *Capabilities) List(o wasm.EgressOptions) []wasm.Capability {
	c.Connections.Egress = o
	c.FileTransfer.Egress = o
	return append(wasm.StandardCapabilities(o), c.Files.Wasm(), c.Models.ModelCapability(), c.Models.ImagesCapability(), c.Knowledge.Wasm(),
		c.Background.Wasm(), c.WebSearch.Wasm(), c.SQL.Wasm(), c.Connections.Wasm(), c.Connectors.Wasm(), c.FileTransfer.Wasm(), mcpserver.Capability())
}
