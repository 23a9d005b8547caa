package wasm_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/agenthost/agenthost/host/wasm"
)

// memSink records what a call emits.
type memSink struct {
	files    map[string][]byte
	meta     map[string]wasm.OutputFile
	failures []string
	aborted  []string
	refuse   string // a path Begin refuses
}

func newMemSink() *memSink {
	return &memSink{files: map[string][]byte{}, meta: map[string]wasm.OutputFile{}}
}

type memFile struct {
	s   *memSink
	f   wasm.OutputFile
	buf bytes.Buffer
}

func (s *memSink) Begin(_ context.Context, f wasm.OutputFile) (wasm.OutputWriter, error) {
	if f.Path == s.refuse {
		return nil, errors.New("refused by the sink")
	}
	return &memFile{s: s, f: f}, nil
}

func (s *memSink) Fail(_ context.Context, path, kind, reason string) error {
	s.failures = append(s.failures, path+" "+kind+": "+reason)
	return nil
}

func (m *memFile) Write(p []byte) (int, error) { return m.buf.Write(p) }
func (m *memFile) Commit(context.Context) (string, error) {
	m.s.files[m.f.Path] = m.buf.Bytes()
	m.s.meta[m.f.Path] = m.f
	return fmt.Sprintf("id-%d", len(m.s.files)), nil
}
func (m *memFile) Abort(err error) { m.s.aborted = append(m.s.aborted, m.f.Path+": "+err.Error()) }

type step = map[string]any

type outcome struct {
	Code      string
	ID        string
	BytesLeft int64
}

func runSteps(t *testing.T, p *wasm.Plugin, opts *wasm.CallOptions, steps ...step) ([]outcome, wasm.Result) {
	t.Helper()
	args, _ := json.Marshal(map[string]any{"steps": steps})
	r := p.Call(context.Background(), "run", args, opts)
	var out []outcome
	if r.OK {
		if err := json.Unmarshal(r.Data, &out); err != nil {
			t.Fatal(err)
		}
	}
	return out, r
}

// TestOutputCapability: a plugin hands files back to the host by path, with
// their bytes written from its memory into the sink; misuse (writing without
// a file, past the announced size or the limits, hostile sizes and paths, a
// call without a sink) is refused or ends the call, never reaches the sink
// as a committed file, and a file left open is aborted.
func TestOutputCapability(t *testing.T) {
	h := newHost(t, wasm.EgressOptions{}, nil)
	p := load(t, h, "outputwriter")

	t.Run("files, a container and a failure", func(t *testing.T) {
		s := newMemSink()
		out, r := runSteps(t, p, &wasm.CallOptions{Output: s},
			step{"op": "begin", "path": "a.zip/docs/report.txt", "size": 5, "mimeType": "text/plain"},
			step{"op": "write", "bytes": 3},
			step{"op": "write", "bytes": 2},
			step{"op": "end"},
			step{"op": "begin", "path": "a.zip/inner.tar", "size": 0, "container": true},
			step{"op": "end"},
			step{"op": "begin", "path": "a.zip/big.bin", "size": -1},
			step{"op": "write", "bytes": 3 << 20},
			step{"op": "end"},
			step{"op": "fail", "path": "a.zip/../evil", "kind": "traversal", "reason": "climbs out"},
		)
		if !r.OK {
			t.Fatalf("call: %+v", r.Error)
		}
		for i, o := range out {
			if o.Code != "" {
				t.Fatalf("step %d: %+v", i, o)
			}
		}
		if string(s.files["a.zip/docs/report.txt"]) != "xxxxx" || len(s.files["a.zip/big.bin"]) != 3<<20 || !s.meta["a.zip/inner.tar"].Container {
			t.Fatalf("files: %v", s.meta)
		}
		if s.meta["a.zip/docs/report.txt"].MIMEType != "text/plain" || out[3].ID == "" {
			t.Fatalf("metadata or receipt missing: %+v %+v", s.meta, out[3])
		}
		if len(s.failures) != 1 || !strings.Contains(s.failures[0], "traversal: climbs out") {
			t.Fatalf("failures: %v", s.failures)
		}
		if out[0].BytesLeft != wasm.DefaultOutputBytes {
			t.Fatalf("budget after the first begin: %d", out[0].BytesLeft)
		}
	})

	// Refusals the guest can act on: the call goes on.
	for _, c := range []struct {
		name  string
		lim   wasm.OutputLimits
		steps []step
		code  string
	}{
		{"begin twice", wasm.OutputLimits{}, []step{{"op": "begin", "path": "a", "size": 1}, {"op": "begin", "path": "b", "size": 1}}, "invalid_request"},
		{"end without begin", wasm.OutputLimits{}, []step{{"op": "end"}}, "invalid_request"},
		{"empty path", wasm.OutputLimits{}, []step{{"op": "begin", "path": "", "size": 1}}, "invalid_request"},
		{"overlong path", wasm.OutputLimits{}, []step{{"op": "begin", "path": strings.Repeat("p", 5000), "size": 1}}, "invalid_request"},
		{"negative size", wasm.OutputLimits{}, []step{{"op": "begin", "path": "a", "size": -5}}, "invalid_request"},
		{"hostile size", wasm.OutputLimits{}, []step{{"op": "begin", "path": "a", "size": int64(1) << 62}}, "limit"},
		{"file over the budget", wasm.OutputLimits{MaxBytes: 100}, []step{{"op": "begin", "path": "a", "size": 101}}, "limit"},
		{"too many files", wasm.OutputLimits{MaxFiles: 1}, []step{{"op": "begin", "path": "a", "size": 0}, {"op": "end"}, {"op": "begin", "path": "b", "size": 0}}, "limit"},
		{"short file", wasm.OutputLimits{}, []step{{"op": "begin", "path": "a", "size": 10}, {"op": "write", "bytes": 4}, {"op": "end"}}, "size_mismatch"},
		{"sink refuses", wasm.OutputLimits{}, []step{{"op": "begin", "path": "refused", "size": 1}}, "refused"},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := newMemSink()
			s.refuse = "refused"
			out, r := runSteps(t, p, &wasm.CallOptions{Output: s, OutputLimits: c.lim}, c.steps...)
			if !r.OK {
				t.Fatalf("call: %+v", r.Error)
			}
			if last := out[len(out)-1]; last.Code != c.code {
				t.Fatalf("last step: %+v, want %s", last, c.code)
			}
			if c.name == "short file" && (len(s.files) != 0 || len(s.aborted) != 1) {
				t.Fatalf("a short file must be discarded: %v %v", s.files, s.aborted)
			}
		})
	}

	// Misuse of the bulk write ends the call: the guest was told the limits.
	for _, c := range []struct {
		name  string
		lim   wasm.OutputLimits
		steps []step
		code  string
	}{
		{"write without begin", wasm.OutputLimits{}, []step{{"op": "rawwrite", "bytes": 10}}, wasm.CodeTrap},
		{"write past the announced size", wasm.OutputLimits{}, []step{{"op": "begin", "path": "a", "size": 4}, {"op": "write", "bytes": 5}}, wasm.CodeTrap},
		{"write past the byte budget", wasm.OutputLimits{MaxBytes: 1 << 20}, []step{{"op": "begin", "path": "a", "size": -1}, {"op": "write", "bytes": 2 << 20}}, wasm.CodeOutputTooLarge},
		{"write into a container", wasm.OutputLimits{}, []step{{"op": "begin", "path": "c.zip", "container": true, "size": 50}, {"op": "write", "bytes": 1}}, wasm.CodeTrap},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := newMemSink()
			_, r := runSteps(t, p, &wasm.CallOptions{Output: s, OutputLimits: c.lim}, c.steps...)
			if r.OK || r.Error.Code != c.code {
				t.Fatalf("want %s, got %+v", c.code, r)
			}
			if len(s.files) != 0 {
				t.Fatalf("nothing may be committed: %v", s.files)
			}
			if c.steps[0]["op"] == "begin" && len(s.aborted) != 1 {
				t.Fatalf("the open file must be aborted when the call ends: %v", s.aborted)
			}
		})
	}

	t.Run("a file left open is aborted", func(t *testing.T) {
		s := newMemSink()
		_, r := runSteps(t, p, &wasm.CallOptions{Output: s}, step{"op": "begin", "path": "a", "size": 3}, step{"op": "write", "bytes": 2})
		if !r.OK || len(s.files) != 0 || len(s.aborted) != 1 {
			t.Fatalf("%+v files=%v aborted=%v", r, s.files, s.aborted)
		}
	})

	t.Run("no sink", func(t *testing.T) {
		out, r := runSteps(t, p, nil, step{"op": "begin", "path": "a", "size": 1}, step{"op": "fail", "path": "a", "kind": "x", "reason": "y"})
		if !r.OK || out[0].Code != "no_output" || out[1].Code != "no_output" {
			t.Fatalf("%+v %+v", out, r)
		}
		_, r = runSteps(t, p, nil, step{"op": "rawwrite", "bytes": 1})
		if r.OK || r.Error.Code != wasm.CodeCapabilityDenied {
			t.Fatalf("write without a sink: %+v", r)
		}
	})
}
