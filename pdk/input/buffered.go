package input

import (
	"bytes"
	"fmt"
	"io"
)

// File is the input as parsers take it: by range and as a stream.
type File interface {
	io.ReaderAt
	io.ReadSeeker
	Size() int64
}

// blockSize and blocks shape the cache of a large input: parsers read
// small pieces at scattered places (an object, a header, a directory
// entry), and each piece read from the host is a call across the sandbox.
const (
	blockSize = 1 << 20
	blocks    = 8
)

// Buffered returns the input for parsers that read it in many small
// pieces: an input of up to whole bytes is copied into the plugin at once
// (one host call); a larger one is read by range through a cache of
// 1 MiB blocks (8 MiB at most), so that neither a small read nor a large
// document costs more than it must.
func Buffered(whole int64) (File, error) {
	n, err := Size()
	if err != nil {
		return nil, err
	}
	if n <= whole {
		data := make([]byte, n)
		if _, err := io.ReadFull(io.NewSectionReader(Reader{}, 0, n), data); err != nil {
			return nil, fmt.Errorf("input: reading %d bytes: %w", n, err)
		}
		return bytes.NewReader(data), nil
	}
	return io.NewSectionReader(&blockCache{r: Reader{}, size: n}, 0, n), nil
}

// blockCache serves reads from the most recently used blocks of r.
type blockCache struct {
	r     io.ReaderAt
	size  int64
	cache []block // most recently used last
}

type block struct {
	off  int64
	data []byte
}

// ReadAt implements io.ReaderAt.
func (c *blockCache) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, fmt.Errorf("input: negative offset %d", off)
	}
	if len(p) >= blockSize {
		return c.r.ReadAt(p, off) // large reads gain nothing from the cache
	}
	total := 0
	for total < len(p) {
		at := off + int64(total)
		if at >= c.size {
			return total, io.EOF
		}
		b, err := c.block(at - at%blockSize)
		if err != nil {
			return total, err
		}
		total += copy(p[total:], b.data[at-b.off:])
	}
	return total, nil
}

func (c *blockCache) block(off int64) (block, error) {
	last := len(c.cache) - 1
	for i, b := range c.cache {
		if b.off == off {
			copy(c.cache[i:], c.cache[i+1:])
			c.cache[last] = b
			return b, nil
		}
	}
	n := min(int64(blockSize), c.size-off)
	var data []byte
	if len(c.cache) == blocks {
		// The least recently used block's buffer is read into.
		data = c.cache[0].data[:0]
		copy(c.cache, c.cache[1:])
		c.cache = c.cache[:last]
	}
	if int64(cap(data)) < n {
		data = make([]byte, n)
	}
	data = data[:n]
	if _, err := c.r.ReadAt(data, off); err != nil && err != io.EOF {
		return block{}, err
	}
	b := block{off: off, data: data}
	c.cache = append(c.cache, b)
	return b, nil
}
