// Package tiffpages reads the pages of a multi-page TIFF (a fax, a
// scanner's batch): each page is an image file directory (IFD) in a chain
// from the header. golang.org/x/image/tiff decodes the first only; Page
// gives a copy of the file whose header points at the page asked for, so
// the same decoder reads any of them. It runs inside the plugins'
// sandbox, on bytes read whole.
package tiffpages

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// MaxPages bounds the pages counted: a chain longer than this (or one
// that loops) is a hostile or broken file, read no further.
const MaxPages = 10_000

// ErrNotTIFF: the bytes do not start with a TIFF header.
var ErrNotTIFF = errors.New("not a TIFF file")

// offsets lists the offsets of the file's IFDs in chain order, stopping at
// MaxPages, at a loop or at an offset outside the file (a damaged chain
// keeps the pages before the damage).
func offsets(b []byte) ([]uint32, binary.ByteOrder, error) {
	var bo binary.ByteOrder
	switch {
	case len(b) >= 8 && string(b[:4]) == "II*\x00":
		bo = binary.LittleEndian
	case len(b) >= 8 && string(b[:4]) == "MM\x00*":
		bo = binary.BigEndian
	default:
		return nil, nil, ErrNotTIFF
	}
	var out []uint32
	seen := map[uint32]bool{}
	off := bo.Uint32(b[4:8])
	for off != 0 && len(out) < MaxPages && !seen[off] && int64(off)+2 <= int64(len(b)) {
		n := int64(bo.Uint16(b[off:]))
		end := int64(off) + 2 + 12*n
		if end+4 > int64(len(b)) {
			break
		}
		seen[off] = true
		out = append(out, off)
		off = bo.Uint32(b[end:])
	}
	if len(out) == 0 {
		return nil, nil, fmt.Errorf("%w: no image file directory", ErrNotTIFF)
	}
	return out, bo, nil
}

// Count is the number of pages (IFDs) of a TIFF file.
func Count(b []byte) (int, error) {
	o, _, err := offsets(b)
	return len(o), err
}

// Page returns a TIFF file whose first page is page n (from 1) of b: a
// copy of b whose header points at that page's IFD. Page 1 is b itself.
func Page(b []byte, n int) ([]byte, error) {
	o, bo, err := offsets(b)
	if err != nil {
		return nil, err
	}
	if n < 1 || n > len(o) {
		return nil, fmt.Errorf("page %d of a TIFF of %d pages", n, len(o))
	}
	if n == 1 {
		return b, nil
	}
	c := make([]byte, len(b))
	copy(c, b)
	bo.PutUint32(c[4:8], o[n-1])
	return c, nil
}
