package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agenthost/agenthost/host/tools"
	"github.com/agenthost/agenthost/host/wasm"
)

// features are the prompts, resources and templates offered on a server.
type features struct {
	prompts, resources, templates []string
}

func (f features) empty() bool {
	return len(f.prompts)+len(f.resources)+len(f.templates) == 0
}

// remove takes them off srv.
func (f features) remove(srv *mcp.Server) {
	if len(f.prompts) > 0 {
		srv.RemovePrompts(f.prompts...)
	}
	if len(f.resources) > 0 {
		srv.RemoveResources(f.resources...)
	}
	if len(f.templates) > 0 {
		srv.RemoveResourceTemplates(f.templates...)
	}
}

// addPluginFeatures offers the prompts and resources the plugins of the
// set's tools declare (manifest "mcp"), each only when the tool producing
// it is in the set; it returns what it offered.
func (s *Server) addPluginFeatures(srv *mcp.Server, ws string, cat catalogView, list []tools.Tool) (out features) {
	inSet := map[string]bool{}
	plugins := map[string]bool{}
	for _, t := range list {
		inSet[t.Name] = true
		plugins[t.Plugin] = true
	}
	for name := range plugins {
		p, ok := cat.plugins[name]
		if !ok || p.Manifest().MCP == nil {
			continue
		}
		m := p.Manifest().MCP
		for _, pr := range m.Prompts {
			if !inSet[pr.Tool] {
				continue
			}
			args := make([]*mcp.PromptArgument, len(pr.Arguments))
			for i, a := range pr.Arguments {
				args[i] = &mcp.PromptArgument{Name: a.Name, Description: a.Description, Required: a.Required}
			}
			srv.AddPrompt(&mcp.Prompt{Name: pr.Name, Description: pr.Description, Arguments: args}, s.promptHandler(ws, pr.Tool))
			out.prompts = append(out.prompts, pr.Name)
		}
		for _, r := range m.Resources {
			if inSet[r.Tool] {
				srv.AddResource(&mcp.Resource{URI: r.URI, Name: r.Name, Description: r.Description, MIMEType: r.MIMEType}, s.resourceHandler(ws, r.Tool))
				out.resources = append(out.resources, r.URI)
			}
		}
		for _, r := range m.ResourceTemplates {
			if inSet[r.Tool] {
				srv.AddResourceTemplate(&mcp.ResourceTemplate{URITemplate: r.URITemplate, Name: r.Name, Description: r.Description, MIMEType: r.MIMEType},
					s.resourceHandler(ws, r.Tool))
				out.templates = append(out.templates, r.URITemplate)
			}
		}
	}
	return out
}

// promptHandler serves prompts/get by calling the prompt's tool with
// {"name", "arguments"}; its JSON result is the GetPromptResult.
func (s *Server) promptHandler(ws, tool string) mcp.PromptHandler {
	return func(ctx context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		pargs := req.Params.Arguments
		if pargs == nil {
			pargs = map[string]string{}
		}
		args, _ := json.Marshal(map[string]any{"name": req.Params.Name, "arguments": pargs})
		var out mcp.GetPromptResult
		more, err := s.produce(ctx, ws, tool, args, &out, request{extra: req.Extra, session: req.Session,
			version: req.ProtocolVersion(), caps: req.ClientCapabilities(), responses: req.Params.InputResponses, state: req.Params.RequestState})
		if err != nil {
			return nil, err
		}
		if more.input != nil {
			return &mcp.GetPromptResult{InputRequests: more.input, RequestState: more.state}, nil
		}
		return &out, nil
	}
}

// resourceHandler serves resources/read by calling the resource's tool
// with {"uri"}; its JSON result is the ReadResourceResult. A failure whose
// code is "not_found" is MCP's resource-not-found error.
func (s *Server) resourceHandler(ws, tool string) mcp.ResourceHandler {
	return func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		args, _ := json.Marshal(map[string]any{"uri": req.Params.URI})
		var out mcp.ReadResourceResult
		more, err := s.produce(ctx, ws, tool, args, &out, request{extra: req.Extra, session: req.Session,
			version: req.ProtocolVersion(), caps: req.ClientCapabilities(), responses: req.Params.InputResponses, state: req.Params.RequestState})
		if err != nil {
			if e, ok := err.(*wasm.Error); ok && e.Code == "not_found" {
				return nil, mcp.ResourceNotFoundError(req.Params.URI)
			}
			return nil, err
		}
		if more.input != nil {
			return &mcp.ReadResourceResult{InputRequests: more.input, RequestState: more.state}, nil
		}
		return &out, nil
	}
}

// produce runs a prompt's or resource's tool and decodes its result into
// out with the SDK's types, which refuse malformed content.
func (s *Server) produce(ctx context.Context, ws, tool string, args []byte, out any, rq request) (outcome, error) {
	o, err := s.run(ctx, ws, tool, args, rq)
	if err != nil || o.input != nil {
		return o, err
	}
	res := o.res
	if !res.OK {
		if res.Error != nil {
			return o, res.Error
		}
		return o, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "the plugin failed"}
	}
	if len(res.Data) == 0 {
		return o, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: fmt.Sprintf("%s returned text, not the JSON result MCP needs", tool)}
	}
	if err := json.Unmarshal(res.Data, out); err != nil {
		return o, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: fmt.Sprintf("%s returned a malformed result: %v", tool, err)}
	}
	return o, nil
}
