package filetransfer

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"net/textproto"
	"path"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/jlaffaye/ftp"

	"github.com/agenthost/agenthost/pdk/filetransfer/wire"
)

// ftpSession is an FTP or FTPS (explicit TLS) session.
type ftpSession struct {
	c    *ftp.ServerConn
	base string

	mu       sync.Mutex
	ctrl     net.Conn   // the control connection's TCP connection
	addr     netip.Addr // its remote address: data channels go here only
	tls      *tls.Config
	deadline time.Time
	ctx      context.Context
	dataDial func(ctx context.Context, network, addr string) (net.Conn, error)
}

type dialFunc func(ctx context.Context, network, addr string) (net.Conn, error)

// dialFTP signs in to hostport with the control connection dialled by
// dial (the egress rules) and data connections dialled to the control
// connection's address only, whatever a PASV reply names: jlaffaye/ftp
// already ignores PASV's address unless told to trust it (and uses EPSV,
// which names none, first); the dial function refuses any other address
// as a second line against FTP bounce. tlsConf set is explicit FTPS (AUTH
// TLS, then PROT P for data channels, each a TLS client resuming the
// control session).
func dialFTP(ctx context.Context, dial dialFunc, hostport, base, user, password string, tlsConf *tls.Config, timeout time.Duration) (*ftpSession, error) {
	s := &ftpSession{base: base, tls: tlsConf, ctx: ctx, deadline: time.Now().Add(timeout),
		dataDial: (&net.Dialer{Timeout: timeout}).DialContext}
	first := true
	df := func(network, addr string) (net.Conn, error) {
		s.mu.Lock()
		isCtrl := first
		first = false
		dctx, deadline := s.ctx, s.deadline
		s.mu.Unlock()
		if isCtrl {
			conn, err := dial(dctx, network, hostport)
			if err != nil {
				return nil, err
			}
			ta, ok := conn.RemoteAddr().(*net.TCPAddr)
			if !ok {
				conn.Close()
				return nil, fmt.Errorf("dialled %s without a TCP address", hostport)
			}
			s.mu.Lock()
			s.ctrl, s.addr = conn, ta.AddrPort().Addr().Unmap()
			s.mu.Unlock()
			_ = conn.SetDeadline(deadline)
			return conn, nil
		}
		host, port, err := net.SplitHostPort(addr)
		if err != nil {
			return nil, err
		}
		a, err := netip.ParseAddr(host)
		if err != nil || a.Unmap() != s.addr {
			return nil, fmt.Errorf("%w: a data connection to %s refused: FTP data goes to the server's own address %s only", ErrProtocol, addr, s.addr)
		}
		conn, err := s.dataDial(dctx, network, net.JoinHostPort(s.addr.String(), port))
		if err != nil {
			return nil, err
		}
		_ = conn.SetDeadline(deadline)
		if s.tls != nil {
			return tls.Client(conn, s.tls), nil
		}
		return conn, nil
	}
	opts := []ftp.DialOption{ftp.DialWithDialFunc(df), ftp.DialWithTimeout(timeout), ftp.DialWithShutTimeout(timeout)}
	if tlsConf != nil {
		opts = append(opts, ftp.DialWithExplicitTLS(tlsConf))
	}
	c, err := ftp.Dial(hostport, opts...)
	if err != nil {
		return nil, ftpError("connecting", err)
	}
	s.c = c
	if err := c.Login(user, password); err != nil {
		_ = c.Quit()
		var te *textproto.Error
		if errors.As(err, &te) && (te.Code == 530 || te.Code == 430) {
			return nil, fmt.Errorf("%w: the server refused the account or password (%d)", errRejected, te.Code)
		}
		return nil, ftpError("signing in", err)
	}
	return s, nil
}

// errRejected is mapped to connections.ErrRejected by the capability.
var errRejected = errors.New("sign-in rejected")

// begin bounds the next operation: the control connection and data
// connections opened meanwhile end at the deadline, or when ctx ends.
func (s *ftpSession) begin(ctx context.Context, timeout time.Duration) func() {
	d := time.Now().Add(timeout)
	if cd, ok := ctx.Deadline(); ok && cd.Before(d) {
		d = cd
	}
	s.mu.Lock()
	s.ctx, s.deadline = ctx, d
	ctrl := s.ctrl
	s.mu.Unlock()
	_ = ctrl.SetDeadline(d)
	stop := context.AfterFunc(ctx, func() { _ = ctrl.SetDeadline(time.Unix(1, 0)) })
	return func() { stop() }
}

// ftpError names an FTP failure: a reply code the server sent, a broken
// connection or a reply that is no FTP.
func ftpError(doing string, err error) error {
	var te *textproto.Error
	var pe textproto.ProtocolError
	var ne net.Error
	switch {
	case errors.As(err, &te) && (te.Code == 550 || te.Code == 450):
		return fmt.Errorf("%w: %s: %d %s", ErrNotFound, doing, te.Code, te.Msg)
	case errors.As(err, &te):
		return fmt.Errorf("%s: the server answered %d %s", doing, te.Code, te.Msg)
	case errors.As(err, &pe):
		return fmt.Errorf("%w: %s: %v", ErrProtocol, doing, err)
	case errors.As(err, &ne) && ne.Timeout():
		return fmt.Errorf("%s: %w", doing, context.DeadlineExceeded)
	}
	return fmt.Errorf("%s: %w", doing, err)
}

// ftpWriteError is ftpError for writes, where 550 is a refusal (no
// permission, a name taken), not a missing file.
func ftpWriteError(doing string, err error) error {
	var te *textproto.Error
	if errors.As(err, &te) {
		return fmt.Errorf("%s: the server answered %d %s", doing, te.Code, te.Msg)
	}
	return ftpError(doing, err)
}

func (s *ftpSession) entry(rel string, e *ftp.Entry) wire.Entry {
	out := wire.Entry{Name: e.Name, Path: rel, Size: int64(e.Size), Modified: e.Time}
	switch e.Type {
	case ftp.EntryTypeFolder:
		out.Dir, out.Size = true, 0
	case ftp.EntryTypeLink:
		// The server resolves its links itself; which of them stay in
		// the base directory only its own chroot decides, so a link is
		// listed but never followed by search.
		out.Link, out.Size = true, 0
	}
	return out
}

func (s *ftpSession) list(_ context.Context, dir string, limit int) ([]wire.Entry, bool, error) {
	es, err := s.c.List(remote(s.base, dir))
	if err != nil {
		return nil, false, ftpError("listing "+show(dir), err)
	}
	out := make([]wire.Entry, 0, min(len(es), limit))
	for _, e := range es {
		if e.Name == "." || e.Name == ".." || e.Name == "" || strings.ContainsAny(e.Name, "/\\") {
			continue
		}
		out = append(out, s.entry(path.Join(dir, e.Name), e))
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	if len(out) > limit {
		return out[:limit], true, nil
	}
	return out, false, nil
}

func show(rel string) string {
	if rel == "" {
		return "the base directory"
	}
	return rel
}

func (s *ftpSession) stat(_ context.Context, rel string) (wire.Entry, error) {
	if rel == "" {
		return wire.Entry{Name: path.Base(s.base), Dir: true}, nil
	}
	e, err := s.c.GetEntry(remote(s.base, rel))
	if err == nil && e != nil {
		e.Name = path.Base(rel)
		return s.entry(rel, e), nil
	}
	var te *textproto.Error
	if err != nil && !(errors.As(err, &te) && (te.Code == 500 || te.Code == 501 || te.Code == 502 || te.Code == 504)) {
		return wire.Entry{}, ftpError("looking up "+rel, err)
	}
	// No MLST: the parent's listing has the entry.
	es, err := s.c.List(remote(s.base, path.Dir(rel)))
	if err != nil {
		return wire.Entry{}, ftpError("looking up "+rel, err)
	}
	for _, e := range es {
		if e.Name == path.Base(rel) {
			return s.entry(rel, e), nil
		}
	}
	return wire.Entry{}, fmt.Errorf("%w: %s", ErrNotFound, rel)
}

func (s *ftpSession) read(ctx context.Context, rel string, max int64) (wire.Entry, []byte, error) {
	e, err := s.stat(ctx, rel)
	if err == nil {
		err = readable(e, rel, max)
	}
	if err != nil {
		return e, nil, err
	}
	r, err := s.c.Retr(remote(s.base, rel))
	if err != nil {
		return e, nil, ftpError("reading "+rel, err)
	}
	data, rerr := io.ReadAll(io.LimitReader(r, max+1))
	if int64(len(data)) > max {
		_ = r.Close()
		return e, nil, grew(rel, max)
	}
	// Close reads the transfer's final reply: a transfer the server broke
	// off is an error here even when the bytes so far looked complete.
	cerr := r.Close()
	if rerr != nil {
		return e, nil, ftpError("reading "+rel, rerr)
	}
	if cerr != nil {
		return e, nil, ftpError("reading "+rel+" (the transfer did not complete)", cerr)
	}
	e.Size = int64(len(data))
	return e, data, nil
}

// countingReader counts what it reads.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// tempName is an upload's temporary name in its target directory.
func tempName() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return ".agenthost-" + hex.EncodeToString(b) + ".part"
}

func (s *ftpSession) write(ctx context.Context, rel string, data io.Reader, size int64, overwrite bool) (wire.Entry, error) {
	if rel == "" {
		return wire.Entry{}, fmt.Errorf("%w: name a file to write", ErrInvalidPath)
	}
	if e, err := s.stat(ctx, rel); err == nil {
		if e.Dir {
			return e, fmt.Errorf("%w: %s", ErrIsDir, rel)
		}
		if !overwrite {
			return e, fmt.Errorf("%w: %s", ErrExists, rel)
		}
	} else if !errors.Is(err, ErrNotFound) {
		return wire.Entry{}, err
	}
	dir := path.Dir(rel)
	if dir == "." {
		dir = ""
	}
	tmp := remote(s.base, path.Join(dir, tempName()))
	n := &countingReader{r: data}
	if err := s.c.Stor(tmp, n); err != nil {
		_ = s.c.Delete(tmp)
		return wire.Entry{}, ftpWriteError("uploading "+rel, err)
	}
	if n.n != size {
		// The source ended early: no short file under the real name.
		_ = s.c.Delete(tmp)
		return wire.Entry{}, fmt.Errorf("uploading %s: %d of %d bytes read", rel, n.n, size)
	}
	if err := s.c.Rename(tmp, remote(s.base, rel)); err != nil {
		_ = s.c.Delete(tmp)
		return wire.Entry{}, ftpWriteError("renaming the upload to "+rel, err)
	}
	return wire.Entry{Name: path.Base(rel), Path: rel, Size: size, Modified: time.Now().UTC()}, nil
}

func (s *ftpSession) mkdir(_ context.Context, rel string) (wire.Entry, error) {
	if rel == "" {
		return wire.Entry{}, fmt.Errorf("%w: name a directory to make", ErrInvalidPath)
	}
	if err := s.c.MakeDir(remote(s.base, rel)); err != nil {
		return wire.Entry{}, ftpWriteError("making "+rel, err)
	}
	return wire.Entry{Name: path.Base(rel), Path: rel, Dir: true}, nil
}

func (s *ftpSession) close() error { return s.c.Quit() }
