package archive

// Our own reading of the zip format rather than archive/zip: archive/zip
// builds the whole central directory before the first entry can be looked at
// (an attacker-sized slice of headers; 12,000 entries are 3 MB, a directory
// of millions is gigabytes), cannot go on from local headers when the
// directory is missing (a truncated upload), and hides the compressed side of
// an entry that the ratio is measured against. The subset here is what zip
// writers produce: stored, deflate and bzip2 entries, zip64, data
// descriptors; not spanned or self-extracting archives.

import (
	"bufio"
	"compress/bzip2"
	"compress/flate"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"hash/crc32"
	"io"
	"math"
)

const (
	sigLocal      = 0x04034b50
	sigCentral    = 0x02014b50
	sigEnd        = 0x06054b50
	sigEnd64      = 0x06064b50
	sigLocator64  = 0x07064b50
	sigDescriptor = 0x08074b50

	localLen   = 30
	centralLen = 46
	endLen     = 22
	end64Len   = 56
	maxComment = 65535

	methodStore   = 0
	methodDeflate = 8
	methodBzip2   = 12

	flagEncrypted       = 0x1
	flagDescriptor      = 0x8
	flagStrongEncrypted = 0x40
)

// errNoDirectory means no usable central directory: the caller falls back to
// the local headers.
var errNoDirectory = errors.New("no central directory")

// zipEntry is one member as its headers describe it.
type zipEntry struct {
	name    string
	flags   uint16
	method  uint16
	crc     uint32
	csize   uint64
	usize   uint64
	header  int64 // offset of the local header
	data    int64 // offset of the data; -1 until read from the local header
	creator uint8 // host system of "version made by"
	attrs   uint32
	cut     bool // the data runs past the end of the input
}

func (e zipEntry) isDir() bool {
	return len(e.name) > 0 && e.name[len(e.name)-1] == '/' || e.attrs&0x10 != 0 && e.creator == 0
}

// isSymlink reads the Unix mode in the high half of the external attributes
// (Unix and macOS creators).
func (e zipEntry) isSymlink() bool {
	return (e.creator == 3 || e.creator == 19) && (e.attrs>>16)&0o170000 == 0o120000
}

// isSpecial is a device, FIFO or socket by the same mode.
func (e zipEntry) isSpecial() bool {
	if e.creator != 3 && e.creator != 19 {
		return false
	}
	switch (e.attrs >> 16) & 0o170000 {
	case 0o010000, 0o020000, 0o060000, 0o140000:
		return true
	}
	return false
}

func (e zipEntry) encrypted() bool {
	return e.flags&(flagEncrypted|flagStrongEncrypted) != 0 || e.method == 99
}

func methodName(m uint16) string {
	switch m {
	case 9:
		return "deflate64"
	case 14:
		return "LZMA"
	case 93:
		return "zstd"
	case 95:
		return "xz"
	case 98:
		return "PPMd"
	}
	return "unknown"
}

func le16(b []byte) uint16 { return binary.LittleEndian.Uint16(b) }
func le32(b []byte) uint32 { return binary.LittleEndian.Uint32(b) }
func le64(b []byte) uint64 { return binary.LittleEndian.Uint64(b) }

// readAt reads len(p) bytes at off; a short read is ErrTruncated.
func readAt(ra io.ReaderAt, p []byte, off int64) error {
	n, err := ra.ReadAt(p, off)
	if n == len(p) {
		return nil
	}
	if err == nil || err == io.EOF {
		return fmt.Errorf("%w: %d bytes at offset %d, only %d there", ErrTruncated, len(p), off, n)
	}
	return err
}

// zipDirectory finds the central directory through the end record (and its
// zip64 form).
func zipDirectory(ra io.ReaderAt, size int64) (off, n int64, err error) {
	tail := min(size, endLen+maxComment)
	if tail < endLen {
		return 0, 0, errNoDirectory
	}
	buf := make([]byte, tail)
	if err := readAt(ra, buf, size-tail); err != nil {
		return 0, 0, err
	}
	at := -1
	for i := len(buf) - endLen; i >= 0; i-- {
		if le32(buf[i:]) == sigEnd && i+endLen+int(le16(buf[i+20:])) <= len(buf) {
			at = i
			break
		}
	}
	if at < 0 {
		return 0, 0, errNoDirectory
	}
	end := buf[at:]
	endOff := size - tail + int64(at)
	count, dsize, doff := uint64(le16(end[10:])), uint64(le32(end[12:])), uint64(le32(end[16:]))
	if count == 0xffff || dsize == 0xffffffff || doff == 0xffffffff {
		if doff, dsize, err = zip64Directory(ra, endOff); err != nil {
			return 0, 0, err
		}
	}
	if doff > uint64(endOff) || dsize > uint64(endOff)-doff {
		return 0, 0, errNoDirectory
	}
	return int64(doff), int64(dsize), nil
}

func zip64Directory(ra io.ReaderAt, endOff int64) (off, n uint64, err error) {
	if endOff < 20 {
		return 0, 0, errNoDirectory
	}
	var loc [20]byte
	if err := readAt(ra, loc[:], endOff-20); err != nil || le32(loc[:]) != sigLocator64 {
		return 0, 0, errNoDirectory
	}
	at := le64(loc[8:])
	if at > uint64(endOff) {
		return 0, 0, errNoDirectory
	}
	var rec [end64Len]byte
	if err := readAt(ra, rec[:], int64(at)); err != nil || le32(rec[:]) != sigEnd64 {
		return 0, 0, errNoDirectory
	}
	return le64(rec[48:]), le64(rec[40:]), nil
}

// forEachZipEntry calls fn for each central directory header, in order, until
// fn returns false. It holds one header at a time, so memory does not grow
// with the directory.
func forEachZipEntry(ra io.ReaderAt, size int64, fn func(zipEntry) bool) error {
	off, n, err := zipDirectory(ra, size)
	if err != nil {
		return err
	}
	br := bufio.NewReaderSize(io.NewSectionReader(ra, off, n), 64<<10)
	var fixed [centralLen]byte
	for i := 0; ; i++ {
		if _, err := io.ReadFull(br, fixed[:4]); err == io.EOF {
			return nil
		} else if err != nil {
			return fmt.Errorf("%w: central directory: %w", ErrCorrupt, err)
		}
		if le32(fixed[:]) != sigCentral {
			if i == 0 {
				return errNoDirectory
			}
			if s := le32(fixed[:]); s == sigEnd64 || s == sigLocator64 || s == sigEnd {
				return nil
			}
			return fmt.Errorf("%w: central directory header %d has a bad signature", ErrCorrupt, i)
		}
		if _, err := io.ReadFull(br, fixed[4:]); err != nil {
			return fmt.Errorf("%w: central directory ends inside header %d", ErrCorrupt, i)
		}
		b := fixed[:]
		e := zipEntry{
			creator: uint8(le16(b[4:]) >> 8),
			flags:   le16(b[8:]),
			method:  le16(b[10:]),
			crc:     le32(b[16:]),
			csize:   uint64(le32(b[20:])),
			usize:   uint64(le32(b[24:])),
			attrs:   le32(b[38:]),
			header:  int64(le32(b[42:])),
			data:    -1,
		}
		nl, xl, cl := int(le16(b[28:])), int(le16(b[30:])), int(le16(b[32:]))
		varlen := make([]byte, nl+xl)
		if _, err := io.ReadFull(br, varlen); err != nil {
			return fmt.Errorf("%w: central directory ends inside header %d", ErrCorrupt, i)
		}
		if _, err := br.Discard(cl); err != nil {
			return fmt.Errorf("%w: central directory ends inside header %d", ErrCorrupt, i)
		}
		e.name = zipNameWith(varlen[:nl], varlen[nl:])
		hdrOff := uint64(e.header)
		e.zip64(varlen[nl:], e.usize == 0xffffffff, e.csize == 0xffffffff, hdrOff == 0xffffffff, &hdrOff)
		if hdrOff > math.MaxInt64 || e.csize > math.MaxInt64 || e.usize > math.MaxInt64 {
			return fmt.Errorf("%w: header %d has impossible sizes", ErrCorrupt, i)
		}
		e.header = int64(hdrOff)
		if e.header >= size || e.csize > uint64(size) {
			e.cut = true
		}
		if !fn(e) {
			return nil
		}
	}
}

// zip64 reads the sizes and offset that do not fit 32 bits from the zip64
// extra field, in the order the format fixes.
func (e *zipEntry) zip64(extra []byte, u, c, o bool, off *uint64) bool {
	for len(extra) >= 4 {
		id, n := le16(extra), int(le16(extra[2:]))
		if 4+n > len(extra) {
			return false
		}
		d := extra[4 : 4+n]
		extra = extra[4+n:]
		if id != 0x0001 {
			continue
		}
		if u && len(d) >= 8 {
			e.usize, d = le64(d), d[8:]
		}
		if c && len(d) >= 8 {
			e.csize, d = le64(d), d[8:]
		}
		if o && len(d) >= 8 && off != nil {
			*off = le64(d)
		}
		return true
	}
	return false
}

// dataOffset reads the local header for where the data starts.
func (e *zipEntry) dataOffset(ra io.ReaderAt, size int64) (int64, error) {
	if e.data >= 0 {
		return e.data, nil
	}
	var b [localLen]byte
	if err := readAt(ra, b[:], e.header); err != nil {
		return 0, err
	}
	if le32(b[:]) != sigLocal {
		return 0, fmt.Errorf("%w: no local header at offset %d", ErrCorrupt, e.header)
	}
	data := e.header + localLen + int64(le16(b[26:])) + int64(le16(b[28:]))
	if data > size || e.csize > uint64(size-data) {
		return 0, fmt.Errorf("%w: the entry's data runs past the end of the archive (%d bytes)", ErrTruncated, size)
	}
	e.data = data
	return data, nil
}

// openZipData streams an entry's expanded bytes, checked against its declared
// size and CRC-32: a header that understates the size (the usual bomb trick)
// fails at the first byte beyond it.
func openZipData(ra io.ReaderAt, size int64, e zipEntry) (io.ReadCloser, error) {
	if e.encrypted() {
		return nil, fmt.Errorf("%w: %s", ErrEncrypted, e.name)
	}
	data, err := e.dataOffset(ra, size)
	if err != nil {
		return nil, err
	}
	sec := io.NewSectionReader(ra, data, int64(e.csize))
	d := &zipData{want: e.usize, crc: e.crc, h: crc32.NewIEEE()}
	switch e.method {
	case methodStore:
		if e.csize != e.usize {
			return nil, fmt.Errorf("%w: stored entry with %d compressed and %d expanded bytes", ErrCorrupt, e.csize, e.usize)
		}
		d.r = sec
	case methodDeflate:
		fr := flate.NewReader(bufio.NewReaderSize(sec, 32<<10))
		d.r, d.close = fr, fr.Close
	case methodBzip2:
		d.r = bzip2.NewReader(bufio.NewReaderSize(sec, 32<<10))
	default:
		return nil, fmt.Errorf("%w: compression method %d (%s)", ErrUnsupported, e.method, methodName(e.method))
	}
	return d, nil
}

type zipData struct {
	r     io.Reader
	close func() error
	want  uint64
	n     uint64
	crc   uint32
	h     hash.Hash32
	err   error
}

func (z *zipData) Read(p []byte) (int, error) {
	if z.err != nil {
		return 0, z.err
	}
	n, err := z.r.Read(p)
	if over := z.n + uint64(n); over > z.want {
		// Never hand out a byte past the declared size: a reader's
		// caller may have announced that size (the host traps a write
		// past it), so the entry fails here, within it.
		n = int(z.want - z.n)
		z.n = z.want + 1
	} else {
		z.n = over
	}
	z.h.Write(p[:n])
	switch {
	case z.n > z.want:
		err = fmt.Errorf("%w: the entry's data is longer than the %d bytes its header declares", ErrBomb, z.want)
	case err == io.EOF && z.n < z.want:
		err = fmt.Errorf("%w: %d of %d bytes", ErrTruncated, z.n, z.want)
	case err == io.EOF && z.h.Sum32() != z.crc:
		err = fmt.Errorf("%w: CRC-32 mismatch", ErrCorrupt)
	case err != nil && err != io.EOF:
		err = readError(err)
	}
	if err != nil {
		z.err = err
	}
	return n, err
}

func (z *zipData) Close() error {
	if z.close != nil {
		return z.close()
	}
	return nil
}

// byteCounter is a flate.Reader that counts what the decompressor took, so
// the end of a deflate stream is known exactly (bufio alone reads ahead).
type byteCounter struct {
	br *bufio.Reader
	n  int64
}

func (c *byteCounter) Read(p []byte) (int, error) {
	n, err := c.br.Read(p)
	c.n += int64(n)
	return n, err
}

func (c *byteCounter) ReadByte() (byte, error) {
	b, err := c.br.ReadByte()
	if err == nil {
		c.n++
	}
	return b, err
}

// scanLocalHeaders walks an archive without a central directory from its
// first local header, for as long as the headers chain. An entry with a data
// descriptor has no sizes in its header; a deflate one is measured by
// expanding it (metered like any stream), a stored one ends the scan. fn
// sees entries whose data is cut short with cut set; the scan stops there.
func scanLocalHeaders(ctx context.Context, ra io.ReaderAt, size int64, lim Limits, fn func(zipEntry) bool) error {
	var b [localLen]byte
	for off := int64(0); off+localLen <= size; {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := readAt(ra, b[:], off); err != nil {
			return err
		}
		switch le32(b[:]) {
		case sigLocal:
		case sigCentral, sigEnd, sigEnd64:
			return nil
		default:
			return fmt.Errorf("%w: no local header at offset %d", ErrCorrupt, off)
		}
		e := zipEntry{
			flags:  le16(b[6:]),
			method: le16(b[8:]),
			crc:    le32(b[14:]),
			csize:  uint64(le32(b[18:])),
			usize:  uint64(le32(b[22:])),
			header: off,
		}
		nl, xl := int64(le16(b[26:])), int64(le16(b[28:]))
		if off+localLen+nl+xl > size {
			return fmt.Errorf("%w: the header at offset %d is cut", ErrTruncated, off)
		}
		varlen := make([]byte, nl+xl)
		if err := readAt(ra, varlen, off+localLen); err != nil {
			return err
		}
		e.name = zipNameWith(varlen[:nl], varlen[nl:])
		is64 := e.zip64(varlen[nl:], e.usize == 0xffffffff, e.csize == 0xffffffff, false, nil)
		e.data = off + localLen + nl + xl
		next := int64(0)
		switch {
		case e.flags&flagDescriptor != 0 && !e.encrypted() && e.method == methodDeflate:
			csize, usize, crc, err := measureDeflate(ctx, ra, e.data, size, lim)
			if err != nil {
				if problemKind(err) == ProblemTruncated {
					e.cut = true
					fn(e)
					return nil
				}
				return fmt.Errorf("entry %q: %w", display(e.name), err)
			}
			e.csize, e.usize, e.crc = uint64(csize), uint64(usize), crc
			next = e.data + csize
			var sig [4]byte
			if readAt(ra, sig[:], next) == nil && le32(sig[:]) == sigDescriptor {
				next += 4
			}
			if is64 {
				next += 4 + 16
			} else {
				next += 4 + 8
			}
		case e.flags&flagDescriptor != 0:
			return fmt.Errorf("%w: entry %q has no sizes in its header and is not deflated; its end cannot be found without the central directory",
				ErrTruncated, display(e.name))
		default:
			if e.csize > math.MaxInt64-uint64(e.data) || e.data+int64(e.csize) > size {
				e.cut = true
				fn(e)
				return nil
			}
			next = e.data + int64(e.csize)
		}
		if !fn(e) {
			return nil
		}
		off = next
	}
	return nil
}

// measureDeflate expands a deflate stream to find its compressed length, its
// expanded length and CRC-32, bounded like any expansion.
func measureDeflate(ctx context.Context, ra io.ReaderAt, data, size int64, lim Limits) (csize, usize int64, crc uint32, err error) {
	bc := &byteCounter{br: bufio.NewReaderSize(io.NewSectionReader(ra, data, size-data), 32<<10)}
	fr := flate.NewReader(bc)
	defer fr.Close()
	m := &meter{ctx: ctx, in: &bc.n, r: fr, lim: lim, max: lim.MaxFileBytes, what: "the entry"}
	h := crc32.NewIEEE()
	buf := make([]byte, 32<<10)
	for {
		n, err := m.Read(buf)
		h.Write(buf[:n])
		if err == io.EOF {
			return bc.n, m.out, h.Sum32(), nil
		}
		if err != nil {
			return 0, 0, 0, err
		}
	}
}
