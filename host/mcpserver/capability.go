//lint:file-ignore SA1019 sampling, roots and logging are deprecated by revision 2026-07-28 (SEP-2577) but inside their deprecation window; clients of the older revisions and the conformance suite use them

package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agenthost/agenthost/host/wasm"
)

// CapabilityName is the capability through which a plugin reaches the MCP
// client that made the call: sampling (the client's model answers),
// elicitation (the client's user answers), its roots, log messages, and
// polling of long calls.
const CapabilityName = "client"

// peer is the client of one MCP request; calls that did not arrive over
// MCP carry none, and the capability refuses them.
type peer struct {
	session *mcp.ServerSession
	// caps are the capabilities the client declared (nil: none known).
	caps *mcp.ClientCapabilities
	// round is set under protocol revisions without sessions (2026-07-28),
	// where the server may not send requests: questions become the
	// result's inputRequests instead (multi round-trip requests).
	round *inputRound
	// closeStream ends the call's response stream (SEP-1699 polling); nil
	// where the protocol revision has no resumable streams.
	closeStream func(mcp.CloseSSEStreamArgs)
}

type peerKey struct{}

func withPeer(ctx context.Context, p *peer) context.Context {
	return context.WithValue(ctx, peerKey{}, p)
}

func peerFrom(ctx context.Context) *peer {
	p, _ := ctx.Value(peerKey{}).(*peer)
	return p
}

var errNoPeer = &wasm.CapabilityError{Code: "unavailable",
	Message: "there is no MCP client to ask: the call did not arrive over MCP (agents and the API have none)"}

// CodeInputRequired is the capability error of a question whose answer the
// client has not given yet (protocol 2026-07-28): the plugin ends its call
// (returning this error is simplest), the client answers, and the call runs
// again from the start with the answers known.
const CodeInputRequired = "input_required"

// CodeMissingCapability is the capability error of a question the client
// did not declare it can answer; a call that fails with it is answered
// with MCP's MissingRequiredClientCapability error.
const CodeMissingCapability = "missing_client_capability"

// question is what a plugin asks: Key names it across rounds (the same
// question must carry the same key when the call runs again; without one,
// questions are numbered in the order they are asked), Request is the MCP
// request's params.
type question struct {
	Key     string          `json:"key"`
	Request json.RawMessage `json:"request"`
}

// Capability is "client" (agenthost:client: sample, elicit, roots, log,
// poll). Questions are {"key", "request"} with MCP's own params
// (CreateMessageParams, ElicitParams, ListRootsParams), decoded by the
// SDK's types before anything is sent, so a plugin cannot put a malformed
// request on the wire; answers are MCP's results. With sessions (protocol
// revisions up to 2025-11-25) a question is a request to the client that
// waits as long as the plugin's call may run; without them (2026-07-28) it
// is answered from the retry's inputResponses or fails with
// CodeInputRequired (see inputRound).
func Capability() wasm.Capability {
	fn := func(name string, h func(ctx context.Context, p *peer, req json.RawMessage) (any, error)) wasm.HostFunction {
		return wasm.JSONFunction(wasm.CapabilityPrefix+CapabilityName, name, false, func(ctx context.Context, _ *wasm.Call, req json.RawMessage) (any, error) {
			p := peerFrom(ctx)
			if p == nil {
				return nil, errNoPeer
			}
			return h(ctx, p, req)
		})
	}
	return wasm.Capability{
		Name:        CapabilityName,
		Description: "ask the MCP client that made the call: sampling (its model), elicitation (its user), its roots; log messages, polling of long calls",
		Functions: []wasm.HostFunction{
			fn("sample", func(ctx context.Context, p *peer, req json.RawMessage) (any, error) {
				return ask(ctx, p, req, "sampling", func(q json.RawMessage) (mcp.InputRequest, error) {
					var params mcp.CreateMessageParams
					return &params, json.Unmarshal(q, &params)
				}, func(r mcp.InputRequest) (any, error) {
					return p.session.CreateMessage(ctx, r.(*mcp.CreateMessageParams))
				})
			}),
			fn("elicit", func(ctx context.Context, p *peer, req json.RawMessage) (any, error) {
				return ask(ctx, p, req, "elicitation", func(q json.RawMessage) (mcp.InputRequest, error) {
					var params mcp.ElicitParams
					return &params, json.Unmarshal(q, &params)
				}, func(r mcp.InputRequest) (any, error) {
					return p.session.Elicit(ctx, r.(*mcp.ElicitParams))
				})
			}),
			fn("roots", func(ctx context.Context, p *peer, req json.RawMessage) (any, error) {
				return ask(ctx, p, req, "roots", func(json.RawMessage) (mcp.InputRequest, error) {
					return &mcp.ListRootsParams{}, nil
				}, func(r mcp.InputRequest) (any, error) {
					return p.session.ListRoots(ctx, r.(*mcp.ListRootsParams))
				})
			}),
			fn("log", func(ctx context.Context, p *peer, req json.RawMessage) (any, error) {
				var params mcp.LoggingMessageParams
				if err := json.Unmarshal(req, &params); err != nil {
					return nil, &wasm.CapabilityError{Code: "invalid_request", Message: err.Error()}
				}
				// The session sends only what the client's level admits (and,
				// without sessions, only what the request's logLevel asks).
				return struct{}{}, clientError(p.session.Log(ctx, &params))
			}),
			fn("poll", func(ctx context.Context, p *peer, req json.RawMessage) (any, error) {
				var r struct {
					RetryAfterMs int `json:"retryAfterMs"`
				}
				if err := json.Unmarshal(req, &r); err != nil || r.RetryAfterMs < 0 || r.RetryAfterMs > 60000 {
					return nil, &wasm.CapabilityError{Code: "invalid_request", Message: "retryAfterMs must be 0..60000"}
				}
				if p.closeStream != nil {
					p.closeStream(mcp.CloseSSEStreamArgs{RetryAfter: time.Duration(r.RetryAfterMs) * time.Millisecond})
				}
				return struct{}{}, nil
			}),
		},
	}
}

// ask puts a plugin's question to the client: through the session, or
// into the round's inputRequests. A client that did not declare it can
// answer such questions is not asked.
func ask(ctx context.Context, p *peer, req json.RawMessage, kind string,
	decode func(json.RawMessage) (mcp.InputRequest, error), send func(mcp.InputRequest) (any, error)) (any, error) {
	var q question
	if err := json.Unmarshal(req, &q); err != nil {
		return nil, &wasm.CapabilityError{Code: "invalid_request", Message: err.Error()}
	}
	if len(q.Request) == 0 {
		q.Request = json.RawMessage("{}")
	}
	params, err := decode(q.Request)
	if err != nil {
		return nil, &wasm.CapabilityError{Code: "invalid_request", Message: fmt.Sprintf("not a valid %s request: %v", kind, err)}
	}
	if !declares(p.caps, kind, p.round != nil) {
		if p.round != nil {
			p.round.missing(kind)
		}
		return nil, &wasm.CapabilityError{Code: CodeMissingCapability, Message: fmt.Sprintf("the client did not declare the %s capability", kind)}
	}
	if p.round == nil {
		res, err := send(params)
		return res, clientError(err)
	}
	return p.round.ask(q.Key, params)
}

// declares reports whether the client declared it answers kind. Clients of
// the older revisions that declared nothing are asked anyway (the SDK and
// the client refuse what they cannot do); without sessions every request
// states its capabilities.
func declares(c *mcp.ClientCapabilities, kind string, strict bool) bool {
	if c == nil {
		return !strict
	}
	switch kind {
	case "sampling":
		return c.Sampling != nil
	case "elicitation":
		return c.Elicitation != nil
	case "roots":
		return c.RootsV2 != nil || c.Roots.ListChanged || !strict
	}
	return false
}

// clientError is what a plugin learns of a failed request to the client:
// the client's refusal or the reason the request ended.
func clientError(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return &wasm.CapabilityError{Code: "canceled", Message: err.Error()}
	default:
		return &wasm.CapabilityError{Code: "client_error", Message: err.Error()}
	}
}
