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
	if size < 0 {
		return Result{}, fmt.Errorf("archive: %s: negative size %d", name, size)
	}
	name = rootName(name)
	in := &input{r: r}
	w := &walker{ctx: ctx, lim: lim.withDefaults(), root: name, outer: size}
	head := make([]byte, min(size, HeadSize))
	if err := readAt(in, head, 0); err != nil {
		return Result{}, fmt.Errorf("archive: reading %s: %w", name, err)
	}
	kind := Detect(head, name)
	reacq := func() (io.ReaderAt, func() error, error) { return in, nil, nil }
	root := member{path: name, name: baseName(name), src: source{size: size, ra: in, reacquire: reacq, open: openWhole(reacq, size)}}
	w.res.Entries = append(w.res.Entries, Entry{
		Path: name, Name: root.name, Size: size, MIMEType: mimeType(name, head, kind), Container: kind, Open: root.src.open,
	})
	if kind != None && !w.stopped() {
		w.openContainer(kind, root)
	}
	w.stopped()
	if err := in.failure(); err != nil {
		return w.res, fmt.Errorf("archive: reading %s: %w", name, err)
	}
	return w.res, ctx.Err()
}

// ResolveFS is Resolve for a folder: fsys is the folder's contents and name
// its name. The first entry is the folder; its files are depth 1 whatever
// their sub-folder, and archives among them are resolved as by Resolve.
// The folder's own files do not count toward MaxTotalBytes (nothing is
// expanded to list them). The error is non-nil only when the folder cannot
// be listed or ctx ends the walk.
func ResolveFS(ctx context.Context, fsys fs.FS, name string, lim Limits) (Result, error) {
	name = rootName(name)
	w := &walker{ctx: ctx, lim: lim.withDefaults(), root: name}
	w.res.Entries = append(w.res.Entries, Entry{Path: name, Name: baseName(name), Dir: true, Open: dirOpen(name)})
	if err := w.walkFS(fsys, name); err != nil {
		return w.res, fmt.Errorf("archive: reading folder %s: %w", name, err)
	}
	w.stopped()
	return w.res, ctx.Err()
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
