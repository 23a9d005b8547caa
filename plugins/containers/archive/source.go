package archive

import (
	"errors"
	"fmt"
	"io"
)

// reacquireFunc gives random access to a container's bytes again after the
// walk, and a release func (nil when there is nothing to release). Entries
// keep these rather than buffers, so a Result holds no archive bytes.
type reacquireFunc func() (io.ReaderAt, func() error, error)

// source is where one member's bytes come from.
type source struct {
	size int64
	// ra is random access during the visit (the input, or a stored member
	// of a random-access container); nil when the bytes only stream.
	ra io.ReaderAt
	// reacquire is random access after the walk; nil when the bytes only
	// stream.
	reacquire reacquireFunc
	// open streams the bytes from the start, bounded; valid after the walk.
	open func() (io.ReadCloser, error)
	// live is the member's bytes streaming right now (a tar member of a
	// stream): used once, during the visit, instead of reopening.
	live io.Reader
}

// sectionOf is random access to n bytes at off inside what reacq gives.
func sectionOf(reacq reacquireFunc, off, n int64) reacquireFunc {
	return func() (io.ReaderAt, func() error, error) {
		ra, release, err := reacq()
		if err != nil {
			return nil, nil, err
		}
		return io.NewSectionReader(ra, off, n), release, nil
	}
}

// openWhole streams all n bytes of what reacq gives.
func openWhole(reacq reacquireFunc, n int64) func() (io.ReadCloser, error) {
	return func() (io.ReadCloser, error) {
		ra, release, err := reacq()
		if err != nil {
			return nil, err
		}
		return readCloser{&exact{r: io.NewSectionReader(ra, 0, n), left: n}, release}, nil
	}
}

// exact fails a stream that ends before its n bytes: a section of a cut
// archive reads short without an error of its own.
type exact struct {
	r    io.Reader
	left int64
}

func (e *exact) Read(p []byte) (int, error) {
	n, err := e.r.Read(p)
	e.left -= int64(n)
	if err == io.EOF && e.left > 0 {
		err = fmt.Errorf("%w: the data ends %d bytes early", ErrTruncated, e.left)
	}
	return n, err
}

type readCloser struct {
	io.Reader
	close func() error
}

func (r readCloser) Close() error {
	if r.close == nil {
		return nil
	}
	return r.close()
}

// closeBoth closes a then b (either may be nil) and reports both failures.
func closeBoth(a, b func() error) func() error {
	return func() error {
		var ea, eb error
		if a != nil {
			ea = a()
		}
		if b != nil {
			eb = b()
		}
		return errors.Join(ea, eb)
	}
}

// dirOpen is Entry.Open for directories.
func dirOpen(p string) func() (io.ReadCloser, error) {
	return func() (io.ReadCloser, error) { return nil, fmt.Errorf("archive: %s is a directory", p) }
}

// readExactly reads a stream that must hold exactly n bytes; reading to its
// end lets a zip member's reader check its CRC.
func readExactly(r io.Reader, n int64) ([]byte, error) {
	buf := make([]byte, n)
	if _, err := io.ReadFull(r, buf); err != nil {
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			err = fmt.Errorf("%w: fewer than the declared %d bytes", ErrTruncated, n)
		}
		return nil, err
	}
	var one [1]byte
	for {
		k, err := r.Read(one[:])
		switch {
		case err != nil && err != io.EOF:
			return nil, err
		case k > 0:
			return nil, fmt.Errorf("%w: it expands beyond its declared %d bytes", ErrBomb, n)
		case err == io.EOF:
			return buf, nil
		}
	}
}

// sentinelReader gives a reader's errors our sentinels.
type sentinelReader struct{ r io.Reader }

func (s sentinelReader) Read(p []byte) (int, error) {
	n, err := s.r.Read(p)
	return n, readError(err)
}
