package archive

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/flate"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"sync"
	"testing"
	"time"
)

func resolveFile(t testing.TB, path string, lim Limits) Result {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	st, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	res, err := Resolve(context.Background(), f, st.Size(), filepath.Base(path), lim)
	if err != nil {
		t.Fatalf("Resolve(%s): %v", path, err)
	}
	return res
}

func resolveBytes(t testing.TB, b []byte, name string, lim Limits) Result {
	t.Helper()
	res, err := Resolve(context.Background(), bytes.NewReader(b), int64(len(b)), name, lim)
	if err != nil {
		t.Fatalf("Resolve(%s): %v", name, err)
	}
	return res
}

// readEntry reads an entry through Open.
func readEntry(e Entry) ([]byte, error) {
	rc, err := e.Open()
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	return io.ReadAll(rc)
}

func sha12(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])[:12]
}

func entryByPath(res Result, p string) (Entry, bool) {
	for _, e := range res.Entries {
		if e.Path == p {
			return e, true
		}
	}
	return Entry{}, false
}

func problemAt(res Result, p string) (Problem, bool) {
	for _, pr := range res.Problems {
		if pr.Path == p {
			return pr, true
		}
	}
	return Problem{}, false
}

func wantEntry(t *testing.T, res Result, p string, data []byte) {
	t.Helper()
	e, ok := entryByPath(res, p)
	if !ok {
		t.Errorf("no entry %s; entries %v, problems %v", p, paths(res), res.Problems)
		return
	}
	if data == nil {
		return
	}
	got, err := readEntry(e)
	if err != nil {
		t.Errorf("Open %s: %v", p, err)
	} else if !bytes.Equal(got, data) {
		t.Errorf("Open %s: %d bytes, want %d", p, len(got), len(data))
	}
	if e.Size != int64(len(data)) {
		t.Errorf("%s: Size %d, want %d", p, e.Size, len(data))
	}
}

func wantProblem(t *testing.T, res Result, p, kind string) {
	t.Helper()
	pr, ok := problemAt(res, p)
	if !ok {
		t.Errorf("no problem at %s; problems %v", p, res.Problems)
		return
	}
	if pr.Kind != kind {
		t.Errorf("problem at %s is %q, want %q: %s", p, pr.Kind, kind, pr.Reason)
	}
	// A problem about a member refuses it; one about a container (not
	// opened, cut short) stands beside its listed entry.
	if e, listed := entryByPath(res, p); listed && e.Container == None {
		t.Errorf("%s is both a problem and an entry", p)
	}
}

func paths(res Result) []string {
	var ps []string
	for _, e := range res.Entries {
		ps = append(ps, e.Path)
	}
	return ps
}

// measure runs fn and reports its duration and the growth of the live heap
// at its peak, sampled every half millisecond (runtime/metrics reads do not
// stop the world, so sampling does not distort the run).
func measure(fn func()) (growth uint64, took time.Duration) {
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	read := func() uint64 { metrics.Read(sample); return sample[0].Value.Uint64() }
	runtime.GC()
	base := read()
	var peak uint64
	var mu sync.Mutex
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		tick := time.NewTicker(500 * time.Microsecond)
		defer tick.Stop()
		for {
			v := read()
			mu.Lock()
			peak = max(peak, v)
			mu.Unlock()
			select {
			case <-stop:
				return
			case <-tick.C:
			}
		}
	})
	start := time.Now()
	fn()
	took = time.Since(start)
	close(stop)
	wg.Wait()
	peak = max(peak, read())
	if peak < base {
		return 0, took
	}
	return peak - base, took
}

// zfile is one member of a zip built by a test.
type zfile struct {
	name   string
	data   []byte
	method uint16
	mode   os.FileMode // a symlink or directory mode, when set
	flags  uint16
	// declare, when non-zero, overrides the uncompressed size in the
	// headers (a lying header); the data is then written raw, deflated.
	declare uint64
}

func buildZip(t testing.TB, files ...zfile) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, f := range files {
		h := &zip.FileHeader{Name: f.name, Method: f.method, Flags: f.flags}
		if f.mode != 0 {
			h.SetMode(f.mode)
		}
		if f.declare != 0 {
			var comp bytes.Buffer
			fw, _ := flateWriter(&comp)
			fw.Write(f.data)
			fw.Close()
			h.Method = zip.Deflate
			h.CompressedSize64 = uint64(comp.Len())
			h.UncompressedSize64 = f.declare
			h.CRC32 = 0
			w, err := zw.CreateRaw(h)
			if err != nil {
				t.Fatal(err)
			}
			w.Write(comp.Bytes())
			continue
		}
		w, err := zw.CreateHeader(h)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write(f.data); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

type tfile struct {
	hdr  tar.Header
	data []byte
}

func reg(name string, data []byte) tfile {
	return tfile{tar.Header{Name: name, Typeflag: tar.TypeReg, Mode: 0o644, Size: int64(len(data))}, data}
}

func buildTar(t testing.TB, files ...tfile) []byte {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, f := range files {
		h := f.hdr
		if err := tw.WriteHeader(&h); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write(f.data); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func gzipBytes(t testing.TB, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if _, err := zw.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func flateWriter(w io.Writer) (io.WriteCloser, error) {
	return flate.NewWriter(w, flate.BestCompression)
}
