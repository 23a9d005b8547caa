package input

import (
	"bytes"
	"io"
	"math/rand/v2"
	"testing"
)

// countingReader counts the reads that reach the host.
type countingReader struct {
	r     *bytes.Reader
	reads int
}

func (c *countingReader) ReadAt(p []byte, off int64) (int, error) {
	c.reads++
	return c.r.ReadAt(p, off)
}

// TestBlockCache: reads of any size at any offset through the cache give
// the input's bytes (and io.EOF past its end), and small scattered reads
// within a few blocks reach the host once per block.
func TestBlockCache(t *testing.T) {
	data := make([]byte, 5*blockSize+12345)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range data {
		data[i] = byte(rng.Uint32())
	}
	src := &countingReader{r: bytes.NewReader(data)}
	c := &blockCache{r: src, size: int64(len(data))}
	for _, tc := range []struct {
		off  int64
		n    int
		want int
		eof  bool
	}{
		{0, 10, 10, false},
		{blockSize - 3, 10, 10, false},                         // across two blocks
		{int64(len(data)) - 5, 10, 5, true},                    // past the end
		{int64(len(data)), 1, 0, true},                         // at the end
		{2*blockSize + 7, 3 * blockSize, 3 * blockSize, false}, // large: straight through
	} {
		p := make([]byte, tc.n)
		n, err := c.ReadAt(p, tc.off)
		if n != tc.want || (err == io.EOF) != tc.eof || (err != nil && err != io.EOF) {
			t.Fatalf("ReadAt(%d bytes at %d) = %d, %v; want %d (eof %v)", tc.n, tc.off, n, err, tc.want, tc.eof)
		}
		if !bytes.Equal(p[:n], data[tc.off:tc.off+int64(n)]) {
			t.Fatalf("ReadAt(%d bytes at %d): wrong bytes", tc.n, tc.off)
		}
	}
	src.reads = 0
	c = &blockCache{r: src, size: int64(len(data))}
	for range 10000 {
		off := rng.Int64N(3*blockSize - 4096)
		p := make([]byte, 1+rng.IntN(4096))
		n, err := c.ReadAt(p, off)
		if err != nil || !bytes.Equal(p[:n], data[off:off+int64(n)]) {
			t.Fatalf("scattered read at %d: %d, %v", off, n, err)
		}
	}
	if src.reads != 3 {
		t.Errorf("10,000 small reads in 3 blocks reached the host %d times, want 3", src.reads)
	}
	// More blocks than the cache holds: the least recently used go.
	for b := range int64(blocks + 2) {
		p := make([]byte, 1)
		if _, err := c.ReadAt(p, (b%6)*blockSize); err != nil && err != io.EOF {
			t.Fatal(err)
		}
	}
	if len(c.cache) > blocks {
		t.Errorf("the cache holds %d blocks, at most %d", len(c.cache), blocks)
	}
}
