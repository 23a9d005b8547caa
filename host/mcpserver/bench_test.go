package mcpserver_test

import (
	"context"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agenthost/agenthost/host/figure"
	"github.com/agenthost/agenthost/host/toolcall"
	"github.com/agenthost/agenthost/host/tools"
)

// BenchmarkMCPCallOverhead measures what MCP adds to a tool call: the p50
// of tools/call of the echo plugin through the endpoint (the Go SDK's
// client over loopback HTTP, a session of 2025-11-25; and without sessions,
// 2026-07-28) minus the p50 of the same call made directly
// (tools.Set.Call, as the API's direct call and the agent make it), in the
// same process.
func BenchmarkMCPCallOverhead(b *testing.B) {
	f := newFixture(b)
	ctx := context.Background()
	set, _, err := tools.NewRegistry(f.rec, map[string][]string{"core": {"*"}}).Set("core")
	if err != nil {
		b.Fatal(err)
	}
	args := []byte(`{"text":"hello"}`)
	const n = 2000
	direct := make([]time.Duration, 0, n)
	cctx := toolcall.With(ctx, toolcall.Caller{Principal: f.w.P, WorkspaceID: f.ws})
	for i := range n + 200 {
		start := time.Now()
		res := set.Call(cctx, "echo", args, nil)
		if !res.OK {
			b.Fatalf("direct: %+v", res.Error)
		}
		if i >= 200 { // the first calls start instances
			direct = append(direct, time.Since(start))
		}
	}
	base := figure.Percentile(direct, 50)
	for _, c := range []struct{ version, name string }{
		{"2025-11-25", "mcp.call.overhead.p50.us"},
		{"2026-07-28", "mcp.call.overhead.stateless.p50.us"},
	} {
		cs, err := f.connect(b, f.ws, f.token, nil, c.version)
		if err != nil {
			b.Fatal(err)
		}
		viaMCP := make([]time.Duration, 0, n)
		for i := range n + 200 {
			start := time.Now()
			r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "hello"}})
			if err != nil || r.IsError {
				b.Fatalf("MCP: %v %+v", err, r)
			}
			if i >= 200 {
				viaMCP = append(viaMCP, time.Since(start))
			}
		}
		p50 := figure.Percentile(viaMCP, 50)
		b.Logf("%s: direct p50 %v, MCP p50 %v", c.version, base, p50)
		figure.Report(c.name, float64((p50 - base).Microseconds()), "us")
	}
}
