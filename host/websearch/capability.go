package websearch

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/agenthost/agenthost/host/toolcall"
	"github.com/agenthost/agenthost/host/wasm"
	"github.com/agenthost/agenthost/pdk/websearch/wire"
)

// CapabilityName is the capability's name in manifests; its function is
// imported from module "agenthost:websearch".
const CapabilityName = "websearch"

// Capability lets a plugin search through the operator's search API. The
// searcher is set when the operator configured one; until then, and
// without one, calls answer not_configured.
type Capability struct {
	Searcher *Searcher
}

// Wasm returns the capability: search, a read.
func (c *Capability) Wasm() wasm.Capability {
	return wasm.Capability{
		Name:        CapabilityName,
		Description: "search the web through the operator's search API (SearXNG, Brave or Tavily); the key stays in the host",
		Functions: []wasm.HostFunction{
			wasm.JSONFunction(wasm.CapabilityPrefix+CapabilityName, "search", false, func(ctx context.Context, _ *wasm.Call, req json.RawMessage) (any, error) {
				return c.search(ctx, req)
			}),
		},
	}
}

func (c *Capability) search(ctx context.Context, req json.RawMessage) (any, error) {
	if _, ok := toolcall.From(ctx); !ok {
		return nil, &wasm.CapabilityError{Code: "no_caller", Message: "websearch.search: this call acts for nobody"}
	}
	if c.Searcher == nil {
		return nil, &wasm.CapabilityError{Code: "not_configured", Message: "websearch.search: no search API is configured (webSearch in the configuration file, see docs/configuration.md)"}
	}
	var r wire.SearchRequest
	if err := wasm.DecodeRequest(req, &r); err != nil {
		return nil, &wasm.CapabilityError{Code: "invalid_arguments", Message: "websearch.search: request: " + err.Error()}
	}
	out, err := c.Searcher.Search(ctx, r)
	if err != nil {
		var e *Error
		if errors.As(err, &e) {
			return nil, &wasm.CapabilityError{Code: e.Code, Message: "websearch.search: " + e.Message}
		}
		return nil, &wasm.CapabilityError{Code: "error", Message: "websearch.search: " + err.Error()}
	}
	return out, nil
}
