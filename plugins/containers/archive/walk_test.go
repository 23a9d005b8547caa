package archive

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"sync/atomic"
	"testing"
	"testing/fstest"
)

// countingReaderAt counts the input bytes read.
type countingReaderAt struct {
	r io.ReaderAt
	n atomic.Int64
}

func (c *countingReaderAt) ReadAt(p []byte, off int64) (int, error) {
	n, err := c.r.ReadAt(p, off)
	c.n.Add(int64(n))
	return n, err
}

// TestWalkOnePass: Walk hands every file of a TGZ to the callback while the
// stream is on it, reading the input about once, where opening each member
// afterwards re-expands the stream up to it.
func TestWalkOnePass(t *testing.T) {
	var files []tfile
	want := map[string][]byte{}
	for i := range 40 {
		data := randomBytes(20_000, uint64(100+i))
		name := fmt.Sprintf("dir/f%02d.bin", i)
		files = append(files, reg(name, data))
		want["w.tgz/"+name] = data
	}
	tgz := gzipBytes(t, buildTar(t, files...))

	in := &countingReaderAt{r: bytes.NewReader(tgz)}
	var order []string
	res, err := Walk(context.Background(), in, int64(len(tgz)), "w.tgz", Limits{}, func(e Entry, r io.Reader) error {
		order = append(order, e.Path)
		if (r == nil) != (e.Dir || e.Container != None) {
			t.Errorf("%s: reader %v for dir %v container %v", e.Path, r != nil, e.Dir, e.Container)
		}
		if r == nil {
			return nil
		}
		b, err := io.ReadAll(r)
		if err != nil {
			return err
		}
		if !bytes.Equal(b, want[e.Path]) {
			t.Errorf("%s: %d bytes differ", e.Path, len(b))
		}
		return nil
	})
	if err != nil || len(res.Problems) > 0 {
		t.Fatalf("Walk: %v %v", err, res.Problems)
	}
	if !slices.Equal(order, paths(res)) {
		t.Errorf("callback order %v, entries %v", order, paths(res))
	}
	if len(order) != 41 {
		t.Errorf("%d entries", len(order))
	}
	walked := in.n.Load()

	in.n.Store(0)
	res2, err := Resolve(context.Background(), in, int64(len(tgz)), "w.tgz", Limits{})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range res2.Entries[1:] {
		if _, err := readEntry(e); err != nil {
			t.Fatal(err)
		}
	}
	opened := in.n.Load()
	t.Logf("input bytes read: Walk %d, Resolve+Open each %d (input %d)", walked, opened, len(tgz))
	if walked > 2*int64(len(tgz)) {
		t.Errorf("Walk read %d bytes of a %d-byte input", walked, len(tgz))
	}
}

func TestWalkStops(t *testing.T) {
	z := buildZip(t, zfile{name: "a.txt", data: []byte("a")}, zfile{name: "b.txt", data: []byte("b")}, zfile{name: "c.txt", data: []byte("c")})
	stop := errors.New("enough")
	var seen []string
	res, err := Walk(context.Background(), bytes.NewReader(z), int64(len(z)), "s.zip", Limits{}, func(e Entry, r io.Reader) error {
		seen = append(seen, e.Name)
		if e.Name == "b.txt" {
			return stop
		}
		return nil
	})
	if !errors.Is(err, stop) || !res.Truncated || !slices.Equal(seen, []string{"s.zip", "a.txt", "b.txt"}) {
		t.Errorf("err %v, truncated %v, seen %v", err, res.Truncated, seen)
	}

	fsys := fstest.MapFS{"x/a.txt": {Data: []byte("a")}, "x/s.zip": {Data: z}}
	var got []string
	_, err = WalkFS(context.Background(), fsys, "up", Limits{}, func(e Entry, r io.Reader) error {
		if r != nil {
			b, _ := io.ReadAll(r)
			got = append(got, e.Path+"="+string(b))
		}
		return nil
	})
	if err != nil || !slices.Equal(got, []string{"up/x/a.txt=a", "up/x/s.zip/a.txt=a", "up/x/s.zip/b.txt=b", "up/x/s.zip/c.txt=c"}) {
		t.Errorf("WalkFS: %v %v", err, got)
	}
}

// TestWalkBadEntry: a file whose bytes fail while the callback reads them
// (here a CRC mismatch found at its end) is that file's problem; the walk
// goes on to its siblings even when the callback returns the error.
func TestWalkBadEntry(t *testing.T) {
	data := randomBytes(4000, 200)
	z := buildZip(t, zfile{name: "bad.bin", data: data}, zfile{name: "good.txt", data: []byte("good")})
	// Flip a byte of the stored data: the header and size stay right.
	i := bytes.Index(z, data[:64])
	z[i+3000] ^= 0xff
	var got []string
	res, err := Walk(context.Background(), bytes.NewReader(z), int64(len(z)), "c.zip", Limits{}, func(e Entry, r io.Reader) error {
		if r == nil {
			return nil
		}
		_, err := io.ReadAll(r)
		got = append(got, e.Name)
		return err
	})
	if err != nil {
		t.Fatalf("Walk: %v", err)
	}
	if !slices.Equal(got, []string{"bad.bin", "good.txt"}) {
		t.Errorf("callback saw %v", got)
	}
	p, ok := problemAt(res, "c.zip/bad.bin")
	if !ok {
		t.Fatalf("problems %v", res.Problems)
	}
	t.Logf("%v", p)
}
