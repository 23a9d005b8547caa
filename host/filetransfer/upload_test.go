package filetransfer_test

import (
	"bytes"
	"context"
	"encoding/json"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/agenthost/agenthost/host/connections"
	"github.com/agenthost/agenthost/host/toolcall"
	"github.com/agenthost/agenthost/host/wasm"
	"github.com/agenthost/agenthost/host/wasm/wasmtest"
	"github.com/agenthost/agenthost/pdk/connector/wire"
)

// TestFileServerUploadStreams: an upload to FTP, FTPS and SFTP is
// streamed by the host from the running upload to the server (the ftp
// connector asks for it with filetransfer.WriteUpload), byte for byte and
// under the temporary name first; the connector's instance stays far
// smaller than the 48 MiB file. Before, the file travelled into the
// connector and back out in its write request (held twice there).
func TestFileServerUploadStreams(t *testing.T) {
	data := make([]byte, 48<<20+7)
	r := rand.New(rand.NewPCG(48, 7))
	for i := range data {
		data[i] = byte(r.Uint32())
	}
	for _, proto := range []string{"ftp", "ftps", "sftp"} {
		t.Run(proto, func(t *testing.T) {
			root, _ := tree(t)
			s := serve(t, proto, root)
			e := s.e
			c := e.connect(t, e.alice, s.url, account, password, s.pin)
			req, _ := json.Marshal(wire.UploadRequest{Connection: c.ID, Service: "files", Path: "docs", Name: "big.bin", Size: int64(len(data))})
			ctx := connections.WithUpload(toolcall.With(context.Background(), toolcall.Caller{Principal: e.alice}), connections.BytesSource("big.bin", "", data))
			res := wasmtest.Plugin(t, e.host, "ftp").Call(ctx, wire.ToolUpload, req, &wasm.CallOptions{Tenant: e.alice.TenantID})
			if !res.OK {
				t.Fatalf("upload: %+v %+v", res, res.Error)
			}
			if res.Stats.MemoryBytes == 0 || res.Stats.MemoryBytes > 24<<20 {
				t.Fatalf("the ftp connector grew to %d bytes for a %d-byte upload", res.Stats.MemoryBytes, len(data))
			}
			b, err := os.ReadFile(filepath.Join(root, "docs", "big.bin"))
			if err != nil || !bytes.Equal(b, data) {
				t.Fatalf("on the server: %d bytes, %v", len(b), err)
			}
			// Outside an upload there is nothing to stream.
			res = wasmtest.Plugin(t, e.host, "ftp").Call(toolcall.With(context.Background(), toolcall.Caller{Principal: e.alice}), wire.ToolUpload, req, &wasm.CallOptions{Tenant: e.alice.TenantID})
			if res.OK {
				t.Fatalf("an upload outside an upload call succeeded")
			}
		})
	}
}
