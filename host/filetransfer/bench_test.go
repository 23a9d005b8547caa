package filetransfer_test

import (
	"context"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/agenthost/agenthost/host/connections"
	"github.com/agenthost/agenthost/host/figure"
	"github.com/agenthost/agenthost/pdk/connector/wire"
)

// BenchmarkFileServerUpload reports connector.upload.100MB.ms.sftp and
// .ftp: a 100 MB file (100,000,000 bytes of noise) uploaded by the ftp
// connector to the test SFTP and FTP servers on loopback (the connector's
// upload call, the host streaming the file to the server under the
// temporary name, the rename), with replace; the median of b.N runs.
func BenchmarkFileServerUpload(b *testing.B) {
	data := make([]byte, 100_000_000)
	r := rand.New(rand.NewPCG(100, 7))
	for i := range data {
		data[i] = byte(r.Uint32())
	}
	for _, proto := range []string{"sftp", "ftp"} {
		b.Run(proto, func(b *testing.B) {
			root, _ := tree(b)
			s := serve(b, proto, root)
			e := s.e
			c := e.connect(b, e.alice, s.url, account, password, s.pin)
			var took []float64
			for i := 0; i < b.N; i++ {
				ctx := connections.WithUpload(context.Background(), connections.BytesSource("big.bin", "", data))
				t0 := time.Now()
				if _, err := e.resolver.Upload(ctx, e.alice, wire.UploadRequest{Connection: c.ID, Service: "files", Path: "docs", Name: "big.bin", Conflict: "replace"}); err != nil {
					b.Fatal(err)
				}
				took = append(took, figure.Millis(time.Since(t0)))
			}
			figure.Report("connector.upload.100MB.ms."+proto, figure.Median(took), "ms")
		})
	}
}
