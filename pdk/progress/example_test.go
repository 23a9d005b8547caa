package progress_test

import "github.com/agenthost/agenthost/pdk/progress"

// Reporting how far a long call is (capability "progress"): MCP clients
// and the event stream see it. Runs inside a plugin.
func ExampleReport() {
	for i := range 4 {
		_ = progress.Report(float64(i+1)/4, "page batch done")
	}
}
