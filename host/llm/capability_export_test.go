package llm

import (
	"context"
	"encoding/json"

	"github.com/agenthost/agenthost/host/wasm"
)

// CapCall calls a handler of the model and images capabilities as its host
// function does, for the tests of package llm_test (which may import the
// store).
func CapCall(h *Capabilities, ctx context.Context, fn, tool, req string) (any, error) {
	handlers := map[string]func(context.Context, *wasm.Call, json.RawMessage) (any, error){
		"info": h.info, "count": h.count, "complete": h.complete, "generate": h.generate, "ocr": h.ocr,
	}
	return handlers[fn](ctx, &wasm.Call{Tool: tool}, json.RawMessage(req))
}
