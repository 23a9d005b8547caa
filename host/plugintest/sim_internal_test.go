package plugintest

import (
	"testing"

	"github.com/agenthost/agenthost/host/builtin"
	"github.com/agenthost/agenthost/host/wasm"
)

// TestSimulationsReplaceRealFunctions: every simulated function replaces a
// function the host really links (a renamed host function would otherwise
// leave its simulation unused and the real one, unconnected, in its place),
// and the simulated list keeps every real import and signature.
func TestSimulationsReplaceRealFunctions(t *testing.T) {
	real := map[string]wasm.HostFunction{}
	for _, c := range builtin.NewCapabilities().List(wasm.EgressOptions{}) {
		for _, f := range c.Functions {
			real[c.Name+"."+f.Name] = f
		}
	}
	for _, key := range []string{"http.http_request", "files.read", "files.write", "model.info", "model.count", "model.complete", "knowledge.search", "connection.request", "connection.info"} {
		if _, ok := real[key]; !ok {
			t.Errorf("the host links no %s, which plugin test simulates", key)
		}
	}
	n := 0
	for _, c := range capabilities() {
		for _, f := range c.Functions {
			n++
			r, ok := real[c.Name+"."+f.Name]
			if !ok || r.Module != f.Module || r.Write != f.Write || len(r.Params) != len(f.Params) || len(r.Results) != len(f.Results) {
				t.Errorf("%s.%s differs from the host's", c.Name, f.Name)
			}
		}
	}
	if n != len(real) {
		t.Errorf("the simulation links %d functions, the host %d", n, len(real))
	}
}
