package filetransfer

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"path"
	"sort"
	"strings"
	"time"

	"github.com/pkg/sftp"
	"golang.org/x/crypto/ssh"

	"github.com/agenthost/agenthost/pdk/filetransfer/wire"
)

// maxLinks bounds the symbolic links one path resolution follows (as
// Linux's ELOOP at 40).
const maxLinks = 40

// sftpSession is an SFTP session over SSH.
type sftpSession struct {
	conn net.Conn
	ssh  *ssh.Client
	c    *sftp.Client
	base string
}

// dialSFTP connects to hostport through dial, verifies the server's host
// key against pin (a SHA256 fingerprint; there is no other way in) and
// signs in with the password and/or key.
func dialSFTP(ctx context.Context, dial dialFunc, hostport, base, user, password, privateKey, pin string, timeout time.Duration) (*sftpSession, error) {
	var auth []ssh.AuthMethod
	if privateKey != "" {
		signer, err := ssh.ParsePrivateKey([]byte(privateKey))
		if err != nil {
			return nil, fmt.Errorf("the connection's private key does not parse: %w", err)
		}
		auth = append(auth, ssh.PublicKeys(signer))
	}
	if password != "" {
		auth = append(auth, ssh.Password(password))
	}
	cfg := &ssh.ClientConfig{User: user, Auth: auth, Timeout: timeout,
		HostKeyCallback: func(_ string, _ net.Addr, key ssh.PublicKey) error {
			got := ssh.FingerprintSHA256(key)
			if subtle.ConstantTimeCompare([]byte(got), []byte(pin)) != 1 {
				return fmt.Errorf("%w: the server presented %s, the connection pins %s", ErrHostKey, got, pin)
			}
			return nil
		}}
	conn, err := dial(ctx, "tcp", hostport)
	if err != nil {
		return nil, err
	}
	d := time.Now().Add(timeout)
	if cd, ok := ctx.Deadline(); ok && cd.Before(d) {
		d = cd
	}
	_ = conn.SetDeadline(d)
	stop := context.AfterFunc(ctx, func() { _ = conn.SetDeadline(time.Unix(1, 0)) })
	defer stop()
	sc, chans, reqs, err := ssh.NewClientConn(conn, hostport, cfg)
	if err != nil {
		conn.Close()
		switch {
		case errors.Is(err, ErrHostKey):
			return nil, err
		case strings.Contains(err.Error(), "unable to authenticate"):
			return nil, fmt.Errorf("%w: the server refused the account, password or key", errRejected)
		}
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			return nil, fmt.Errorf("SSH handshake with %s: %w", hostport, context.DeadlineExceeded)
		}
		return nil, fmt.Errorf("%w: SSH handshake with %s: %v", ErrProtocol, hostport, err)
	}
	client := ssh.NewClient(sc, chans, reqs)
	c, err := sftp.NewClient(client)
	if err != nil {
		client.Close()
		return nil, fmt.Errorf("%w: starting SFTP on %s: %v", ErrProtocol, hostport, err)
	}
	_ = conn.SetDeadline(time.Time{})
	return &sftpSession{conn: conn, ssh: client, c: c, base: base}, nil
}

func (s *sftpSession) begin(ctx context.Context, timeout time.Duration) func() {
	d := time.Now().Add(timeout)
	if cd, ok := ctx.Deadline(); ok && cd.Before(d) {
		d = cd
	}
	_ = s.conn.SetDeadline(d)
	stop := context.AfterFunc(ctx, func() { _ = s.conn.SetDeadline(time.Unix(1, 0)) })
	return func() {
		stop()
		_ = s.conn.SetDeadline(time.Time{})
	}
}

func sftpError(doing string, err error) error {
	var ne net.Error
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("%w: %s", ErrNotFound, doing)
	case errors.Is(err, fs.ErrPermission):
		return fmt.Errorf("%s: permission denied", doing)
	case errors.As(err, &ne) && ne.Timeout():
		return fmt.Errorf("%s: %w", doing, context.DeadlineExceeded)
	}
	return fmt.Errorf("%s: %w", doing, err)
}

// resolve turns rel into the absolute remote path it leads to, following
// symbolic links itself (servers differ in what REALPATH does) and
// refusing any that leads outside the base directory or round in a loop.
// With followLast unset the last component is not followed (a write
// replaces a link, not its target). A missing last component is returned
// as is (a file to create); a missing directory on the way is ErrNotFound.
func (s *sftpSession) resolve(rel string, followLast bool) (string, error) {
	cur := s.base
	parts := split(rel)
	links := 0
	for len(parts) > 0 {
		next := path.Join(cur, parts[0])
		last := len(parts) == 1
		parts = parts[1:]
		if last && !followLast {
			return next, nil
		}
		fi, err := s.c.Lstat(next)
		if errors.Is(err, fs.ErrNotExist) && last {
			return next, nil
		}
		if err != nil {
			return "", sftpError("looking up "+relTo(s.base, next), err)
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			cur = next
			continue
		}
		if links++; links > maxLinks {
			return "", fmt.Errorf("%w: more than %d symbolic links (a loop?) resolving %s", ErrOutside, maxLinks, rel)
		}
		target, err := s.c.ReadLink(next)
		if err != nil {
			return "", sftpError("reading link "+relTo(s.base, next), err)
		}
		if !path.IsAbs(target) {
			target = path.Join(cur, target)
		}
		target = path.Clean(target)
		if !within(s.base, target) {
			return "", fmt.Errorf("%w: %s is a link to outside it", ErrOutside, relTo(s.base, next))
		}
		parts = append(split(relTo(s.base, target)), parts...)
		cur = s.base
	}
	return cur, nil
}

func split(rel string) []string {
	if rel == "" {
		return nil
	}
	return strings.Split(rel, "/")
}

func fileEntry(name, rel string, fi os.FileInfo) wire.Entry {
	e := wire.Entry{Name: name, Path: rel, Dir: fi.IsDir(), Modified: fi.ModTime().UTC()}
	if !e.Dir {
		e.Size = fi.Size()
	}
	return e
}

// linkEntry describes a link by its target, when the target is inside the
// base directory and exists.
func (s *sftpSession) linkEntry(name, rel string) wire.Entry {
	e := wire.Entry{Name: name, Path: rel, Link: true}
	target, err := s.resolve(rel, true)
	if err != nil {
		return e
	}
	fi, err := s.c.Stat(target)
	if err != nil {
		return e
	}
	t := fileEntry(name, rel, fi)
	t.Link, t.Target = true, relTo(s.base, target)
	return t
}

func (s *sftpSession) list(_ context.Context, dir string, limit int) ([]wire.Entry, bool, error) {
	p, err := s.resolve(dir, true)
	if err != nil {
		return nil, false, err
	}
	fis, err := s.c.ReadDir(p)
	if err != nil {
		return nil, false, sftpError("listing "+show(dir), err)
	}
	sort.Slice(fis, func(i, j int) bool { return fis[i].Name() < fis[j].Name() })
	truncated := len(fis) > limit
	if truncated {
		fis = fis[:limit]
	}
	out := make([]wire.Entry, 0, len(fis))
	for _, fi := range fis {
		name := fi.Name()
		if name == "." || name == ".." || name == "" || strings.Contains(name, "/") {
			continue
		}
		rel := path.Join(dir, name)
		if fi.Mode()&fs.ModeSymlink != 0 {
			out = append(out, s.linkEntry(name, rel))
			continue
		}
		out = append(out, fileEntry(name, rel, fi))
	}
	return out, truncated, nil
}

func (s *sftpSession) stat(_ context.Context, rel string) (wire.Entry, error) {
	p, err := s.resolve(rel, true)
	if err != nil {
		return wire.Entry{}, err
	}
	fi, err := s.c.Stat(p)
	if err != nil {
		return wire.Entry{}, sftpError("looking up "+show(rel), err)
	}
	name := path.Base(rel)
	if rel == "" {
		name = path.Base(s.base)
	}
	e := fileEntry(name, rel, fi)
	if t := relTo(s.base, p); t != rel {
		e.Link, e.Target = true, t
	}
	return e, nil
}

func (s *sftpSession) read(ctx context.Context, rel string, max int64) (wire.Entry, []byte, error) {
	e, err := s.stat(ctx, rel)
	if err == nil {
		err = readable(e, rel, max)
	}
	if err != nil {
		return e, nil, err
	}
	p, err := s.resolve(rel, true)
	if err != nil {
		return e, nil, err
	}
	f, err := s.c.Open(p)
	if err != nil {
		return e, nil, sftpError("opening "+rel, err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return e, nil, sftpError("reading "+rel, err)
	}
	if int64(len(data)) > max {
		return e, nil, grew(rel, max)
	}
	e.Size = int64(len(data))
	return e, data, nil
}

func (s *sftpSession) write(_ context.Context, rel string, data io.Reader, size int64, overwrite bool) (wire.Entry, error) {
	if rel == "" {
		return wire.Entry{}, fmt.Errorf("%w: name a file to write", ErrInvalidPath)
	}
	dir, name := path.Split(rel)
	parent, err := s.resolve(strings.TrimSuffix(dir, "/"), true)
	if err != nil {
		return wire.Entry{}, err
	}
	if fi, err := s.c.Stat(parent); err != nil {
		return wire.Entry{}, sftpError("looking up "+show(strings.TrimSuffix(dir, "/")), err)
	} else if !fi.IsDir() {
		return wire.Entry{}, fmt.Errorf("%w: %s", ErrNotDir, show(strings.TrimSuffix(dir, "/")))
	}
	target := path.Join(parent, name)
	if fi, err := s.c.Lstat(target); err == nil {
		if fi.IsDir() {
			return wire.Entry{}, fmt.Errorf("%w: %s", ErrIsDir, rel)
		}
		if !overwrite {
			return wire.Entry{}, fmt.Errorf("%w: %s", ErrExists, rel)
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return wire.Entry{}, sftpError("looking up "+rel, err)
	}
	tmp := path.Join(parent, tempName())
	f, err := s.c.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL)
	if err != nil {
		return wire.Entry{}, sftpError("creating the upload of "+rel, err)
	}
	n, werr := io.Copy(f, data)
	if werr == nil && n != size {
		werr = fmt.Errorf("%d of %d bytes read", n, size)
	}
	cerr := f.Close()
	if werr != nil || cerr != nil {
		_ = s.c.Remove(tmp)
		return wire.Entry{}, sftpError("uploading "+rel, errors.Join(werr, cerr))
	}
	// posix-rename@openssh.com replaces atomically; plain SFTP rename
	// refuses an existing target, which is what no-overwrite wants.
	if overwrite {
		err = s.c.PosixRename(tmp, target)
	} else {
		err = s.c.Rename(tmp, target)
	}
	if err != nil {
		_ = s.c.Remove(tmp)
		return wire.Entry{}, sftpError("renaming the upload to "+rel, err)
	}
	return wire.Entry{Name: name, Path: rel, Size: size, Modified: time.Now().UTC()}, nil
}

func (s *sftpSession) mkdir(_ context.Context, rel string) (wire.Entry, error) {
	if rel == "" {
		return wire.Entry{}, fmt.Errorf("%w: name a directory to make", ErrInvalidPath)
	}
	dir, name := path.Split(rel)
	parent, err := s.resolve(strings.TrimSuffix(dir, "/"), true)
	if err != nil {
		return wire.Entry{}, err
	}
	if err := s.c.Mkdir(path.Join(parent, name)); err != nil {
		return wire.Entry{}, sftpError("making "+rel, err)
	}
	return wire.Entry{Name: name, Path: rel, Dir: true}, nil
}

func (s *sftpSession) close() error {
	err := s.c.Close()
	return errors.Join(err, s.ssh.Close())
}
