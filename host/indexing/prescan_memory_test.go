package indexing_test

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"

	"github.com/agenthost/agenthost/host/wasm"
	"github.com/agenthost/agenthost/host/wasm/wasmtest"
)

// prescanMemoryBound is the guest memory a pre-scan of the 501-page
// merged document may leave its instance with: the lazy reader holds the
// dictionaries the pre-scan read, not the file's objects (an instance that
// pdfcpu's eager reader had opened it in held several times more).
const prescanMemoryBound = 160 << 20

// TestPrescanInstanceMemory: the sandboxed PDF plugin's pre-scan of a long
// document leaves its instance small enough to keep, and the next call
// reuses it; under an idle bound below what the pre-scan grew it to, the
// instance is closed after its call instead, so the next call runs on a
// fresh one and the pool holds no bloated instance.
func TestPrescanInstanceMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("pre-scans a 501-page document in the sandbox")
	}
	ctx := context.Background()
	data := mergedLong(t)
	call := func(p *wasm.Plugin) wasm.Result {
		t.Helper()
		args, _ := json.Marshal(map[string]any{"name": "long.pdf", "mimeType": "application/pdf"})
		r := p.Call(ctx, "prescan", args, &wasm.CallOptions{Input: bytesInput{bytes.NewReader(data)}})
		if !r.OK {
			t.Fatalf("prescan: %v", r.Error)
		}
		return r
	}

	p := wasmtest.Plugin(t, wasmtest.NewHost(t, wasmtest.Options{Warm: true}, "pdf"), "pdf")
	first, second := call(p), call(p)
	t.Logf("pre-scan of %d bytes: instance memory %d MiB, then %d MiB", len(data), first.Stats.MemoryBytes>>20, second.Stats.MemoryBytes>>20)
	if first.Stats.MemoryBytes > prescanMemoryBound || second.Stats.MemoryBytes > prescanMemoryBound {
		t.Errorf("pre-scan instance memory %d then %d bytes, over %d", first.Stats.MemoryBytes, second.Stats.MemoryBytes, prescanMemoryBound)
	}
	if !second.Stats.Reused {
		t.Error("the second pre-scan did not reuse the first's instance")
	}

	bound := first.Stats.MemoryBytes / 2
	pb := wasmtest.Plugin(t, wasmtest.NewHost(t, wasmtest.Options{Warm: true, MaxIdleMemory: bound}, "pdf"), "pdf")
	for i := range 2 {
		r := call(pb)
		if r.Stats.MemoryBytes <= bound {
			t.Fatalf("pre-scan %d: %d bytes, not over the bound %d", i+1, r.Stats.MemoryBytes, bound)
		}
		if r.Stats.Reused {
			t.Errorf("pre-scan %d ran on an instance kept at %d bytes or more (bound %d)", i+1, r.Stats.MemoryBytes, bound)
		}
	}
}
