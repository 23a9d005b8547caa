package sweep_test

import (
	"bytes"
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/agenthost/agenthost/host/figure"
	"github.com/agenthost/agenthost/host/files"
	"github.com/agenthost/agenthost/host/store"
	"github.com/agenthost/agenthost/host/sweep"
)

// BenchmarkReclaim measures one sweep that reclaims 10,000 deleted files
// (each its own 1 KiB blob; the trash emptied by the same sweep, no grace),
// beside 1,000 live files it must keep, on the embedded default (SQLite and
// a blob directory) and on PostgreSQL with its own blob backend. The files
// are uploaded and deleted through files.Service, as the API does.
func BenchmarkReclaim(b *testing.B) {
	const deleted, live = 10_000, 1_000
	for _, bk := range backends {
		if bk.name == "postgres+dir" {
			continue // the deployment serve does not make
		}
		b.Run(bk.name, func(b *testing.B) {
			ctx := context.Background()
			var times []time.Duration
			for b.Loop() {
				b.StopTimer()
				e := bk.open(b)
				body := make([]byte, 1024)
				for i := 0; i < deleted+live; i++ {
					copy(body, fmt.Sprintf("%d %d", b.N, i))
					f, _, err := e.svc.Upload(ctx, e.p, files.Upload{WorkspaceID: e.ws, Name: fmt.Sprintf("f%05d.bin", i), Content: bytes.NewReader(body)})
					if err != nil {
						b.Fatal(err)
					}
					if i < deleted {
						if err := e.svc.Delete(ctx, e.p, f.ID); err != nil {
							b.Fatal(err)
						}
					}
				}
				s := sweep.New(e.db, dirOf(e), sweep.Config{Retention: store.Retention{Trash: 0}, Grace: -1})
				b.StartTimer()
				t0 := time.Now()
				res, err := s.Sweep(ctx)
				took := time.Since(t0)
				if err != nil {
					b.Fatal(err)
				}
				if res.Blobs != deleted {
					b.Fatalf("reclaimed %d blobs, want %d", res.Blobs, deleted)
				}
				times = append(times, took)
			}
			med := figure.Percentile(times, 50)
			b.ReportMetric(figure.Millis(med), "ms/sweep")
			name := "storage.reclaim.ms"
			if bk.name != "sqlite+dir" {
				name = "storage.reclaim.postgres.ms"
			}
			figure.Report(name, figure.Millis(med), "ms")
		})
	}
}
