package archive

import (
	"context"
	"fmt"
	"io"
)

// meter bounds one decompressing stream while it expands: the output against
// a cap, and against the compressed input consumed so far, for the stream as
// a whole and since the last mark (one tar member). It stops at the first
// read past a limit, so a bomb costs at most max(RatioFloor, MaxRatio × the
// compressed bytes read) plus one buffer: just over 8 MiB for 1 GiB of zeros.
type meter struct {
	ctx  context.Context // nil after the walk: Open readers are bounded anyway
	in   *int64          // compressed bytes consumed so far
	r    io.Reader
	lim  Limits
	max  int64
	what string // names the stream in errors

	out             int64
	markIn, markOut int64
	slack           int64 // output of the format's own (tar headers), not held against the ratio
	nextCtx         int64
	err             error
}

// ctxEvery is how many output bytes pass between context checks.
const ctxEvery = 1 << 20

func (m *meter) Read(p []byte) (int, error) {
	if m.err != nil {
		return 0, m.err
	}
	n, err := m.r.Read(p)
	m.out += int64(n)
	if e := m.check(); e != nil {
		m.err = e
		return n, e
	}
	if err != nil && err != io.EOF {
		err = readError(err)
		m.err = err
	}
	return n, err
}

func (m *meter) check() error {
	switch {
	case m.out > m.max:
		return fmt.Errorf("%w: %s expands beyond %d bytes", ErrLimit, m.what, m.max)
	case m.lim.bomb(m.out-m.slack, *m.in):
		return fmt.Errorf("%w: %s expanded %d bytes from %d (more than %g:1); stopped there",
			ErrBomb, m.what, m.out-m.slack, *m.in, m.lim.MaxRatio)
	case m.lim.bomb(m.out-m.markOut, *m.in-m.markIn):
		return fmt.Errorf("%w: %s expanded %d bytes from %d for one member (more than %g:1); stopped there",
			ErrBomb, m.what, m.out-m.markOut, *m.in-m.markIn, m.lim.MaxRatio)
	}
	if m.ctx != nil && m.out >= m.nextCtx {
		m.nextCtx = m.out + ctxEvery
		return m.ctx.Err()
	}
	return nil
}

// mark starts a new member: the per-member ratio counts from here.
func (m *meter) mark() { m.markIn, m.markOut = *m.in, m.out }
