package mcpclient_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/agenthost/agenthost/host/figure"
	"github.com/agenthost/agenthost/host/mcpclient"
	"github.com/agenthost/agenthost/host/mcpclient/mcpconfig"
)

// BenchmarkStdioCall measures one tool call to a connected stdio server
// (the hostile server's echo, a Go program): argument validation, the
// JSON-RPC round trip over the pipes, result mapping and the span.
func BenchmarkStdioCall(b *testing.B) {
	for _, size := range []struct {
		name string
		n    int
	}{{"64B", 64}, {"64KiB", 64 << 10}} {
		b.Run(size.name, func(b *testing.B) {
			src, _ := source(b, hostile(mcpconfig.Config{MaxResultBytes: 1 << 20}), mcpclient.Options{})
			args := []byte(`{"message":"` + strings.Repeat("x", size.n) + `"}`)
			ctx := context.Background()
			if _, err := src.Tools(ctx); err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				lat := make([]time.Duration, 0, 500)
				for range 500 {
					t0 := time.Now()
					if r := src.Call(ctx, "hostile_echo", args); !r.OK {
						b.Fatal(r.Error)
					}
					lat = append(lat, time.Since(t0))
				}
				p50 := figure.Percentile(lat, 50)
				b.ReportMetric(figure.Micros(p50), "µs/p50")
				figure.Report("mcp.client.stdio.call."+size.name+".p50", figure.Micros(p50), "µs")
			}
		})
	}
}
