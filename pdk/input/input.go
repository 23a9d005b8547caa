// Package input reads the document a call was given by range (capability
// "input"; declare it in plugin.json). Extractors use it so a large file is
// never copied into the plugin whole: the host copies each requested range
// straight into the plugin's memory.
package input

import (
	"errors"
	"fmt"
	"io"
)

// ErrNoInput: the call was made without a document.
var ErrNoInput = errors.New("input: the call has no input document")

// maxRead mirrors the host's limit for one read.
const maxRead = 16 << 20

// Size is the input's length in bytes, or ErrNoInput.
func Size() (int64, error) {
	n := size()
	if n < 0 {
		return 0, ErrNoInput
	}
	return n, nil
}

// Reader is the input as an io.ReaderAt (and an io.ReadSeeker through
// io.NewSectionReader). It is stateless, so one value serves concurrent use.
type Reader struct{}

// ReadAt implements io.ReaderAt.
func (Reader) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, fmt.Errorf("input: negative offset %d", off)
	}
	total := 0
	for total < len(p) {
		chunk := p[total:min(len(p), total+maxRead)]
		n := readAt(off+int64(total), chunk)
		if n < 0 {
			return total, ErrNoInput
		}
		total += n
		if n < len(chunk) {
			return total, io.EOF
		}
	}
	return total, nil
}

// Open returns the input as a seekable reader with its size.
func Open() (*io.SectionReader, error) {
	n, err := Size()
	if err != nil {
		return nil, err
	}
	return io.NewSectionReader(Reader{}, 0, n), nil
}
