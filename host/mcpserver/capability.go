package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agenthost/agenthost/host/wasm"
)

// CapabilityName is the capability through which a plugin reaches the MCP
// client that made the call: sampling (the client's model answers),
// elicitation (the client's user answers) and log messages.
const CapabilityName = "client"

// peer is the client of one tools/call; calls that did not arrive over
// MCP carry none, and the capability refuses them.
type peer struct {
	session *mcp.ServerSession
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

// Capability is "client" (agenthost:client: sample, elicit, log, poll). Requests
// and responses are MCP's own shapes (CreateMessageParams/Result,
// ElicitParams/Result, LoggingMessageParams), decoded by the SDK's types
// before they are sent, so a plugin cannot put anything on the wire that
// is not a well-formed request of that method. The requests wait as long as
// the plugin's call may run (its time limit ends them).
func Capability() wasm.Capability {
	return wasm.Capability{
		Name:        CapabilityName,
		Description: "ask the MCP client that made the call: sampling (its model), elicitation (its user), log messages, polling of long calls",
		Functions: []wasm.HostFunction{
			wasm.JSONFunction(wasm.CapabilityPrefix+CapabilityName, "sample", false, func(ctx context.Context, _ *wasm.Call, req json.RawMessage) (any, error) {
				p := peerFrom(ctx)
				if p == nil {
					return nil, errNoPeer
				}
				var params mcp.CreateMessageParams
				if err := json.Unmarshal(req, &params); err != nil {
					return nil, &wasm.CapabilityError{Code: "invalid_request", Message: err.Error()}
				}
				res, err := p.session.CreateMessage(ctx, &params)
				return res, clientError(err)
			}),
			wasm.JSONFunction(wasm.CapabilityPrefix+CapabilityName, "elicit", false, func(ctx context.Context, _ *wasm.Call, req json.RawMessage) (any, error) {
				p := peerFrom(ctx)
				if p == nil {
					return nil, errNoPeer
				}
				var params mcp.ElicitParams
				if err := json.Unmarshal(req, &params); err != nil {
					return nil, &wasm.CapabilityError{Code: "invalid_request", Message: err.Error()}
				}
				res, err := p.session.Elicit(ctx, &params)
				return res, clientError(err)
			}),
			wasm.JSONFunction(wasm.CapabilityPrefix+CapabilityName, "log", false, func(ctx context.Context, _ *wasm.Call, req json.RawMessage) (any, error) {
				p := peerFrom(ctx)
				if p == nil {
					return nil, errNoPeer
				}
				var params mcp.LoggingMessageParams
				if err := json.Unmarshal(req, &params); err != nil {
					return nil, &wasm.CapabilityError{Code: "invalid_request", Message: err.Error()}
				}
				return struct{}{}, clientError(p.session.Log(ctx, &params))
			}),
			wasm.JSONFunction(wasm.CapabilityPrefix+CapabilityName, "poll", false, func(ctx context.Context, _ *wasm.Call, req json.RawMessage) (any, error) {
				p := peerFrom(ctx)
				if p == nil {
					return nil, errNoPeer
				}
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
