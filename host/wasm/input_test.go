package wasm_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/agenthost/agenthost/host/wasm"
)

// memInput is an in-memory wasm.Input.
type memInput struct{ *bytes.Reader }

func (m memInput) Size() int64 { return m.Reader.Size() }

// TestInputCapability: a plugin reads its input document by range, in
// chunks of any size, at any offset, and gets a clear error without one.
func TestInputCapability(t *testing.T) {
	h := newHost(t, wasm.EgressOptions{}, nil)
	p := load(t, h, "inputreader")
	data := make([]byte, 3<<20+12345)
	rand.Read(data)
	in := &wasm.CallOptions{Input: memInput{bytes.NewReader(data)}}
	for _, c := range []struct {
		offset, length int64
		chunk          int
	}{
		{0, 0, 1 << 20},
		{0, 0, 7},
		{1, 100, 3},
		{int64(len(data)) - 10, 0, 64},
		{int64(len(data)) + 5, 0, 64},
		{2 << 20, 1 << 20, 20 << 20},
	} {
		t.Run(fmt.Sprintf("%d+%d by %d", c.offset, c.length, c.chunk), func(t *testing.T) {
			end := int64(len(data))
			if c.length > 0 && c.offset+c.length < end {
				end = c.offset + c.length
			}
			start := min(c.offset, end)
			want := sha256.Sum256(data[start:end])
			args, _ := json.Marshal(map[string]any{"offset": c.offset, "length": c.length, "chunk": c.chunk})
			r := p.Call(context.Background(), "digest", args, in)
			var got struct {
				Size   int64
				Read   int64
				SHA256 string
			}
			if !r.OK || json.Unmarshal(r.Data, &got) != nil {
				t.Fatalf("digest: %+v", r)
			}
			if got.Size != int64(len(data)) || got.Read != end-start || got.SHA256 != hex.EncodeToString(want[:]) {
				t.Fatalf("got %+v, want %d bytes with sha %x", got, end-start, want)
			}
		})
	}
	r := p.Call(context.Background(), "digest", json.RawMessage(`{"offset":0,"length":0,"chunk":10}`), nil)
	if r.OK || r.Error == nil || r.Error.Code != "no_input" {
		t.Fatalf("without input: %+v", r)
	}
}
