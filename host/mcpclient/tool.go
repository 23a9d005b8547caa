package mcpclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agenthost/agenthost/host/mcpclient/mcpconfig"
	"github.com/agenthost/agenthost/host/schema"
	"github.com/agenthost/agenthost/host/tools"
	"github.com/agenthost/agenthost/host/wasm"
)

// mcpError is an error the server answered with.
type mcpError = jsonrpc.Error

// maxDescription bounds a tool's description as the model sees it;
// maxPages the pages of a server's tool list.
const (
	maxDescription = 2048
	maxPages       = 32
)

// toolName is what a set's tool may be called (the model APIs' function-name rule).
var toolName = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

// tool is one of a server's tools as a set shows it.
type tool struct {
	tools.Tool
	orig   string         // the server's name for it
	schema *schema.Schema // its inputSchema, compiled
}

// list fetches the server's tools and maps them; tools that cannot be
// offered (a bad name, a schema that is not self-contained) are refused,
// each with why, and the others kept.
func (c *conn) list(ctx context.Context, s *mcp.ClientSession) (out []tool, refused []string, _ error) {
	seen := map[string]bool{}
	params := &mcp.ListToolsParams{}
	// Pages are bounded too: a server could answer empty pages forever.
	for page := 0; ; page++ {
		if page == maxPages {
			return nil, nil, fmt.Errorf("its tool list has more than %d pages", maxPages)
		}
		res, err := s.ListTools(ctx, params)
		if err != nil {
			return nil, nil, err
		}
		for _, t := range res.Tools {
			if t == nil {
				continue
			}
			if len(out)+len(refused) >= mcpconfig.MaxTools {
				return nil, nil, fmt.Errorf("it offers more than %d tools", mcpconfig.MaxTools)
			}
			mt, err := c.mapTool(t)
			if err == nil && seen[mt.Name] {
				err = fmt.Errorf("it is listed twice")
			}
			if err != nil {
				refused = append(refused, fmt.Sprintf("%q: %v", clip(t.Name, 80), err))
				continue
			}
			seen[mt.Name] = true
			out = append(out, mt)
		}
		if res.NextCursor == "" {
			return out, refused, nil
		}
		params = &mcp.ListToolsParams{Cursor: res.NextCursor}
	}
}

func (c *conn) mapTool(t *mcp.Tool) (tool, error) {
	name := c.srv.Name + "_" + t.Name
	if !toolName.MatchString(name) {
		return tool{}, fmt.Errorf("its name as %q is not 1 to 64 letters, digits, '_' and '-'", clip(name, 80))
	}
	doc, err := json.Marshal(t.InputSchema)
	if err != nil || string(doc) == "null" {
		return tool{}, errors.New("it has no inputSchema")
	}
	if err := selfContained(doc); err != nil {
		return tool{}, err
	}
	// MCP's inputSchema is an object's schema ("type": "object"), as the
	// model APIs' function parameters are; anything else is no tool.
	var top struct {
		Type any `json:"type"`
	}
	if json.Unmarshal(doc, &top) != nil || top.Type != "object" {
		return tool{}, errors.New(`its inputSchema is not of "type": "object"`)
	}
	sc, err := schema.Compile("mcp://"+c.srv.Name+"/"+t.Name, doc)
	if err != nil {
		return tool{}, err
	}
	desc := t.Description
	if desc == "" && t.Annotations != nil {
		desc = t.Annotations.Title
	}
	// Annotations are the server's claims: a tool is read-only when it says
	// so, does not also say it destroys, and the admin trusts the claim.
	ro := t.Annotations != nil && t.Annotations.ReadOnlyHint &&
		(t.Annotations.DestructiveHint == nil || !*t.Annotations.DestructiveHint) &&
		c.srv.Config.TrustsReadOnly(t.Name)
	return tool{Tool: tools.Tool{Name: name, Description: clip(plainText(desc), maxDescription),
		ReadOnly: ro, External: externalUnlessReadOnly(ro), Parameters: forModel(doc), Plugin: c.Name()}, orig: t.Name, schema: sc}, nil
}

// plainText is a server's description as valid UTF-8 without the
// characters that hide or reorder text (controls other than newline and
// tab, bidirectional overrides and isolates, zero-width ones): what a
// person reads of it is what the model reads.
func plainText(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r == '\n' || r == '\t':
			return r
		case r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0):
			return -1
		case r >= 0x200b && r <= 0x200f, r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069, r == 0xfeff:
			return -1
		}
		return r
	}, strings.ToValidUTF8(s, "?"))
}

// forModel is a schema as the model is shown it: without "$schema", which
// function-calling APIs do not expect (the arguments are validated against
// the whole document).
func forModel(doc []byte) json.RawMessage {
	var m map[string]json.RawMessage
	if json.Unmarshal(doc, &m) != nil {
		return doc
	}
	if _, ok := m["$schema"]; !ok {
		return doc
	}
	delete(m, "$schema")
	out, err := json.Marshal(m)
	if err != nil {
		return doc
	}
	return out
}

// selfContained refuses a schema that names another document ($ref or
// $dynamicRef beyond "#…", a $schema other than a known draft): compiling it
// would read that document, from the host's files or the network.
func selfContained(doc []byte) error {
	var v any
	if err := json.Unmarshal(doc, &v); err != nil {
		return fmt.Errorf("inputSchema: %v", err)
	}
	if _, ok := v.(map[string]any); !ok {
		return errors.New("inputSchema is not a JSON object")
	}
	var walk func(any) error
	walk = func(v any) error {
		switch x := v.(type) {
		case map[string]any:
			for k, e := range x {
				s, isStr := e.(string)
				switch {
				case (k == "$ref" || k == "$dynamicRef") && isStr && !strings.HasPrefix(s, "#"):
					return fmt.Errorf("inputSchema refers to another document (%s %q)", k, clip(s, 100))
				case k == "$schema" && isStr && !knownDraft(s):
					return fmt.Errorf("inputSchema names an unknown $schema %q", clip(s, 100))
				case k == "$id" && isStr:
					return fmt.Errorf("inputSchema sets $id %q (a tool's schema is one anonymous document)", clip(s, 100))
				}
				if err := walk(e); err != nil {
					return err
				}
			}
		case []any:
			for _, e := range x {
				if err := walk(e); err != nil {
					return err
				}
			}
		}
		return nil
	}
	return walk(v)
}

func knownDraft(s string) bool {
	s = strings.TrimSuffix(strings.TrimSuffix(s, "#"), "/")
	switch strings.TrimPrefix(strings.TrimPrefix(s, "https://"), "http://") {
	case "json-schema.org/draft/2020-12/schema", "json-schema.org/draft/2019-09/schema",
		"json-schema.org/draft-07/schema", "json-schema.org/draft-06/schema", "json-schema.org/draft-04/schema":
		return true
	}
	return false
}

// result maps a tool result to the runtime's Result: text parts joined,
// binary parts described (the model gets no base64), structured content as
// Data, isError as a plugin_error.
func result(r *mcp.CallToolResult, limit int) wasm.Result {
	var parts []string
	for _, c := range r.Content {
		switch x := c.(type) {
		case *mcp.TextContent:
			parts = append(parts, x.Text)
		case *mcp.ImageContent:
			parts = append(parts, fmt.Sprintf("[image %s, %d bytes]", x.MIMEType, len(x.Data)))
		case *mcp.AudioContent:
			parts = append(parts, fmt.Sprintf("[audio %s, %d bytes]", x.MIMEType, len(x.Data)))
		case *mcp.ResourceLink:
			parts = append(parts, fmt.Sprintf("[resource %s %s]", x.Name, x.URI))
		case *mcp.EmbeddedResource:
			if x.Resource == nil {
				continue
			}
			if x.Resource.Text != "" {
				parts = append(parts, x.Resource.Text)
			} else {
				parts = append(parts, fmt.Sprintf("[resource %s %s, %d bytes]", x.Resource.URI, x.Resource.MIMEType, len(x.Resource.Blob)))
			}
		}
	}
	text := strings.ToValidUTF8(strings.Join(parts, "\n"), "?")
	out := wasm.Result{OK: !r.IsError, Text: text}
	if r.StructuredContent != nil {
		if b, err := json.Marshal(r.StructuredContent); err == nil {
			out.Data = b
		}
	}
	out.Stats.OutputBytes = len(out.Text) + len(out.Data)
	if out.Stats.OutputBytes > limit {
		// Described binary parts cannot get here; text and data were bounded
		// on the wire, but both at once may pass the bound.
		return failure(wasm.CodeOutputTooLarge, "the tool's result is %d bytes, more than the bound of %d", out.Stats.OutputBytes, limit)
	}
	if r.IsError {
		out.Error = &wasm.Error{Code: wasm.CodePluginError, Message: clip(text, 4000)}
		out.Text = ""
	}
	return out
}

// isDecodeError says a call failed because its answer did not decode.
func isDecodeError(err error) bool {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	return errors.As(err, &se) || errors.As(err, &te) || strings.Contains(err.Error(), "unmarshal")
}

// clip shortens s to n bytes at a rune boundary.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// ExternalMCP is the side effect of an MCP server's tool that is not known
// to be read-only: what it does outside is the server's affair, so the
// approval policy treats it as external (docs/agent.md#approval-policy).
const ExternalMCP = "mcp"

func externalUnlessReadOnly(readOnly bool) string {
	if readOnly {
		return ""
	}
	return ExternalMCP
}
