package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agenthost/agenthost/host/tenancy"
	"github.com/agenthost/agenthost/host/tools"
)

// ExternalTools says whether a workspace's endpoint offers the tools of
// its external MCP servers (store.DB; a workspace setting its managers
// change).
type ExternalTools interface {
	WorkspaceMCPExternalTools(ctx context.Context, p tenancy.Principal, workspaceID string) (bool, error)
}

// Keys of a tool's _meta that say where an external tool comes from and
// why it cannot be called now.
const (
	metaSource           = "agenthost/source"
	metaUnavailable      = "agenthost/unavailable"
	metaUnavailableSince = "agenthost/unavailableSince"
)

// external marks a tool of an external MCP server (source "mcp:NAME") as
// such for the client and its model: its name already carries the
// server's prefix (tools.Set refuses one that is a built-in's), the title
// and the head of the description name the server, since the description
// is the server's own words and may claim anything. What it touches is
// beyond the workspace (openWorldHint); its read-only claim counts only
// where the admin trusted it (mcpclient), otherwise it is a writing tool,
// external to the approval policy.
func external(mt *mcp.Tool, source string) {
	server := strings.TrimPrefix(source, "mcp:")
	open := true
	mt.Annotations.OpenWorldHint = &open
	mt.Title = fmt.Sprintf("%s (external MCP server %q)", mt.Name, server)
	mt.Description = fmt.Sprintf("[A tool of the external MCP server %q, not of agenthost; its description follows as the server wrote it.] %s",
		server, mt.Description)
	if mt.Meta == nil {
		mt.Meta = mcp.Meta{}
	}
	mt.Meta[metaSource] = source
}

// unavailable marks a tool that cannot be called now (its server is not
// reachable): it stays listed, so that it does not vanish without a word,
// and says why and since when; a call says "not reachable".
func unavailable(mt *mcp.Tool, t tools.Tool) {
	mt.Description = "[Unavailable now: " + t.Unavailable + ".] " + mt.Description
	if mt.Meta == nil {
		mt.Meta = mcp.Meta{}
	}
	mt.Meta[metaUnavailable] = t.Unavailable
	if t.UnavailableSince != nil {
		mt.Meta[metaUnavailableSince] = t.UnavailableSince.UTC().Format(time.RFC3339)
	}
}

// objectSchema says whether a tool's parameters are an object's schema,
// which the SDK requires of every tool it lists (it panics otherwise).
func objectSchema(doc json.RawMessage) bool {
	var top struct {
		Type any `json:"type"`
	}
	return json.Unmarshal(doc, &top) == nil && top.Type == "object"
}
