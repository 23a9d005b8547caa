package indexing_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agenthost/agenthost/host/figure"
	"github.com/agenthost/agenthost/host/knowledge/extract"
	"github.com/agenthost/agenthost/host/wasm"
	"github.com/agenthost/agenthost/host/wasm/wasmtest"
	"github.com/agenthost/agenthost/internal/testcorpus"
)

// discardSink counts the bytes a container call emits.
type discardSink struct{ n int64 }

type discardFile struct{ s *discardSink }

func (s *discardSink) Begin(context.Context, wasm.OutputFile) (wasm.OutputWriter, error) {
	return discardFile{s}, nil
}
func (s *discardSink) Fail(context.Context, string, string, string) error { return nil }
func (f discardFile) Write(p []byte) (int, error)                         { f.s.n += int64(len(p)); return len(p), nil }
func (f discardFile) Commit(context.Context) (string, error)              { return "", nil }
func (f discardFile) Abort(error)                                         {}

type bytesInput struct{ *bytes.Reader }

func (b bytesInput) Size() int64 { return b.Reader.Size() }

// BenchmarkContainerPlugin reports container.resolve.plugin.throughput: the
// corpus's benign archives resolved by the sandboxed containers plugin,
// reading them through the input capability and handing every inner file
// to the host through the output capability (bytes of inner files per
// second, MB = 10^6; the sink discards them, so storage does not count),
// median of five rounds after a warm-up. container.resolve.throughput is the
// same library natively (plugins/containers/archive).
func BenchmarkContainerPlugin(b *testing.B) {
	ctx := context.Background()
	res := extract.NewContainers(wasmtest.Host(b, "containers"))
	paths := testcorpus.Glob(b, "archives", "benign", "*")
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
	round := func() (int64, time.Duration) {
		var n int64
		start := time.Now()
		for _, in := range inputs {
			s := &discardSink{}
			if _, err := res.Resolve(ctx, in.name, "", "", bytesInput{bytes.NewReader(in.data)}, s); err != nil {
				b.Fatalf("%s: %v", in.name, err)
			}
			n += s.n
		}
		return n, time.Since(start)
	}
	round()
	var rates []float64
	for range 5 {
		n, d := round()
		rates = append(rates, float64(n)/1e6/d.Seconds())
	}
	figure.Report("container.resolve.plugin.throughput", figure.Median(rates), "MB/s")
}
