package archive

import (
	"bytes"
	"errors"
	"fmt"
	"io"
)

// openZip resolves a zip member. A zip needs random access: one stored in a
// random-access parent is read in place; one behind compression is read into
// memory when it fits the budget derived from the limits, and refused
// otherwise rather than spilled to a file.
func (w *walker) openZip(m member) {
	ra, reacq, release, err := w.randomAccess(m)
	if err != nil {
		w.note(m.path, problemKind(err), "not opened: "+err.Error())
		return
	}
	defer release()
	w.walkZip(m, ra, m.src.size, reacq)
}

// randomAccess gives random access to a member, in place when it has it,
// else read into memory within the budget (release gives the budget back),
// for formats that need it (zip, 7z).
func (w *walker) randomAccess(m member) (io.ReaderAt, reacquireFunc, func(), error) {
	ra, reacq, size := m.src.ra, m.src.reacquire, m.src.size
	if ra != nil {
		return ra, reacq, func() {}, nil
	}
	buf, err := w.materialize(m)
	if err != nil {
		return nil, nil, nil, err
	}
	w.held += size
	open := m.src.open
	reacq = func() (io.ReaderAt, func() error, error) {
		rc, err := open()
		if err != nil {
			return nil, nil, err
		}
		defer rc.Close()
		buf, err := readExactly(rc, size)
		if err != nil {
			return nil, nil, err
		}
		return bytes.NewReader(buf), nil, nil
	}
	return bytes.NewReader(buf), reacq, func() { w.held -= size }, nil
}

func (w *walker) materialize(m member) ([]byte, error) {
	size := m.src.size
	if size > w.lim.nestedBudget() {
		return nil, fmt.Errorf("%w: an archive (zip, 7z) inside a compressed entry needs random access, and its %d bytes exceed the in-memory budget of %d bytes",
			ErrLimit, size, w.lim.nestedBudget())
	}
	if w.held+size > w.lim.heldBudget() {
		return nil, fmt.Errorf("%w: with %d bytes of enclosing archives in memory, its %d bytes exceed the in-memory budget of %d bytes",
			ErrLimit, w.held, size, w.lim.heldBudget())
	}
	r, done, err := w.stream(m.src)
	if err != nil {
		return nil, err
	}
	if done != nil {
		defer done()
	}
	return readExactly(r, size)
}

func (w *walker) walkZip(c member, ra io.ReaderAt, size int64, reacq reacquireFunc) {
	sc := newScope()
	each := func(e zipEntry) bool {
		w.zipMember(c, sc, ra, size, reacq, e)
		return !w.stopped()
	}
	err := forEachZipEntry(ra, size, each)
	if errors.Is(err, errNoDirectory) {
		const why = "no central directory (the archive is cut short or damaged): entries are recovered from their local headers"
		w.note(c.path, ProblemTruncated, why)
		err = scanLocalHeaders(w.ctx, ra, size, w.lim, each)
		if err == nil && !w.stopped() {
			w.halt(w.at(c.path), ProblemTruncated, "", why, false)
		}
	}
	if err != nil && !w.stopped() {
		w.stop(c.path, problemKind(err), "", fmt.Sprintf("reading stopped: %v; the entries before are kept", err))
	}
}

// at is the last member listed in the container being read, else c.
func (w *walker) at(c string) string {
	if w.cur != nil && w.cur.last != "" {
		return w.cur.last
	}
	return c
}

func (w *walker) zipMember(c member, sc *scope, ra io.ReaderAt, size int64, reacq reacquireFunc, e zipEntry) {
	name, dir, kind, reason := cleanName(e.name)
	if kind != "" {
		w.problem(c.path+"/"+display(e.name), kind, reason)
		return
	}
	p := c.path + "/" + name
	dir = dir || e.isDir()
	if link, ok := sc.under(name); ok {
		w.problem(p, ProblemSymlink, fmt.Sprintf("inside %q, which is a link: links are not followed", link))
		return
	}
	switch {
	case e.isSymlink():
		sc.link(name)
		w.problem(p, ProblemSymlink, "symbolic link"+zipLinkTarget(ra, size, e)+": links are not followed")
		return
	case e.isSpecial():
		w.problem(p, ProblemSpecial, "a device, FIFO or socket entry")
		return
	}
	if !w.claim(sc, c, p, name, dir) {
		return
	}
	switch {
	case e.cut:
		w.problem(p, ProblemTruncated, "the entry's data runs past the end of the archive")
		return
	case e.encrypted():
		w.problem(p, ProblemEncrypted, "encrypted: the contents cannot be read without the password")
		return
	case e.method != methodStore && e.method != methodDeflate && e.method != methodBzip2:
		w.problem(p, ProblemUnsupported, fmt.Sprintf("compression method %d (%s) is not supported", e.method, methodName(e.method)))
		return
	case w.lim.bomb(int64(e.usize), int64(e.csize)):
		w.problem(p, ProblemBomb, fmt.Sprintf("declares %d bytes from %d compressed (%.0f:1, more than %g:1): not expanded",
			e.usize, e.csize, float64(e.usize)/float64(max(e.csize, 1)), w.lim.MaxRatio))
		return
	case int64(e.usize) > w.lim.MaxFileBytes:
		w.problem(p, ProblemLimit, fmt.Sprintf("declares %d bytes, more than the per-file limit of %d", e.usize, w.lim.MaxFileBytes))
		return
	}
	// Open always goes through openZipData, stored entries too, so the
	// bytes are checked against the CRC; a stored entry is also random
	// access in place, for a nested container inside it.
	src := source{size: int64(e.usize), open: func() (io.ReadCloser, error) {
		pra, release, err := reacq()
		if err != nil {
			return nil, err
		}
		rc, err := openZipData(pra, size, e)
		if err != nil {
			if release != nil {
				release()
			}
			return nil, err
		}
		return readCloser{rc, closeBoth(rc.Close, release)}, nil
	}}
	if e.method == methodStore {
		data, err := e.dataOffset(ra, size)
		if err != nil {
			w.problem(p, problemKind(err), err.Error())
			return
		}
		src.ra = io.NewSectionReader(ra, data, src.size)
		src.reacquire = sectionOf(reacq, data, src.size)
	}
	w.visit(member{path: p, name: baseName(name), depth: c.depth + 1, extracted: true, src: src})
}

// zipLinkTarget names a link's target for the problem's reason, when it is
// short enough to be a path.
func zipLinkTarget(ra io.ReaderAt, size int64, e zipEntry) string {
	if e.usize == 0 || e.usize > 1024 || e.cut {
		return ""
	}
	rc, err := openZipData(ra, size, e)
	if err != nil {
		return ""
	}
	defer rc.Close()
	b, err := io.ReadAll(rc)
	if err != nil {
		return ""
	}
	return fmt.Sprintf(" to %q", display(string(b)))
}
