package extract

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/agenthost/agenthost/host/figure"
	"github.com/agenthost/agenthost/internal/testcorpus"
)

// BenchmarkOfficeExtract measures extraction throughput over the office
// corpus (DOCX, XLSX, PPTX), input bytes per second, in its own loop:
// rounds over the whole corpus until a second has passed (at least 5), the
// figure being the median round. Files are read into memory first, so the
// figure is parsing, not disk.
func BenchmarkOfficeExtract(b *testing.B) {
	var files [][2]string
	var total int
	for _, kind := range []string{"docx", "xlsx", "pptx"} {
		names := testcorpus.Glob(b, "office", kind, "*."+kind)
		for _, n := range names {
			data, err := os.ReadFile(n)
			if err != nil {
				b.Fatal(err)
			}
			files = append(files, [2]string{filepath.Base(n), string(data)})
			total += len(data)
		}
	}
	if len(files) == 0 {
		b.Fatal("no office corpus")
	}
	ctx := context.Background()
	round := func() time.Duration {
		start := time.Now()
		for _, f := range files {
			data := []byte(f[1])
			if _, _, err := Extract(ctx, bytes.NewReader(data), int64(len(data)), f[0], "", Limits{}); err != nil {
				b.Fatalf("%s: %v", f[0], err)
			}
		}
		return time.Since(start)
	}
	round() // warm up
	var rates []float64
	for began := time.Now(); len(rates) < 5 || time.Since(began) < time.Second; {
		d := round()
		rates = append(rates, float64(total)/1e6/d.Seconds())
	}
	for range b.N {
		// The figure is measured above; b.N rounds would only repeat it.
	}
	mbps := figure.Median(rates)
	b.ReportMetric(mbps, "MB/s")
	figure.Report("office.extract", mbps, "MB/s")
}
