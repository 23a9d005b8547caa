package wasm

import (
	"bytes"
	"encoding/binary"
	"io"
)

// The fast I/O path (docs/plugin-abi.md): the guest reads its input from WASI
// stdin and writes its result as one framed write to stdout. A WASI read or
// write copies straight between guest memory and these buffers, where the
// Extism ABI would cost one host call per 8 bytes.

var frameMagic = []byte("\x00AGHOUT1")

const frameHeaderLen = 16

// framePrealloc is the most a frame header makes the host reserve.
const framePrealloc = 1 << 20

// stdinSource serves the current call's input.
type stdinSource struct {
	r bytes.Reader
}

func (s *stdinSource) reset(b []byte)             { s.r.Reset(b) }
func (s *stdinSource) Read(p []byte) (int, error) { return s.r.Read(p) }

// stdoutSink collects the result frame and passes other output to a log tail.
type stdoutSink struct {
	max       int64
	hdr       []byte
	want      int64 // payload bytes still expected
	framed    bool
	payload   []byte
	overflow  bool
	declared  int64
	logOutput tail
}

func (s *stdoutSink) reset(max int64) {
	s.max = max
	s.hdr = s.hdr[:0]
	s.want = 0
	s.framed = false
	s.overflow = false
	s.declared = 0
	if cap(s.payload) > 16<<20 {
		s.payload = nil
	}
	s.payload = s.payload[:0]
	s.logOutput.reset()
}

func (s *stdoutSink) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		switch {
		case s.want > 0:
			k := min(int64(len(p)), s.want)
			if !s.overflow {
				s.payload = append(s.payload, p[:k]...)
			}
			s.want -= k
			p = p[k:]
		case len(s.hdr) > 0 || bytes.HasPrefix(p, frameMagic[:min(len(p), len(frameMagic))]):
			k := min(len(p), frameHeaderLen-len(s.hdr))
			s.hdr = append(s.hdr, p[:k]...)
			p = p[k:]
			if len(s.hdr) < frameHeaderLen {
				continue
			}
			if !bytes.Equal(s.hdr[:8], frameMagic) {
				s.logOutput.Write(s.hdr)
				s.hdr = s.hdr[:0]
				continue
			}
			s.declared = int64(binary.LittleEndian.Uint64(s.hdr[8:]))
			s.hdr = s.hdr[:0]
			s.framed = true
			s.payload = s.payload[:0]
			s.want = s.declared
			if s.declared > s.max || s.declared < 0 {
				s.overflow = true
				// Refuse the payload: the guest's write fails and it stops wasting time.
				return n - len(p), io.ErrShortWrite
			}
			// The header is the guest's word: reserve at most a little of
			// it; the payload grows as its bytes really arrive.
			if want := min(s.declared, framePrealloc); int64(cap(s.payload)) < want {
				s.payload = make([]byte, 0, want)
			}
		default:
			s.logOutput.Write(p)
			p = nil
		}
	}
	return n, nil
}

// tail keeps the last bytes written to it (plugin stderr, stray stdout). It
// is never logged: only a failed call's error message quotes its first lines.
type tail struct {
	buf []byte
}

const tailMax = 8 << 10

func (t *tail) reset() { t.buf = t.buf[:0] }

func (t *tail) Write(p []byte) (int, error) {
	n := len(p)
	// p is guest memory and may be gigabytes: never copy more than is kept.
	if len(p) >= tailMax {
		t.buf = append(t.buf[:0], p[len(p)-tailMax:]...)
		return n, nil
	}
	t.buf = append(t.buf, p...)
	if len(t.buf) > tailMax {
		t.buf = append(t.buf[:0], t.buf[len(t.buf)-tailMax:]...)
	}
	return n, nil
}

func (t *tail) String() string { return string(t.buf) }
