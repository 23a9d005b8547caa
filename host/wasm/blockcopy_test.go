package wasm_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"math"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/agenthost/agenthost/host/wasm"
	"github.com/agenthost/agenthost/host/wasm/wasmbin"
)

// memFiles is a capability "files" of one slot, for moving payloads
// through the capability convention: write keeps the data, read answers
// it. It speaks the wire format of host/files' capability (the fields
// pdk/files sends and reads); what it measures and tests is the transport.
type memFiles struct {
	mu   sync.Mutex
	data []byte
}

func (m *memFiles) capability() wasm.Capability {
	const mod = wasm.CapabilityPrefix + "files"
	return wasm.Capability{Name: "files", Description: "test files of one slot", Functions: []wasm.HostFunction{
		wasm.JSONFunction(mod, "write", true, func(_ context.Context, _ *wasm.Call, req json.RawMessage) (any, error) {
			var r struct {
				Name     string `json:"name"`
				MIMEType string `json:"mimeType"`
				Data     []byte `json:"data"`
			}
			if err := wasm.DecodeRequest(req, &r); err != nil {
				return nil, &wasm.CapabilityError{Code: "invalid_request", Message: err.Error()}
			}
			m.mu.Lock()
			m.data = r.Data
			m.mu.Unlock()
			return map[string]any{"fileId": "f1", "name": r.Name, "mimeType": r.MIMEType, "size": len(r.Data)}, nil
		}),
		wasm.JSONFunction(mod, "read", false, func(_ context.Context, _ *wasm.Call, req json.RawMessage) (any, error) {
			var r struct {
				File string `json:"file"`
			}
			if err := wasm.DecodeRequest(req, &r); err != nil || r.File != "f1" {
				return nil, &wasm.CapabilityError{Code: "not_found", Message: "no such file"}
			}
			m.mu.Lock()
			defer m.mu.Unlock()
			return map[string]any{"fileId": "f1", "name": "payload.bin", "mimeType": "application/octet-stream", "size": len(m.data), "version": 1, "data": m.data}, nil
		}),
	}}
}

// blockCopyHost loads the blockcopy test plugin with memFiles as its files.
func blockCopyHost(tb testing.TB) (*wasm.Plugin, *memFiles) {
	tb.Helper()
	files := &memFiles{}
	reg, err := wasm.NewRegistry(append(wasm.StandardCapabilities(wasm.EgressOptions{}), files.capability())...)
	if err != nil {
		tb.Fatal(err)
	}
	h := newHost(tb, wasm.EgressOptions{}, func(c wasm.Config) wasm.Config { return c.WithCapabilities(reg) })
	return load(tb, h, "blockcopy"), files
}

// pattern is the blockcopy plugin's payload of n bytes.
func pattern(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*7 + i>>8)
	}
	return b
}

// TestBlockCopyCarriesCapabilityPayloads: requests and answers of any size
// (around the 8-byte words the Extism ABI moves, and megabytes) cross intact.
func TestBlockCopyCarriesCapabilityPayloads(t *testing.T) {
	p, files := blockCopyHost(t)
	for _, n := range []int{0, 1, 5, 7, 8, 9, 4095, 1 << 20, 3<<20 + 5} {
		r := call(t, p, "roundTrip", map[string]any{"size": n})
		var got struct {
			Size   int
			SHA256 string
		}
		if !r.OK || json.Unmarshal(r.Data, &got) != nil {
			t.Fatalf("%d bytes: %+v", n, r)
		}
		want := pattern(n)
		sum := sha256.Sum256(want)
		if got.Size != n || got.SHA256 != hex.EncodeToString(sum[:]) {
			t.Fatalf("%d bytes: the plugin read back %+v", n, got)
		}
		if !slices.Equal(files.data, want) {
			t.Fatalf("%d bytes: the host received %d different bytes", n, len(files.data))
		}
	}
}

// TestBlockCopyRefusesHostileArguments: a guest that passes kernel offsets
// that are no live block of its call, lengths other than a block's, or
// guest ranges outside its memory (wrapping 32 bits included) traps with an
// error naming the problem; nothing is copied, the host goes on, and the
// plugin's next call runs.
func TestBlockCopyRefusesHostileArguments(t *testing.T) {
	p, _ := blockCopyHost(t)
	const top = math.MaxUint32
	for _, c := range []struct {
		name string
		args map[string]any
		code string
		want string
	}{
		{"read of no block", map[string]any{"op": "read", "offset": 12345, "len": 8, "size": 8, "relative": true, "ptr": 0}, wasm.CodeTrap, "no block at offset 12345"},
		{"read at the last offset", map[string]any{"op": "read", "offset": uint64(math.MaxUint64 - 7), "len": 8}, wasm.CodeTrap, "no block at offset 18446744073709551608"},
		{"read of a freed block", map[string]any{"op": "readFreed", "size": 64}, wasm.CodeTrap, "no block at offset"},
		{"read inside a block", map[string]any{"op": "readInside", "size": 64}, wasm.CodeTrap, "no block at offset"},
		{"read shorter than the block", map[string]any{"op": "read", "size": 64, "len": 32, "relative": true}, wasm.CodeTrap, "length 32 is not the length 64"},
		{"read longer than the block", map[string]any{"op": "read", "size": 64, "len": 65, "relative": true}, wasm.CodeTrap, "length 65 is not the length 64"},
		{"read of length 2^32-1", map[string]any{"op": "read", "size": 64, "len": top, "relative": true}, wasm.CodeTrap, "length 4294967295 is not"},
		{"read wrapping 32 bits", map[string]any{"op": "read", "size": 64, "len": 64, "ptr": top - 15}, wasm.CodeTrap, "destination [4294967280,+64) is outside the guest's memory"},
		{"read past memory", map[string]any{"op": "read", "size": 64, "len": 64, "ptr": 1 << 31}, wasm.CodeTrap, "is outside the guest's memory"},
		{"write wrapping 32 bits", map[string]any{"op": "write", "ptr": top, "len": 2}, wasm.CodeTrap, "source [4294967295,+2) is outside the guest's memory"},
		{"write of 4 GiB", map[string]any{"op": "write", "ptr": 0, "len": top}, wasm.CodeTrap, "source [0,+4294967295) is outside the guest's memory"},
		{"write past memory", map[string]any{"op": "write", "ptr": 1 << 31, "len": 16}, wasm.CodeTrap, "is outside the guest's memory"},
		{"writes past the kernel's limit", map[string]any{"op": "fill", "size": 16 << 20}, wasm.CodeOutOfMemory, "kernel memory limit"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := call(t, p, "raw", c.args)
			if r.OK || r.Error.Code != c.code || !strings.Contains(r.Error.Message, c.want) || !strings.Contains(r.Error.Message, wasm.KernelModule) {
				t.Fatalf("got %+v %s, want %s naming %s and %q", r.Error, r.Data, c.code, wasm.KernelModule, c.want)
			}
			if r := call(t, p, "roundTrip", map[string]any{"size": 100}); !r.OK {
				t.Fatalf("the next call: %+v", r.Error)
			}
		})
	}
	// A block offset kept from an earlier call names nothing in this one
	// (the kernel starts each call empty). The same instance serves the
	// next call when it is idle; on another one the step starts over.
	t.Run("read of an earlier call's block", func(t *testing.T) {
		for i := 0; ; i++ {
			r := call(t, p, "raw", map[string]any{"op": "readStale", "size": 64})
			if r.OK && i < 4 {
				continue // "kept": this instance had no earlier block yet
			}
			if r.OK || r.Error.Code != wasm.CodeTrap || !strings.Contains(r.Error.Message, "no block at offset") {
				t.Fatalf("got %+v %s", r.Error, r.Data)
			}
			return
		}
	})
}

// TestBlockCopyCopies: the bytes read back are those written, in place or
// shifted over the buffer they came from, and an empty write is offset 0.
func TestBlockCopyCopies(t *testing.T) {
	p, _ := blockCopyHost(t)
	for _, c := range []struct {
		args map[string]any
		want string
	}{
		{map[string]any{"op": "roundTrip", "size": 1}, ""},
		{map[string]any{"op": "roundTrip", "size": 13}, ""},
		{map[string]any{"op": "roundTrip", "size": 5 << 20}, ""},
		{map[string]any{"op": "overlap", "size": 4096, "ptr": 3}, "intact"},
		{map[string]any{"op": "overlap", "size": 4096, "ptr": 2000}, "intact"},
		{map[string]any{"op": "write", "ptr": 0, "len": 0}, "0"},
		{map[string]any{"op": "write", "ptr": top32(), "len": 0}, "0"},
	} {
		r := call(t, p, "raw", c.args)
		if !r.OK {
			t.Fatalf("%v: %+v", c.args, r.Error)
		}
		if c.args["op"] == "roundTrip" {
			sum := sha256.Sum256(pattern(c.args["size"].(int)))
			c.want = hex.EncodeToString(sum[:])
		}
		if r.Text != c.want {
			t.Fatalf("%v: %q, want %q", c.args, r.Text, c.want)
		}
	}
}

func top32() uint32 { return math.MaxUint32 }

// TestBlockCopyImportedOnlyWithCapabilities: Go's linker drops the PDK's
// agenthost:kernel imports from a plugin that calls no agenthost
// capability, so it runs in any Extism host; one that does imports both.
func TestBlockCopyImportedOnlyWithCapabilities(t *testing.T) {
	for _, c := range []struct {
		plugin string
		want   bool
	}{{"echo", false}, {"compute", false}, {"netclient", true}, {"blockcopy", true}} {
		imports, err := wasmbin.Imports(testModule(t, c.plugin))
		if err != nil {
			t.Fatal(err)
		}
		var kernel, others []string
		for _, im := range imports {
			switch {
			case im.Module == wasm.KernelModule:
				kernel = append(kernel, im.Name)
			case im.Module != "wasi_snapshot_preview1" && im.Module != wasm.ExtismEnv:
				others = append(others, im.Module+"."+im.Name)
			}
		}
		slices.Sort(kernel)
		kernel = slices.Compact(kernel) // blockcopy imports them beside the PDK
		if c.want && !slices.Equal(kernel, []string{"read", "write"}) || !c.want && (len(kernel) > 0 || len(others) > 0) {
			t.Fatalf("%s imports %v from %s and %v besides WASI and Extism", c.plugin, kernel, wasm.KernelModule, others)
		}
	}
}

// TestRegistryRefusesTheKernelModule: no capability may provide (and so
// replace) the host's own block copies.
func TestRegistryRefusesTheKernelModule(t *testing.T) {
	_, err := wasm.NewRegistry(wasm.Capability{Name: "sneaky", Functions: []wasm.HostFunction{{Module: wasm.KernelModule, Name: "read"}}})
	if err == nil || !strings.Contains(err.Error(), wasm.KernelModule) {
		t.Fatalf("NewRegistry: %v", err)
	}
}
