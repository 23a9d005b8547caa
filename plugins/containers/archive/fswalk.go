package archive

import (
	"fmt"
	"io"
	"io/fs"
)

// walkFS lists a folder's tree and resolves the archives in it. Links are
// reported and never followed (fs.WalkDir does not descend into them, and
// they are never opened); devices and other irregular files are refused.
func (w *walker) walkFS(fsys fs.FS, root string) error {
	return fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if p == "." {
			return err // the folder itself is unreadable: Resolve's error
		}
		if w.stopped() {
			return fs.SkipAll
		}
		skip := error(nil)
		if d != nil && d.IsDir() {
			skip = fs.SkipDir
		}
		name, _, kind, reason := cleanName(p)
		if kind != "" {
			w.problem(root+"/"+display(p), kind, reason)
			return skip
		}
		full := root + "/" + name
		if err != nil {
			w.problem(full, ProblemIO, err.Error())
			return skip
		}
		switch t := d.Type(); {
		case t&fs.ModeSymlink != 0:
			target := ""
			if s, err := fs.ReadLink(fsys, p); err == nil {
				target = fmt.Sprintf(" to %q", display(s))
			}
			w.problem(full, ProblemSymlink, "symbolic link"+target+": links are not followed")
			return nil
		case d.IsDir():
			w.visit(member{path: full, name: d.Name(), depth: 1, dir: true})
			return nil
		case !t.IsRegular():
			w.problem(full, ProblemSpecial, "a device, FIFO or socket: not a file")
			return nil
		}
		info, err := d.Info()
		if err != nil {
			w.problem(full, ProblemIO, err.Error())
			return nil
		}
		src, done := fsSource(fsys, p, info.Size())
		w.visit(member{path: full, name: d.Name(), depth: 1, src: src})
		done()
		return nil
	})
}

// fsSource reads a folder's file in place when the file system gives random
// access (os.DirFS and fstest.MapFS do), else as a stream.
func fsSource(fsys fs.FS, p string, size int64) (source, func()) {
	open := func() (io.ReadCloser, error) { return fsys.Open(p) }
	src := source{size: size, open: open}
	f, err := fsys.Open(p)
	if err != nil {
		return src, func() {}
	}
	ra, ok := f.(io.ReaderAt)
	if !ok {
		f.Close()
		return src, func() {}
	}
	src.ra = ra
	src.reacquire = func() (io.ReaderAt, func() error, error) {
		f, err := fsys.Open(p)
		if err != nil {
			return nil, nil, err
		}
		ra, ok := f.(io.ReaderAt)
		if !ok {
			f.Close()
			return nil, nil, fmt.Errorf("archive: %s lost random access", p)
		}
		return ra, f.Close, nil
	}
	return src, func() { f.Close() }
}
