package mcpserver

import (
	"encoding/json"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// contentBlocks decodes a contentResult tool's JSON ({"content": [...],
// "structuredContent": {...}, "isError": bool}) with the SDK's types, which
// accept only MCP's block types and well-formed base64.
func contentBlocks(data json.RawMessage) (*mcp.CallToolResult, error) {
	var r mcp.CallToolResult
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("the tool's content blocks are malformed: %w", err)
	}
	if len(r.Content) == 0 {
		return nil, fmt.Errorf("the tool's result has no content blocks")
	}
	return &r, nil
}
