package archive

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"strings"
)

// gunzip opens a metered gzip stream over r (nil ctx after the walk). The
// 64 KiB read-ahead keeps range reads from the host few; the ratio is
// measured against the bytes the decompressor took, not the read-ahead, so
// a bomb stops just past the floor.
func gunzip(ctx context.Context, r io.Reader, lim Limits, max int64, what string) (*meter, *gzip.Reader, error) {
	cr := &byteCounter{br: bufio.NewReaderSize(r, 64<<10)}
	zr, err := gzip.NewReader(cr)
	if err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return nil, nil, readError(err)
	}
	return &meter{ctx: ctx, in: &cr.n, r: zr, lim: lim, max: max, what: what}, zr, nil
}

// openGzip resolves a gzip member. A gzip stream holding a tar (TGZ) is that
// tar's container, read in one pass; otherwise it holds one file, expanded
// once here to learn its size (gzip's own size field is mod 2^32 and can
// lie), and again by Open.
func (w *walker) openGzip(m member) {
	r, done, err := w.stream(m.src)
	if err != nil {
		w.note(m.path, problemKind(err), "not opened: "+err.Error())
		return
	}
	if done != nil {
		defer done()
	}
	met, zr, err := gunzip(w.ctx, r, w.lim, w.lim.streamCap(), m.name)
	if err != nil {
		w.stop(m.path, problemKind(err), "", "not a readable gzip stream: "+err.Error())
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
			met, _, err := gunzip(context.Background(), rc, lim, lim.streamCap(), m.name)
			if err != nil {
				rc.Close()
				return nil, err
			}
			return readCloser{met, rc.Close}, nil
		}
		w.walkTar(m, io.MultiReader(bytes.NewReader(head), met), tarFrom{reopen: reopen}, met)
		return
	}

	name := gunzipName(m.name, zr.Name)
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
		kind := problemKind(err)
		if kind == ProblemLimit && remaining < w.lim.MaxFileBytes {
			w.end(p, ProblemLimit, LimitTotal, fmt.Sprintf("expanding it would take the extracted total past %d bytes: the walk stopped here; the entries before are kept", w.lim.MaxTotalBytes))
			return
		}
		w.problem(p, kind, err.Error())
		if kind == ProblemTruncated || kind == ProblemCorrupt {
			// The gzip stream itself is cut or damaged.
			w.halt(p, kind, "", fmt.Sprintf("the gzip stream %s", err), false)
		}
		return
	}
	src := source{size: size, open: func() (io.ReadCloser, error) {
		rc, err := open()
		if err != nil {
			return nil, err
		}
		met, _, err := gunzip(context.Background(), rc, lim, size, "the compressed file")
		if err != nil {
			rc.Close()
			return nil, err
		}
		return readCloser{met, rc.Close}, nil
	}}
	w.visit(member{path: p, name: name, depth: m.depth + 1, extracted: true, src: src})
}

// gunzipName names the file inside a gzip stream: the stream's name without
// its suffix ("report.pdf.gz" → "report.pdf"), else the name in the gzip
// header (untrusted, so only its clean last segment), else "data".
func gunzipName(outer, header string) string {
	lower := strings.ToLower(outer)
	for _, ext := range [...]string{".gz", ".gzip", ".z"} {
		if strings.HasSuffix(lower, ext) && len(outer) > len(ext) {
			return outer[:len(outer)-len(ext)]
		}
	}
	if strings.HasSuffix(lower, ".tgz") && len(outer) > 4 {
		return outer[:len(outer)-4] + ".tar"
	}
	if name, _, kind, _ := cleanName(header); kind == "" {
		return baseName(name)
	}
	return "data"
}
