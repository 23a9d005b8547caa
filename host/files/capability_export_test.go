package files

import (
	"context"
	"encoding/json"

	"github.com/agenthost/agenthost/host/wasm"
)

// CapRead and CapWrite call the capability's handlers as its host functions
// do, for the tests of package files_test (which may import the store).
func CapRead(h *Capability, ctx context.Context, tool string, req string) (any, error) {
	return h.read(ctx, &wasm.Call{Tool: tool}, json.RawMessage(req))
}

func CapWrite(h *Capability, ctx context.Context, tool string, req string) (any, error) {
	return h.write(ctx, &wasm.Call{Tool: tool}, json.RawMessage(req))
}
