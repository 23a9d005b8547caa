package billing

import (
	"context"
	"testing"

	"github.com/agenthost/agenthost/host/wasm"
	"github.com/agenthost/agenthost/host/wasm/manifest"
)

type toolsOnly []wasm.ToolInfo

func (t toolsOnly) Tools() []wasm.ToolInfo { return t }
func (toolsOnly) Call(context.Context, string, []byte, *wasm.CallOptions) wasm.Result {
	return wasm.Result{}
}

// A call is attributed to the plugin offering the tool, pinned or not.
func TestPluginOf(t *testing.T) {
	mr := meteredRunner{Runner: toolsOnly{{Plugin: "ledger", Tool: manifest.Tool{Name: "book"}}}}
	for tool, want := range map[string]string{"book": "ledger", "book@1.2.0": "ledger", "other": "", "other@1.0.0": ""} {
		if got := mr.pluginOf(tool); got != want {
			t.Errorf("pluginOf(%q) = %q, want %q", tool, got, want)
		}
	}
}
