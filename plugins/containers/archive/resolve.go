package archive

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"strings"
	"sync"
)

// Resolve lists the input and, if it is a container, everything inside it,
// recursively, within lim (zero fields take their defaults). The first entry
// is the input itself; each container is followed by its members. Hostile or
// unreadable members become Problems and the walk goes on; a walk-ending
// limit sets Truncated. name is the input's name, the first segment of
// every path.
//
// The error is non-nil only when the input itself cannot be read (the
// ReaderAt fails) or ctx ends the walk; the Result then holds what was
// resolved before.
//
// Cost: reads of the central directories and tar headers, the first 512
// bytes of every file (to detect nested containers and the MIME type), the
// full expansion of a gzip stream (a single file's is expanded to learn its
// size), and of a zip inside a compressed entry (read into memory within the
// budget). File contents are otherwise left unread until Entry.Open. Memory
// is the Result (bounded by MaxFiles) plus the nested zips in memory along
// the current path (at most MaxTotalBytes/8).
func Resolve(ctx context.Context, r io.ReaderAt, size int64, name string, lim Limits) (Result, error) {
	return Walk(ctx, r, size, name, lim, nil)
}

// Walk is Resolve in one pass over the bytes: fn receives each entry as the
// walk meets it, in the order of Result.Entries, with the file's bytes (nil
// for directories and containers, whose members follow). fn must not keep
// the reader after it returns; what it leaves unread is skipped. A member of
// a compressed tar is read from the stream being walked, where Entry.Open
// would expand the stream again up to it, so ingesting every file of a TGZ
// costs one expansion instead of one per file. The reader enforces the same
// limits as Entry.Open. An error from fn ends the walk (Truncated) and is
// returned. A nil fn makes Walk Resolve.
func Walk(ctx context.Context, r io.ReaderAt, size int64, name string, lim Limits, fn func(Entry, io.Reader) error) (Result, error) {
	return WalkWithPassword(ctx, r, size, name, "", lim, fn)
}

// WalkWithPassword is Walk for an archive protected by password: the
// encrypted 7z and RAR archives and entries it meets (at any depth) are
// opened with it. A password that does not open them leaves them
// ProblemEncrypted (or, for a RAR 4 entry whose format has no password
// check, ProblemCorrupt), as without one. ZIP encryption (ZipCrypto, WinZip
// AES) is not read: archive/zip has no decryption.
func WalkWithPassword(ctx context.Context, r io.ReaderAt, size int64, name, password string, lim Limits, fn func(Entry, io.Reader) error) (Result, error) {
	if size < 0 {
		return Result{}, fmt.Errorf("archive: %s: negative size %d", name, size)
	}
	name = rootName(name)
	in := &input{r: r}
	w := &walker{ctx: ctx, lim: lim.withDefaults(), root: name, outer: size, fn: fn, password: password}
	head := make([]byte, min(size, HeadSize))
	if err := readAt(in, head, 0); err != nil {
		return Result{}, fmt.Errorf("archive: reading %s: %w", name, err)
	}
	kind := Detect(head, name)
	reacq := func() (io.ReaderAt, func() error, error) { return in, nil, nil }
	root := member{path: name, name: baseName(name), src: source{size: size, ra: in, reacquire: reacq, open: openWhole(reacq, size)}}
	e := Entry{Path: name, Name: root.name, Size: size, MIMEType: mimeType(name, head, kind), Container: kind, Open: root.src.open}
	if kind == None {
		w.emit(e, &root.src)
	} else {
		w.emit(e, nil)
		if !w.stopped() {
			w.openContainer(kind, root)
		}
	}
	return w.finish(func() error {
		if err := in.failure(); err != nil {
			return fmt.Errorf("archive: reading %s: %w", name, err)
		}
		return nil
	})
}

// finish gives the walk's error: the callback's, the input's, the context's.
func (w *walker) finish(input func() error) (Result, error) {
	if w.fnErr != nil {
		return w.res, w.fnErr
	}
	w.stopped()
	if err := input(); err != nil {
		return w.res, err
	}
	return w.res, w.ctx.Err()
}

// ResolveFS is Resolve for a folder: fsys is the folder's contents and name
// its name. The first entry is the folder; its files are depth 1 whatever
// their sub-folder, and archives among them are resolved as by Resolve.
// The folder's own files do not count toward MaxTotalBytes (nothing is
// expanded to list them). The error is non-nil only when the folder cannot
// be listed or ctx ends the walk.
func ResolveFS(ctx context.Context, fsys fs.FS, name string, lim Limits) (Result, error) {
	return WalkFS(ctx, fsys, name, lim, nil)
}

// WalkFS is ResolveFS with Walk's callback.
func WalkFS(ctx context.Context, fsys fs.FS, name string, lim Limits, fn func(Entry, io.Reader) error) (Result, error) {
	name = rootName(name)
	w := &walker{ctx: ctx, lim: lim.withDefaults(), root: name, fn: fn, cur: &level{path: name}}
	w.emit(Entry{Path: name, Name: baseName(name), Dir: true, Open: dirOpen(name)}, nil)
	err := w.walkFS(fsys, name)
	return w.finish(func() error {
		if err != nil {
			return fmt.Errorf("archive: reading folder %s: %w", name, err)
		}
		return nil
	})
}

func rootName(name string) string {
	name = strings.TrimRight(name, "/")
	if name == "" {
		return "input"
	}
	return name
}

// input remembers the first failure of the caller's ReaderAt: that, unlike
// a malformed archive, is Resolve's error.
type input struct {
	r   io.ReaderAt
	mu  sync.Mutex
	err error
}

func (in *input) ReadAt(p []byte, off int64) (int, error) {
	n, err := in.r.ReadAt(p, off)
	if err != nil && err != io.EOF {
		in.mu.Lock()
		if in.err == nil {
			in.err = err
		}
		in.mu.Unlock()
	}
	return n, err
}

func (in *input) failure() error {
	in.mu.Lock()
	defer in.mu.Unlock()
	return in.err
}
