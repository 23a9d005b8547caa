package archive

import (
	"bufio"
	"bytes"
	"compress/bzip2"
	"compress/gzip"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/klauspost/compress/zstd"
	"github.com/ulikunitz/xz"
)

// maxXzDict bounds the dictionary an xz stream may ask the decoder to
// allocate (xz -9 uses 64 MiB): a hostile header could ask for 1.5 GiB,
// more than the sandbox has.
const maxXzDict = 64 << 20

// maxZstdWindow bounds the window a zstd frame may ask for (zstd -19 uses
// 8 MiB, --long 128 MiB): the decoder refuses a larger one rather than
// allocate it, as the xz dictionary is bounded.
const maxZstdWindow = 64 << 20

// decompress opens a metered decompressing stream of kind over r (nil ctx
// after the walk), and the file name its header holds ("" when the format
// has none). The 64 KiB read-ahead keeps range reads from the host few; the
// ratio is measured against the bytes the decompressor took, not the
// read-ahead, so a bomb stops just past the floor.
func decompress(ctx context.Context, kind Kind, r io.Reader, lim Limits, max int64, what string) (*meter, string, error) {
	cr := &byteCounter{br: bufio.NewReaderSize(r, 64<<10)}
	var zr io.Reader
	var name string
	switch kind {
	case Gzip:
		gr, err := gzip.NewReader(cr)
		if err != nil {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return nil, "", readError(err)
		}
		zr, name = gr, gr.Name
	case Bzip2:
		zr = bzip2.NewReader(cr)
	case Xz:
		if err := checkXzDict(cr.br); err != nil {
			return nil, "", err
		}
		xr, err := guard(func() (*xz.Reader, error) { return xz.NewReader(cr) })
		if err != nil {
			return nil, "", streamError(err)
		}
		zr = xr
	case Zstd:
		// One goroutine (none of its own: the sandbox has one thread),
		// low memory, and a bounded window; the ratio and size limits
		// hold through the meter as for every stream.
		zd, err := zstd.NewReader(cr, zstd.WithDecoderConcurrency(1), zstd.WithDecoderLowmem(true),
			zstd.WithDecoderMaxWindow(maxZstdWindow), zstd.WithDecoderMaxMemory(maxZstdWindow))
		if err != nil {
			return nil, "", streamError(err)
		}
		zr = zd
	default:
		return nil, "", fmt.Errorf("%w: %s is not a compressed stream", ErrUnsupported, kind)
	}
	return &meter{ctx: ctx, in: &cr.n, r: guarded{zr, streamError}, lim: lim, max: max, what: what}, name, nil
}

// checkXzDict reads the first block header of an xz stream (without
// consuming it) and refuses an LZMA2 dictionary above maxXzDict.
func checkXzDict(br *bufio.Reader) error {
	head, _ := br.Peek(12 + 1024)
	if len(head) < 13 || head[12] == 0 {
		return nil // cut (the decoder says so) or no block at all
	}
	blk := head[12:]
	n := (int(blk[0]) + 1) * 4
	if n > len(blk) {
		return nil
	}
	b := blk[2:n]
	flags := blk[1]
	skip := func() bool {
		_, k := binary.Uvarint(b)
		if k <= 0 {
			return false
		}
		b = b[k:]
		return true
	}
	if flags&0x40 != 0 && !skip() || flags&0x80 != 0 && !skip() {
		return nil
	}
	for i := 0; i <= int(flags&3); i++ {
		id, k := binary.Uvarint(b)
		if k <= 0 {
			return nil
		}
		b = b[k:]
		props, k := binary.Uvarint(b)
		if k <= 0 || uint64(len(b)-k) < props {
			return nil
		}
		p := b[k : k+int(props)]
		b = b[k+int(props):]
		if id == 0x21 && len(p) == 1 && p[0] <= 40 {
			dict := int64(2|p[0]&1) << (p[0]/2 + 11)
			if dict > maxXzDict {
				return fmt.Errorf("%w: the xz stream asks for a %d MiB dictionary, more than the %d MiB allowed", ErrLimit, dict>>20, maxXzDict>>20)
			}
		}
	}
	return nil
}

// guarded reads a third-party decoder: a panic becomes ErrCorrupt
// (recovered) and its errors our sentinels (mapErr: streamError for bzip2
// and xz, which report bad data as plain errors; rarError; sevenZipError).
type guarded struct {
	r      io.Reader
	mapErr func(error) error
}

func (g guarded) Read(p []byte) (n int, err error) {
	defer recovered(&err)
	n, err = g.r.Read(p)
	return n, g.mapErr(err)
}

// recovered turns a panic of a third-party decoder (a division by zero on
// hostile bytes, say) into an ErrCorrupt error: one bad entry must not end
// the walk, let alone the plugin. Use it deferred.
func recovered(err *error) {
	if p := recover(); p != nil {
		*err = fmt.Errorf("%w: the decoder failed on these bytes (%v)", ErrCorrupt, p)
	}
}

// guard calls f, turning its panic into an ErrCorrupt error.
func guard[T any](f func() (T, error)) (v T, err error) {
	defer recovered(&err)
	return f()
}

func streamError(err error) error {
	if errors.Is(err, zstd.ErrWindowSizeExceeded) || errors.Is(err, zstd.ErrDecoderSizeExceeded) {
		return fmt.Errorf("%w: the zstd frame asks for a window larger than the %d MiB allowed: %w", ErrLimit, maxZstdWindow>>20, err)
	}
	switch err = readError(err); {
	case err == nil, err == io.EOF, errors.Is(err, ErrCorrupt), errors.Is(err, ErrTruncated),
		errors.Is(err, ErrBomb), errors.Is(err, ErrLimit), errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return err
	}
	return fmt.Errorf("%w: %w", ErrCorrupt, err)
}

// openStream resolves a compressed stream member (gzip, bzip2, xz). One
// holding a tar (TGZ, .tar.bz2, .tar.xz) is that tar's container, read in
// one pass; otherwise it holds one file, expanded once here to learn its
// size (gzip's own size field is mod 2^32 and can lie; the others have
// none), and again by Open.
func (w *walker) openStream(kind Kind, m member) {
	r, done, err := w.stream(m.src)
	if err != nil {
		w.note(m.path, problemKind(err), "not opened: "+err.Error())
		return
	}
	if done != nil {
		defer done()
	}
	met, header, err := decompress(w.ctx, kind, r, w.lim, w.lim.streamCap(), m.name)
	if err != nil {
		w.stop(m.path, problemKind(err), limitOf(err), fmt.Sprintf("not a readable %s stream: %v", kind, err))
		return
	}
	head := make([]byte, HeadSize)
	n, err := io.ReadFull(met, head)
	head = head[:n]
	if err != nil && err != io.EOF && err != io.ErrUnexpectedEOF {
		w.stop(m.path, problemKind(err), limitOf(err), "not opened: "+err.Error())
		return
	}
	open, lim := m.src.open, w.lim
	if Detect(head, "") == Tar {
		reopen := func() (io.ReadCloser, error) {
			rc, err := open()
			if err != nil {
				return nil, err
			}
			met, _, err := decompress(context.Background(), kind, rc, lim, lim.streamCap(), m.name)
			if err != nil {
				rc.Close()
				return nil, err
			}
			return readCloser{met, rc.Close}, nil
		}
		w.walkTar(m, io.MultiReader(bytes.NewReader(head), met), tarFrom{reopen: reopen}, met)
		return
	}

	name := streamName(kind, m.name, header)
	p := m.path + "/" + name
	if w.stopped() || !w.admit(p) {
		return
	}
	w.unadmit() // visit counts the member; admitting here only keeps a dead walk from expanding
	remaining := w.lim.MaxTotalBytes - w.total
	met.max, met.what = min(w.lim.MaxFileBytes, remaining), "the compressed file"
	k, err := io.Copy(io.Discard, met)
	size := int64(n) + k
	if err != nil {
		pk := problemKind(err)
		if pk == ProblemLimit && remaining < w.lim.MaxFileBytes {
			w.end(p, ProblemLimit, LimitTotal, fmt.Sprintf("expanding it would take the extracted total past %d bytes: the walk stopped here; the entries before are kept", w.lim.MaxTotalBytes))
			return
		}
		w.problem(p, pk, err.Error())
		if pk == ProblemTruncated || pk == ProblemCorrupt {
			// The compressed stream itself is cut or damaged.
			w.halt(p, pk, "", fmt.Sprintf("the %s stream %s", kind, err), false)
		}
		return
	}
	src := source{size: size, open: func() (io.ReadCloser, error) {
		rc, err := open()
		if err != nil {
			return nil, err
		}
		met, _, err := decompress(context.Background(), kind, rc, lim, size, "the compressed file")
		if err != nil {
			rc.Close()
			return nil, err
		}
		return readCloser{met, rc.Close}, nil
	}}
	w.visit(member{path: p, name: name, depth: m.depth + 1, extracted: true, src: src})
}

// streamSuffixes are the names of compressed streams: the suffix, and what
// the file inside is called in its place.
var streamSuffixes = map[Kind][][2]string{
	Gzip:  {{".gz", ""}, {".gzip", ""}, {".z", ""}, {".tgz", ".tar"}},
	Bzip2: {{".bz2", ""}, {".bzip2", ""}, {".bz", ""}, {".tbz2", ".tar"}, {".tbz", ".tar"}},
	Xz:    {{".xz", ""}, {".txz", ".tar"}},
	Zstd:  {{".zst", ""}, {".zstd", ""}, {".tzst", ".tar"}},
}

// streamName names the file inside a compressed stream: the stream's name
// without its suffix ("report.pdf.gz" → "report.pdf", "a.tbz2" → "a.tar"),
// else the name in the gzip header (untrusted, so only its clean last
// segment), else "data".
func streamName(kind Kind, outer, header string) string {
	lower := strings.ToLower(outer)
	for _, s := range streamSuffixes[kind] {
		if strings.HasSuffix(lower, s[0]) && len(outer) > len(s[0]) {
			return outer[:len(outer)-len(s[0])] + s[1]
		}
	}
	if name, _, kind, _ := cleanName(header); kind == "" {
		return baseName(name)
	}
	return "data"
}
