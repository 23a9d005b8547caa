package workflows_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/agenthost/agenthost/host/figure"
	"github.com/agenthost/agenthost/host/store"
	"github.com/agenthost/agenthost/host/testenv"
	"github.com/agenthost/agenthost/host/workflows"
)

// BenchmarkAppend reports what appending a `chunk` event (the token
// streaming path) costs on each dialect: workflows.append.<dialect>.p50 µs,
// one appender; workflows.append.<dialect>.8writers events/s, eight
// appenders on eight workflows at once.
func BenchmarkAppend(b *testing.B) {
	dir := b.TempDir()
	url := testenv.Postgres(b)
	for _, d := range []struct {
		name string
		cfg  store.Config
	}{{"sqlite", store.Config{Dir: dir}}, {"postgres", store.Config{URL: url}}} {
		c := newCluster(b, func(tb testing.TB) *store.DB { return open(tb, d.cfg) })
		ctx := context.Background()
		wf := c.start(b)
		chunk := workflows.ChunkData{MessageID: "0190c5f0-0000-7000-8000-000000000001", Text: "Hello, wor"}
		const n = 2000
		lat := make([]time.Duration, 0, n)
		for range n {
			start := time.Now()
			if _, err := c.a.svc.Append(ctx, c.alice, wf.ID, workflows.EventChunk, chunk); err != nil {
				b.Fatal(err)
			}
			lat = append(lat, time.Since(start))
		}
		figure.Report("workflows.append."+d.name+".p50", figure.Micros(figure.Percentile(lat, 50)), "µs")

		const writers, each = 8, 500
		var ids []string
		for range writers {
			ids = append(ids, c.start(b).ID)
		}
		var wg sync.WaitGroup
		start := time.Now()
		for _, id := range ids {
			wg.Go(func() {
				for range each {
					if _, err := c.a.svc.Append(ctx, c.alice, id, workflows.EventChunk, chunk); err != nil {
						b.Error(err)
						return
					}
				}
			})
		}
		wg.Wait()
		figure.Report("workflows.append."+d.name+".8writers", float64(writers*each)/time.Since(start).Seconds(), "events/s")
	}
}
