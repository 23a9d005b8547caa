//go:build !wasip1

package main

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/agenthost/agenthost/host/figure"
	"github.com/agenthost/agenthost/host/wasm"
)

// BenchmarkFileToolCall: readFile and listFiles called over HTTP on the
// running stack (API, tool set, the sandboxed plugin, the files capability,
// the store), alternately, against a workspace of 50 text files of 4 KiB
// (filetool.call.p50.ms: the median milliseconds of one call, request to
// answer).
func BenchmarkFileToolCall(b *testing.B) {
	s := newStack(b)
	var ids []string
	for i := range 50 {
		f := s.upload(b, s.p, s.ws, fmt.Sprintf("note-%02d.md", i), strings.Repeat(fmt.Sprintf("line %d of a note\n", i), 200))
		ids = append(ids, f.ID)
	}
	call := func(tool string, args map[string]any) time.Duration {
		start := time.Now()
		var res wasm.Result
		if code, raw := s.do(b, s.token, "POST", "/workspaces/"+s.ws+"/tools/"+tool, args, &res); code != 200 || !res.OK {
			b.Fatalf("%s: %d %s", tool, code, raw)
		}
		return time.Since(start)
	}
	// Warm: the plugin's instances and the connections.
	for i := range 5 {
		call("readFile", map[string]any{"file": ids[i]})
		call("listFiles", map[string]any{})
	}
	var ds []time.Duration
	for i := range 200 {
		if i%2 == 0 {
			ds = append(ds, call("readFile", map[string]any{"file": ids[i%len(ids)]}))
		} else {
			ds = append(ds, call("listFiles", map[string]any{"name": "note-*", "limit": 20}))
		}
	}
	figure.Report("filetool.call.p50.ms", figure.Millis(figure.Percentile(ds, 50)), "ms")
}
