package archive

import (
	"archive/tar"
	"errors"
	"fmt"
	"io"
	"strings"
)

// tarFrom says how a tar's members are reached again after the walk: in
// place when the tar has random access, else by streaming it from the start.
type tarFrom struct {
	ra     io.ReaderAt
	seek   io.Seeker // the walk's position, for members' offsets
	reacq  reacquireFunc
	size   int64
	reopen func() (io.ReadCloser, error)
}

func (f tarFrom) stream() func() (io.ReadCloser, error) {
	if f.reopen != nil {
		return f.reopen
	}
	return openWhole(f.reacq, f.size)
}

// openTar resolves a tar member: in place when it has random access (tar
// skips data by seeking), else as a stream read once.
func (w *walker) openTar(m member) {
	if m.src.ra != nil {
		sec := io.NewSectionReader(m.src.ra, 0, m.src.size)
		w.walkTar(m, sec, tarFrom{ra: m.src.ra, seek: sec, reacq: m.src.reacquire, size: m.src.size}, nil)
		return
	}
	r, done, err := w.stream(m.src)
	if err != nil {
		w.note(m.path, problemKind(err), "not opened: "+err.Error())
		return
	}
	if done != nil {
		defer done()
	}
	w.walkTar(m, r, tarFrom{reopen: m.src.open}, nil)
}

// walkTar lists a tar's members in order. met, when the tar comes out of a
// gzip stream, is marked at each member so its ratio is measured alone.
func (w *walker) walkTar(c member, r io.Reader, from tarFrom, met *meter) {
	tr := tar.NewReader(r)
	sc := newScope()
	prev := ""
	for i := 0; !w.stopped(); i++ {
		if met != nil && prev != "" {
			// Expand what is left of the previous member (all of it when
			// nobody read it) before the next header, so a failure in its
			// bytes is told apart from one in the headers between members.
			if _, err := io.Copy(io.Discard, sentinelReader{tr}); err != nil && !w.stopped() {
				w.memberFailed(prev, err, c.name)
			}
		}
		hdr, err := tr.Next()
		if errors.Is(err, tar.ErrInsecurePath) {
			err = nil // the header is valid; cleanName judges the name
		}
		switch {
		case err == io.EOF:
			return
		case err != nil && w.stopped():
			return
		case err != nil:
			// The stream ran over a limit or its bytes end or go wrong:
			// the container stops here, after the members read so far
			// (a member whose own bytes failed was reported as its own).
			err = readError(err)
			w.stop(c.path, problemKind(err), limitOf(err), fmt.Sprintf("reading stopped after %d entries: %v; the entries before are kept", i, err))
			return
		}
		if met != nil {
			met.mark()
		}
		seen := w.seen
		prev = w.tarMember(c, sc, tr, hdr, i, from)
		if met != nil && w.seen > seen {
			// The format's own header and padding of a listed member are
			// not expansion to hold against the ratio: 10,000 tiny files
			// are legal. Bounded by MaxFiles × tarOverhead.
			met.slack += tarOverhead
		}
	}
}

// memberFailed records that the bytes of member p failed while the walk
// skipped them, unless p has its problem already (the callback read them,
// or it was refused); the container's stop follows from the next header.
func (w *walker) memberFailed(p string, err error, container string) {
	if n := len(w.res.Problems); n > 0 && w.res.Problems[n-1].Path == p {
		return
	}
	w.note(p, problemKind(err), fmt.Sprintf("%v; the rest of %s is not read", err, container))
}

// tarOverhead is one member's header block and at most its padding.
const tarOverhead = 1024

// tarMember visits one header and returns the path it stands for.
func (w *walker) tarMember(c member, sc *scope, tr *tar.Reader, hdr *tar.Header, index int, from tarFrom) string {
	if hdr.Typeflag == tar.TypeXGlobalHeader {
		return c.path // metadata for the following headers, not an entry
	}
	// Tar names are bytes; old tools wrote Latin-1. Invalid UTF-8 is
	// replaced so paths stay valid text.
	// The header's type, not a trailing slash, says whether it is a folder.
	name, _, kind, reason := cleanName(strings.ToValidUTF8(hdr.Name, "\uFFFD"))
	var dir bool
	if kind == ProblemName && hdr.Typeflag == tar.TypeDir && isRootName(hdr.Name) {
		// "./" (or "."), which tar -C dir . writes first, is the
		// archive's own root: nothing to list, and nothing wrong.
		return c.path
	}
	if kind != "" {
		p := c.path + "/" + display(hdr.Name)
		w.problem(p, kind, reason)
		return p
	}
	p := c.path + "/" + name
	if link, ok := sc.under(name); ok {
		w.problem(p, ProblemSymlink, fmt.Sprintf("inside %q, which is a link: links are not followed", link))
		return p
	}
	switch hdr.Typeflag {
	case tar.TypeDir:
		dir = true
	case tar.TypeReg, '\x00', tar.TypeCont, tar.TypeGNUSparse:
		dir = false
	case tar.TypeSymlink:
		sc.link(name)
		w.problem(p, ProblemSymlink, fmt.Sprintf("symbolic link to %q: links are not followed", display(hdr.Linkname)))
		return p
	case tar.TypeLink:
		sc.link(name)
		w.problem(p, ProblemSymlink, fmt.Sprintf("hard link to %q: links are not followed", display(hdr.Linkname)))
		return p
	case tar.TypeChar, tar.TypeBlock, tar.TypeFifo:
		w.problem(p, ProblemSpecial, "a device or FIFO entry")
		return p
	default:
		w.problem(p, ProblemUnsupported, fmt.Sprintf("tar entry type %q is not supported", hdr.Typeflag))
		return p
	}
	if !w.claim(sc, c, p, name, dir) {
		return p
	}
	if hdr.Size > w.lim.MaxFileBytes {
		w.problem(p, ProblemLimit, fmt.Sprintf("declares %d bytes, more than the per-file limit of %d", hdr.Size, w.lim.MaxFileBytes))
		return p
	}
	src := source{size: hdr.Size}
	if from.seek != nil && !isSparse(hdr) {
		pos, err := from.seek.Seek(0, io.SeekCurrent)
		if err != nil {
			w.problem(p, ProblemIO, err.Error())
			return p
		}
		src.ra = io.NewSectionReader(from.ra, pos, hdr.Size)
		src.reacquire = sectionOf(from.reacq, pos, hdr.Size)
		src.open = openWhole(src.reacquire, hdr.Size)
	} else {
		src.live = sentinelReader{tr}
		src.open = reopenTarMember(from.stream(), index, hdr.Name)
	}
	w.visit(member{path: p, name: baseName(name), depth: c.depth + 1, extracted: true, src: src})
	return p
}

// isSparse: a sparse member's data is not stored in one piece, so it is
// read through the tar reader, never in place.
func isSparse(hdr *tar.Header) bool {
	if hdr.Typeflag == tar.TypeGNUSparse {
		return true
	}
	for k := range hdr.PAXRecords {
		if strings.HasPrefix(k, "GNU.sparse.") {
			return true
		}
	}
	return false
}

// reopenTarMember streams the tar from the start to the member at index:
// the cost of Open on a member of a compressed tar.
func reopenTarMember(stream func() (io.ReadCloser, error), index int, name string) func() (io.ReadCloser, error) {
	return func() (io.ReadCloser, error) {
		rc, err := stream()
		if err != nil {
			return nil, err
		}
		tr := tar.NewReader(rc)
		for j := 0; ; j++ {
			hdr, err := tr.Next()
			if errors.Is(err, tar.ErrInsecurePath) {
				err = nil
			}
			if err != nil {
				rc.Close()
				if err == io.EOF {
					err = fmt.Errorf("%w: the archive ends before entry %d", ErrTruncated, index)
				}
				return nil, readError(err)
			}
			if j < index {
				continue
			}
			if hdr.Name != name {
				rc.Close()
				return nil, fmt.Errorf("%w: entry %d is now %q, not %q", ErrCorrupt, index, display(hdr.Name), display(name))
			}
			return readCloser{sentinelReader{tr}, rc.Close}, nil
		}
	}
}

// isRootName reports whether a member name names the archive's root: only
// "." segments and slashes ("./", ".", "./.").
func isRootName(raw string) bool {
	return raw != "" && strings.Trim(raw, "./") == "" && !strings.Contains(raw, "..")
}
