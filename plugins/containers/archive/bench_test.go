package archive

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agenthost/agenthost/host/figure"
	"github.com/agenthost/agenthost/internal/testcorpus"
)

// BenchmarkResolveThroughput resolves the benign corpus archives and reads
// every file in them through Entry.Open, as ingestion does. The figure is the
// bytes of files delivered per second (MB = 10^6 bytes), the median of seven
// rounds after a warm-up, with the archives in memory so the disk does not
// count. It measures in its own loop, so it runs the same under -benchtime 1x.
func BenchmarkResolveThroughput(b *testing.B) {
	dir := filepath.Join(testcorpus.Path(b, "archives"), "benign")
	paths, _ := filepath.Glob(filepath.Join(dir, "*"))
	type input struct {
		name string
		data []byte
	}
	var inputs []input
	for _, p := range paths {
		if strings.HasSuffix(p, ".txt") {
			continue
		}
		data, err := os.ReadFile(p)
		if err != nil {
			b.Fatal(err)
		}
		inputs = append(inputs, input{filepath.Base(p), data})
	}
	if len(inputs) == 0 {
		b.Fatal("no benign archives")
	}
	round := func() (int64, time.Duration) {
		var n int64
		start := time.Now()
		for _, in := range inputs {
			res, err := Resolve(context.Background(), bytes.NewReader(in.data), int64(len(in.data)), in.name, Limits{})
			if err != nil || len(res.Problems) > 0 {
				b.Fatalf("%s: %v %v", in.name, err, res.Problems)
			}
			for _, e := range res.Entries {
				if e.Dir || e.Container != None {
					continue
				}
				rc, err := e.Open()
				if err != nil {
					b.Fatal(err)
				}
				k, err := io.Copy(io.Discard, rc)
				rc.Close()
				if err != nil {
					b.Fatal(err)
				}
				n += k
			}
		}
		return n, time.Since(start)
	}
	round()
	var rates []float64
	for range 7 {
		n, d := round()
		rates = append(rates, float64(n)/1e6/d.Seconds())
	}
	figure.Report("container.resolve.throughput", figure.Median(rates), "MB/s")
}
