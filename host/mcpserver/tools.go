package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/agenthost/agenthost/host/tenancy"
	"github.com/agenthost/agenthost/host/toolcall"
	"github.com/agenthost/agenthost/host/tools"
	"github.com/agenthost/agenthost/host/wasm"
)

// catalogView indexes the runtime's tools and plugins for one build.
type catalogView struct {
	tools   map[string]wasm.ToolInfo
	plugins map[string]*wasm.Plugin
}

func newCatalogView(c Catalog) catalogView {
	v := catalogView{tools: map[string]wasm.ToolInfo{}, plugins: map[string]*wasm.Plugin{}}
	if c == nil {
		return v
	}
	for _, t := range c.Tools() {
		v.tools[t.Name] = t
	}
	for _, p := range c.Plugins() {
		v.plugins[p.Name()] = p
	}
	return v
}

// mcpTool is a tool as MCP clients see it. readOnly becomes the hints: a
// read-only tool changes nothing (readOnlyHint; the others are then
// meaningless); a writing tool may destroy or repeat effects, as far as
// the host knows (destructiveHint true, idempotentHint false, the
// protocol's cautious defaults). openWorldHint says whether the plugin asks
// for the network (capability "http"): what it touches lies beyond the
// workspace.
func (v catalogView) mcpTool(t tools.Tool) *mcp.Tool {
	open := false
	var output json.RawMessage
	if info, ok := v.tools[t.Name]; ok {
		output = info.OutputSchema
	}
	if p, ok := v.plugins[t.Plugin]; ok {
		open = p.Manifest().HasCapability("http")
	}
	ann := &mcp.ToolAnnotations{ReadOnlyHint: t.ReadOnly, OpenWorldHint: &open}
	if !t.ReadOnly {
		destructive := true
		ann.DestructiveHint = &destructive
	}
	mt := &mcp.Tool{Name: t.Name, Description: t.Description, InputSchema: t.Parameters, Annotations: ann}
	if len(output) > 0 {
		mt.OutputSchema = output
	}
	return mt
}

// toolHandler serves tools/call.
func (s *Server) toolHandler(ws, name string) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		out, err := s.run(ctx, ws, name, req.Params.Arguments, request{extra: req.Extra, session: req.Session,
			version: req.ProtocolVersion(), caps: req.ClientCapabilities(), progress: req.Params.GetProgressToken(),
			responses: req.Params.InputResponses, state: req.Params.RequestState})
		if err != nil {
			return nil, err
		}
		if out.input != nil {
			return &mcp.CallToolResult{InputRequests: out.input, RequestState: out.state}, nil
		}
		return s.result(out.tool, out.res), nil
	}
}

// request is what run needs of an MCP request.
type request struct {
	extra     *mcp.RequestExtra
	session   *mcp.ServerSession
	version   string
	caps      *mcp.ClientCapabilities
	progress  any
	responses mcp.InputResponseMap
	state     string
}

// outcome is how a call ended: its result, or the questions for the client
// (input, with the state to send back) when it needs answers first.
type outcome struct {
	tool  tools.Tool
	res   wasm.Result
	input mcp.InputRequestMap
	state string
}

// run calls a tool the way the API's direct call does: the caller's
// rights are checked again (a membership may have ended since the session
// began), a writing tool needs write access, and the call runs through the
// workspace's set with the caller in its context (tenancy, billing, host
// capabilities). The call's context ends when the client cancels
// (notifications/cancelled), without sessions when it hangs up, and with
// sessions when it ends the session or its stream is lost for good (see
// abandonment). A refusal is a
// tool result (the model may read it); err is for a request that has no
// caller or workspace, or carries a requestState this server did not issue.
func (s *Server) run(ctx context.Context, ws, name string, args json.RawMessage, rq request) (outcome, error) {
	var ti *auth.TokenInfo
	if rq.extra != nil {
		ti = rq.extra.TokenInfo
	}
	p, ok := principalOf(ti)
	if !ok {
		return outcome{}, fmt.Errorf("%w: the request carries no authenticated caller", tenancy.ErrUnauthenticated)
	}
	set, err := s.workspaceSet(ctx, p, ws)
	if err != nil {
		return outcome{}, err
	}
	t, ok := set.Lookup(name)
	if !ok {
		return outcome{tool: t, res: failure(wasm.CodeUnknownTool, fmt.Sprintf("the workspace no longer offers %q", name))}, nil
	}
	if !t.ReadOnly {
		if !mayWrite(ti) {
			return outcome{tool: t, res: failure("forbidden", name+" writes, and this client was not granted "+scopeWrite)}, nil
		}
		if _, write, err := s.d.Workspaces.Levels(ctx, p, ws); err != nil {
			return outcome{}, err
		} else if write == tenancy.None {
			return outcome{tool: t, res: failure("forbidden", name+" writes, and the caller may not write in this workspace")}, nil
		}
	}
	if t.Unavailable != "" {
		// Its server is not reachable now (the set was resolved just
		// above): nobody is asked to approve a call that cannot happen.
		return outcome{tool: t, res: failure(wasm.CodeNotReachable, t.Unavailable+"; the call did not reach it")}, nil
	}
	if len(args) == 0 || string(args) == "null" {
		args = json.RawMessage("{}")
	}
	if s.d.Rate != nil && s.d.PerMinute > 0 {
		now := time.Now().UTC()
		window := now.Truncate(time.Minute)
		n, err := s.d.Rate.CountRequest(ctx, p.TenantID, window)
		if err != nil {
			return outcome{}, err
		}
		if n > s.d.PerMinute {
			retry := int(window.Add(time.Minute).Sub(now).Seconds()) + 1
			return outcome{tool: t, res: failure("rate_limited", fmt.Sprintf(
				"the tenant has made its %d requests that start work this minute (over all hosts); retry in %d s", s.d.PerMinute, retry))}, nil
		}
	}
	if rq.session != nil && rq.extra != nil {
		var release func()
		ctx, release = s.abandon.watch(ctx, rq.session.ID(), rq.extra.Header.Get(streamHeader), p)
		defer release()
	}
	pr := &peer{session: rq.session, caps: rq.caps}
	if rq.extra != nil {
		pr.closeStream = rq.extra.CloseSSEStream
	}
	bind := stateBinding{Tenant: p.TenantID, User: p.UserID, Workspace: ws, Tool: name, Args: args}
	if rq.version >= statelessFrom {
		pr.round = &inputRound{answers: map[string]json.RawMessage{}}
		if rq.state != "" {
			if pr.round.answers, err = s.open(bind, rq.state); err != nil {
				return outcome{}, err
			}
		}
		for k, v := range rq.responses {
			if b, err := json.Marshal(v); err == nil {
				pr.round.answers[k] = b
			}
		}
	}
	if s.d.Policies != nil {
		pol, err := s.d.Policies.ToolPolicyOf(ctx, p, ws, t)
		if err != nil {
			return outcome{}, err
		}
		switch pol {
		case "deny":
			return outcome{tool: t, res: failure("denied", fmt.Sprintf("the workspace's policy does not allow %s; it did not run", name))}, nil
		case "ask":
			refused, err := s.approve(ctx, pr, p, ws, t, args)
			if errors.Is(err, errInput) {
				return outcome{tool: t, input: pr.round.pending(), state: s.seal(bind, pr.round.answers)}, nil
			}
			if err != nil {
				return outcome{}, err
			}
			if refused != nil {
				return outcome{tool: t, res: *refused}, nil
			}
		}
	}
	ctx, span := s.d.Tracer.Tracer("github.com/agenthost/agenthost/host/mcpserver").Start(ctx, "mcp call "+name,
		trace.WithSpanKind(trace.SpanKindServer),
		trace.WithAttributes(attribute.String("gen_ai.tool.name", name), attribute.String("agenthost.workspace", ws),
			attribute.String("mcp.protocol.version", rq.version)))
	defer span.End()
	ctx = toolcall.With(ctx, toolcall.Caller{Principal: p, WorkspaceID: ws})
	ctx = withPeer(ctx, pr)
	opts := &wasm.CallOptions{}
	if rq.progress != nil && rq.session != nil {
		opts.OnProgress = progressNotifier(ctx, rq.session, rq.progress)
	}
	res := set.Call(ctx, name, args, opts)
	if !res.OK && res.Error != nil {
		span.SetStatus(codes.Error, res.Error.Code)
	}
	if r := pr.round; r != nil {
		if err := r.missingError(res); err != nil {
			return outcome{}, err
		}
		if q := r.pending(); q != nil {
			return outcome{tool: t, input: q, state: s.seal(bind, r.answers)}, nil
		}
	}
	return outcome{tool: t, res: res}, nil
}

func failure(code, msg string) wasm.Result {
	return wasm.Result{Error: &wasm.Error{Code: code, Message: msg}}
}

// progressNotifier forwards a plugin's progress reports as
// notifications/progress (fraction of 1). MCP asks progress to increase:
// a report that does not is dropped.
func progressNotifier(ctx context.Context, ss *mcp.ServerSession, token any) func(wasm.Progress) {
	var mu sync.Mutex
	last := math.Inf(-1)
	return func(p wasm.Progress) {
		mu.Lock()
		defer mu.Unlock()
		if p.Fraction <= last {
			return
		}
		last = p.Fraction
		_ = ss.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: token, Progress: p.Fraction, Total: 1, Message: p.Message})
	}
}

// result maps the runtime's result: a failure is a tool error (isError,
// which the model sees) with its code; JSON data is the structured result
// and, serialised, its text; text is text. A tool that declares
// contentResult returns MCP content blocks, checked before they leave.
func (s *Server) result(t tools.Tool, res wasm.Result) *mcp.CallToolResult {
	if !res.OK {
		e := res.Error
		if e == nil {
			e = &wasm.Error{Code: wasm.CodePluginError, Message: "the call failed"}
		}
		return errorResult(e.Code, e.Message)
	}
	if len(res.Data) > 0 {
		if s.contentResult(t.Name) {
			out, err := contentBlocks(res.Data)
			if err != nil {
				return errorResult(wasm.CodeInvalidOutput, err.Error())
			}
			return out
		}
		r := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(res.Data)}}}
		// Structured content is a JSON object; any other JSON stays text.
		if len(res.Data) > 0 && res.Data[0] == '{' {
			r.StructuredContent = res.Data
		}
		return r
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: res.Text}}}
}

func (s *Server) contentResult(tool string) bool {
	if s.d.Catalog == nil {
		return false
	}
	for _, t := range s.d.Catalog.Tools() {
		if t.Name == tool {
			return t.ContentResult
		}
	}
	return false
}

func errorResult(code, msg string) *mcp.CallToolResult {
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: code + ": " + msg}}}
}
