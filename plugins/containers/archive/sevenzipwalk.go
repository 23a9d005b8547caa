package archive

import (
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"strings"

	"github.com/bodgit/sevenzip"
)

// open7z resolves a 7z member. Like a zip it needs random access: in place,
// or read into memory within the budget. Its members are read in archive
// order, each streamed once during the walk (a solid block is expanded once
// for all its files, not once per file).
func (w *walker) open7z(m member) {
	ra, reacq, release, err := w.randomAccess(m)
	if err != nil {
		w.note(m.path, problemKind(err), "not opened: "+err.Error())
		return
	}
	defer release()
	zr, err := guard(func() (*sevenzip.Reader, error) { return sevenzip.NewReaderWithPassword(ra, m.src.size, w.password) })
	if err != nil {
		err = sevenZipError(err)
		w.stop(m.path, problemKind(err), "", "not a readable 7z archive: "+err.Error())
		return
	}
	sc := newScope()
	for i, f := range zr.File {
		if w.stopped() {
			return
		}
		w.sevenZipMember(m, sc, zr, i, f, reacq)
	}
}

func (w *walker) sevenZipMember(c member, sc *scope, zr *sevenzip.Reader, index int, f *sevenzip.File, reacq reacquireFunc) {
	name, dir, kind, reason := cleanName(f.Name)
	if kind != "" {
		w.problem(c.path+"/"+display(f.Name), kind, reason)
		return
	}
	p := c.path + "/" + name
	mode := f.Mode()
	dir = dir || mode.IsDir()
	if link, ok := sc.under(name); ok {
		w.problem(p, ProblemSymlink, fmt.Sprintf("inside %q, which is a link: links are not followed", link))
		return
	}
	switch {
	case mode&fs.ModeSymlink != 0:
		sc.link(name)
		w.problem(p, ProblemSymlink, "symbolic link: links are not followed")
		return
	case mode&(fs.ModeDevice|fs.ModeCharDevice|fs.ModeNamedPipe|fs.ModeSocket) != 0:
		w.problem(p, ProblemSpecial, "a device, FIFO or socket entry")
		return
	}
	if !w.claim(sc, c, p, name, dir) {
		return
	}
	size := int64(f.UncompressedSize)
	switch {
	case size < 0 || size > w.lim.MaxFileBytes:
		w.problem(p, ProblemLimit, fmt.Sprintf("declares %d bytes, more than the per-file limit of %d", f.UncompressedSize, w.lim.MaxFileBytes))
		return
	case w.lim.bomb(size, c.src.size):
		// A file's compressed bytes are at most the whole archive's.
		w.problem(p, ProblemBomb, fmt.Sprintf("declares %d bytes from an archive of %d (more than %g:1): not expanded",
			size, c.src.size, w.lim.MaxRatio))
		return
	}
	open := func(zr *sevenzip.Reader) (io.ReadCloser, error) {
		rc, err := guard(zr.File[index].Open)
		if err != nil {
			return nil, sevenZipError(err)
		}
		return readCloser{&crcReader{r: &exact{r: guarded{rc, sevenZipError}, left: size}, want: f.CRC32}, rc.Close}, nil
	}
	live, err := open(zr)
	if err != nil {
		w.problem(p, problemKind(err), "unreadable: "+err.Error())
		return
	}
	defer live.Close()
	csize, password := c.src.size, w.password
	src := source{size: size, live: live, open: func() (io.ReadCloser, error) {
		ra, release, err := reacq()
		if err != nil {
			return nil, err
		}
		zr, err := guard(func() (*sevenzip.Reader, error) { return sevenzip.NewReaderWithPassword(ra, csize, password) })
		if err != nil {
			if release != nil {
				release()
			}
			return nil, sevenZipError(err)
		}
		rc, err := open(zr)
		if err != nil {
			if release != nil {
				release()
			}
			return nil, err
		}
		return readCloser{rc, closeBoth(rc.Close, release)}, nil
	}}
	w.visit(member{path: p, name: baseName(name), depth: c.depth + 1, extracted: true, src: src})
}

// crcReader checks a member's CRC-32 when it is read to its end (0: none
// recorded).
type crcReader struct {
	r    io.Reader
	want uint32
	got  uint32
}

func (c *crcReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.got = crc32.Update(c.got, crc32.IEEETable, p[:n])
	if err == io.EOF && c.want != 0 && c.got != c.want {
		return n, fmt.Errorf("%w: CRC-32 %08x, want %08x", ErrCorrupt, c.got, c.want)
	}
	return n, err
}

func sevenZipError(err error) error {
	var re *sevenzip.ReadError
	switch {
	case err == nil, err == io.EOF:
		return err
	case errors.As(err, &re) && re.Encrypted:
		return fmt.Errorf("%w: the contents cannot be read without the password (%w)", ErrEncrypted, err)
	case strings.Contains(err.Error(), "unsupported compression algorithm"):
		return fmt.Errorf("%w: %w", ErrUnsupported, err)
	}
	return streamError(err)
}
