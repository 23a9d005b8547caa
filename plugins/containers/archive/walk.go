package archive

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
)

// walker is the state of one resolution: the limits' counters and the
// result so far. It runs on one goroutine.
type walker struct {
	ctx  context.Context
	lim  Limits
	root string
	res  Result

	seen  int   // entries and problems, against MaxFiles
	total int64 // bytes of entries inside archives, against MaxTotalBytes
	outer int64 // bytes of the inputs, for the overall ratio
	held  int64 // bytes of nested zips in memory now
	ended bool
	cur   *level // the container being read; nil outside any

	// password opens encrypted 7z and RAR members (WalkWithPassword);
	// "" for none.
	password string

	fn    func(Entry, io.Reader) error // Walk's callback; nil for Resolve
	fnErr error                        // what fn returned when it ended the walk
}

// level is the container being read, for Stop: its path, the members
// listed so far and the last of them.
type level struct {
	path string
	n    int
	last string
}

// member is one item to visit inside a container (or the folder).
type member struct {
	path  string
	name  string
	depth int
	dir   bool
	// extracted marks bytes produced by expanding an archive: they count
	// toward MaxTotalBytes and the overall ratio. Files of a folder do not.
	extracted bool
	src       source
}

// stopped reports whether the walk has ended, ending it on cancellation.
func (w *walker) stopped() bool {
	if w.ended {
		return true
	}
	if err := w.ctx.Err(); err != nil {
		w.end(w.root, ProblemCanceled, "", "the walk was canceled ("+err.Error()+"); the entries before are kept")
		return true
	}
	return false
}

// admit counts one entry or problem against MaxFiles; at the limit it ends
// the walk, keeping what came before.
func (w *walker) admit(p string) bool {
	if w.seen >= w.lim.MaxFiles {
		w.end(p, ProblemLimit, LimitFiles, fmt.Sprintf("more than %d entries: the walk stopped here, at entry %d; the entries before are kept", w.lim.MaxFiles, w.lim.MaxFiles+1))
		return false
	}
	w.seen++
	if w.cur != nil {
		w.cur.n++
		w.cur.last = p
	}
	return true
}

// unadmit takes back an admit whose entry visit counts again.
func (w *walker) unadmit() {
	w.seen--
	if w.cur != nil {
		w.cur.n--
	}
}

// problem records a refused member; it counts like an entry, so a hostile
// archive of a million bad names still ends at MaxFiles.
func (w *walker) problem(p, kind, reason string) {
	if w.ended || !w.admit(p) {
		return
	}
	w.note(p, kind, reason)
}

// note records a problem about something already counted (a container, an
// admitted entry).
func (w *walker) note(p, kind, reason string) {
	w.res.Problems = append(w.res.Problems, Problem{Path: p, Reason: reason, Kind: kind})
}

// end records the problem that ends the walk at p, and the stop: limit
// names the limit, "" for a cancellation.
func (w *walker) end(p, kind, limit, reason string) {
	if w.ended {
		return
	}
	w.note(p, kind, reason)
	w.halt(p, kind, limit, reason, true)
	w.ended = true
}

// halt records a Stop at p in the container being read.
func (w *walker) halt(at, kind, limit, reason string, whole bool) {
	s := Stop{Container: w.root, At: at, Kind: kind, Limit: limit, Reason: reason, Walk: whole}
	if w.cur != nil {
		s.Container, s.Index = w.cur.path, w.cur.n
	}
	w.res.Stops = append(w.res.Stops, s)
	w.res.Truncated = true
}

// stop records that container c stopped being read before its end: a
// problem on c (its members read so far are kept), and the stop after the
// last member listed. It is called while c is the container being read.
func (w *walker) stop(c string, kind, limit, reason string) {
	w.note(c, kind, reason)
	w.halt(w.at(c), kind, limit, reason, false)
}

// visit lists one member and, when it is a container within the depth,
// resolves it in place, so members follow their container in the result.
func (w *walker) visit(m member) {
	if w.stopped() || !w.admit(m.path) {
		return
	}
	e := Entry{Path: m.path, Name: m.name, Depth: m.depth}
	if m.dir {
		e.Dir, e.Open = true, dirOpen(m.path)
		w.emit(e, nil)
		return
	}
	size := m.src.size
	if m.extracted {
		if size > w.lim.MaxTotalBytes-w.total {
			w.end(m.path, ProblemLimit, LimitTotal, fmt.Sprintf("this entry of %d bytes would take the extracted total past %d bytes: the walk stopped here; the entries before are kept",
				size, w.lim.MaxTotalBytes))
			return
		}
		if w.lim.bomb(w.total+size, w.outer) {
			w.end(m.path, ProblemBomb, LimitRatio, fmt.Sprintf("the archive would expand to %d bytes from %d (more than %g:1 overall): the walk stopped here; the entries before are kept",
				w.total+size, w.outer, w.lim.MaxRatio))
			return
		}
	} else {
		w.outer += size
	}
	head, live, err := readHead(m.src)
	if err != nil {
		w.note(m.path, problemKind(err), "unreadable: "+err.Error())
		return
	}
	m.src.live = live
	kind := Detect(head, m.name)
	e.Size, e.MIMEType, e.Container, e.Open = size, mimeType(m.name, head, kind), kind, m.src.open
	if m.extracted {
		w.total += size
	}
	if kind == None {
		w.emit(e, &m.src)
		return
	}
	w.emit(e, nil)
	if w.ended {
		return
	}
	if m.depth >= w.lim.MaxDepth {
		w.note(m.path, ProblemDepth, fmt.Sprintf("a %s nested %d levels deep: not opened, since its members would be deeper than the limit of %d",
			kind, m.depth, w.lim.MaxDepth))
		return
	}
	w.openContainer(kind, m)
}

// emit appends an entry and hands it to Walk's callback: with the file's
// bytes when src is given (the live stream if the walk is on it, so a member
// of a compressed tar is not expanded twice; else Open's checked reader),
// nil for directories and containers.
func (w *walker) emit(e Entry, src *source) {
	w.res.Entries = append(w.res.Entries, e)
	if w.fn == nil {
		return
	}
	var r io.Reader
	var done func() error
	switch {
	case src == nil:
	case src.live != nil:
		r = src.live
	default:
		rc, err := src.open()
		if err != nil {
			w.note(e.Path, problemKind(err), "unreadable: "+err.Error())
			return
		}
		r, done = rc, rc.Close
	}
	var rec *errRecorder
	if r != nil {
		rec = &errRecorder{r: r}
		r = rec
	}
	err := w.fn(e, r)
	if done != nil {
		done()
	}
	if rec != nil && rec.err != nil {
		// The entry's bytes failed (corrupt, cut, over its size): that is
		// this entry's problem, not the end of the walk, even if fn passed
		// the error on.
		w.note(e.Path, problemKind(rec.err), "reading failed: "+rec.err.Error())
		if errors.Is(err, rec.err) {
			err = nil
		}
	}
	if err != nil && !w.ended {
		w.fnErr, w.ended = err, true
		w.halt(e.Path, problemKind(err), "", "the walk's callback ended it: "+err.Error(), true)
	}
}

// errRecorder remembers the first read error other than EOF.
type errRecorder struct {
	r   io.Reader
	err error
}

func (e *errRecorder) Read(p []byte) (int, error) {
	n, err := e.r.Read(p)
	if err != nil && err != io.EOF && e.err == nil {
		e.err = err
	}
	return n, err
}

func (w *walker) openContainer(kind Kind, m member) {
	outer := w.cur
	w.cur = &level{path: m.path}
	defer func() { w.cur = outer }()
	switch kind {
	case Zip:
		w.openZip(m)
	case Tar:
		w.openTar(m)
	case Gzip, Bzip2, Xz, Zstd:
		w.openStream(kind, m)
	case SevenZip:
		w.open7z(m)
	case Rar:
		w.openRar(m)
	}
}

// readHead reads the first HeadSize bytes for Detect and sniffing. From a
// live stream it gives back a reader that replays them.
func readHead(src source) ([]byte, io.Reader, error) {
	buf := make([]byte, min(src.size, HeadSize))
	switch {
	case src.ra != nil:
		return buf, nil, readAt(src.ra, buf, 0)
	case src.live != nil:
		if _, err := io.ReadFull(src.live, buf); err != nil {
			return nil, nil, short(err)
		}
		return buf, io.MultiReader(bytes.NewReader(buf), src.live), nil
	}
	rc, err := src.open()
	if err != nil {
		return nil, nil, err
	}
	defer rc.Close()
	if _, err := io.ReadFull(rc, buf); err != nil {
		return nil, nil, short(err)
	}
	return buf, nil, nil
}

func short(err error) error {
	if err == io.EOF || err == io.ErrUnexpectedEOF {
		return fmt.Errorf("%w: fewer bytes than declared", ErrTruncated)
	}
	return err
}

// stream gives the member's bytes as a stream: the live one if there is one.
func (w *walker) stream(src source) (io.Reader, func() error, error) {
	if src.live != nil {
		return src.live, nil, nil
	}
	rc, err := src.open()
	if err != nil {
		return nil, nil, err
	}
	return rc, rc.Close, nil
}

// scope is what one container has named so far: duplicate names and entries
// below a link are refused.
// claim takes an entry's name in its archive's scope: a second entry of
// the same name is refused (the first is kept), a directory is visited.
// It reports whether the entry is a file, to be read on.
func (w *walker) claim(sc *scope, c member, p, name string, dir bool) bool {
	if !sc.add(name, dir) {
		if !dir || !sc.isDir(name) {
			w.problem(p, ProblemDuplicate, "a second entry with this name; the first is kept")
		}
		return false
	}
	if dir {
		w.visit(member{path: p, name: baseName(name), depth: c.depth + 1, dir: true})
		return false
	}
	return true
}

type scope struct {
	names map[string]bool // true for directories
	links map[string]bool
}

func newScope() *scope { return &scope{names: map[string]bool{}, links: map[string]bool{}} }

// add claims a name; false when it is taken.
func (s *scope) add(name string, dir bool) bool {
	if _, ok := s.names[name]; ok {
		return false
	}
	s.names[name] = dir
	return true
}

func (s *scope) isDir(name string) bool { return s.names[name] }

// link claims a name for a link, so a later entry below it is refused: an
// extractor that wrote the link first would write that entry through it.
func (s *scope) link(name string) {
	s.links[name] = true
	s.names[name] = false
}

func (s *scope) under(name string) (string, bool) {
	for i := 0; i < len(name); i++ {
		if name[i] == '/' && s.links[name[:i]] {
			return name[:i], true
		}
	}
	return "", false
}
