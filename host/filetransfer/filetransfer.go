// Package filetransfer is the host capability "filetransfer": a connector
// plugin lists, reads and writes files on a user's FTP, FTPS or SFTP
// server, which the host reaches for it (a wasip1 plugin has no sockets,
// and pkg/sftp does not build for it). The plugin names a connection; the
// host looks it up for the calling user, signs in with its password or key
// (which never enter the sandbox), dials only the connection's own host
// and port under the egress address rules, verifies an SFTP server's
// pinned host key, keeps FTP data channels on the control connection's
// address, resolves every path under the connection's base directory, and
// bounds each operation in time and every read in size.
package filetransfer

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/agenthost/agenthost/pdk/filetransfer/wire"
)

// Errors of an operation; each is wrapped with detail.
var (
	// ErrInvalidPath: a path with "..", a control character or a backslash.
	ErrInvalidPath = errors.New("invalid path")
	// ErrOutside: a symbolic link leading out of the base directory, or
	// round in a loop.
	ErrOutside = errors.New("path leads outside the connection's base directory")
	// ErrNotFound: nothing at that path.
	ErrNotFound = errors.New("not found")
	// ErrTooLarge: a file over the read limit.
	ErrTooLarge = errors.New("file too large")
	// ErrExists: a write would replace a file without Overwrite.
	ErrExists = errors.New("file exists")
	// ErrNotDir and ErrIsDir: a directory operation on a file, or the reverse.
	ErrNotDir = errors.New("not a directory")
	ErrIsDir  = errors.New("is a directory")
	// ErrHostKey: the SFTP server's host key is not the pinned one.
	ErrHostKey = errors.New("host key does not match the connection's pin")
	// ErrProtocol: the server answered something its protocol does not
	// allow (garbage, a reply out of place).
	ErrProtocol = errors.New("the server's answer is not valid")
)

// session is a signed-in connection to one file server. Paths are clean
// relative paths under the base directory (clean's output). A session is
// used by one operation at a time.
type session interface {
	// begin bounds the next operation by timeout and ctx; its result ends it.
	begin(ctx context.Context, timeout time.Duration) func()
	list(ctx context.Context, dir string, limit int) ([]wire.Entry, bool, error)
	stat(ctx context.Context, p string) (wire.Entry, error)
	read(ctx context.Context, p string, max int64) (wire.Entry, []byte, error)
	write(ctx context.Context, p string, data io.Reader, size int64, overwrite bool) (wire.Entry, error)
	mkdir(ctx context.Context, p string) (wire.Entry, error)
	close() error
}

// clean reports whether err leaves the session usable: a refusal of the
// request, not a failure of the connection.
func clean(err error) bool {
	for _, e := range []error{ErrInvalidPath, ErrOutside, ErrNotFound, ErrTooLarge, ErrExists, ErrNotDir, ErrIsDir} {
		if errors.Is(err, e) {
			return true
		}
	}
	return err == nil
}

// readable refuses a read of e, at rel, before any byte moves: a
// directory, or a file whose listed size is over max bytes.
func readable(e wire.Entry, rel string, max int64) error {
	if e.Dir {
		return fmt.Errorf("%w: %s", ErrIsDir, rel)
	}
	if e.Size > max {
		return fmt.Errorf("%w: %s is %d bytes, over the limit of %d", ErrTooLarge, rel, e.Size, max)
	}
	return nil
}

// grew is the error of a file that grew over max bytes while it was read
// (its listed size was under).
func grew(rel string, max int64) error {
	return fmt.Errorf("%w: %s grew over the limit of %d bytes while read", ErrTooLarge, rel, max)
}
