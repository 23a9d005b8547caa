package store

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"syscall"

	"github.com/jackc/pgx/v5/pgconn"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// ErrReadOnly is returned (wrapped, naming the path) by Open when the data
// directory cannot be written: a read-only mount or missing permissions.
var ErrReadOnly = errors.New("read-only")

// IsStorageFull reports whether err says the storage under the server is
// full: a file system out of space or quota (the data directory, a blob's
// staging file), SQLite's "database or disk is full", PostgreSQL's
// disk_full (SQLSTATE 53100). Such a failure is the operator's to fix, and
// a caller is told so instead of meeting an unexplained server error.
func IsStorageFull(err error) bool {
	if err == nil {
		return false
	}
	if errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT) {
		return true
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) && pe.Code == "53100" {
		return true
	}
	var se *sqlite.Error
	return errors.As(err, &se) && se.Code()&0xff == sqlite3.SQLITE_FULL
}

// checkWritable fails with ErrReadOnly, naming dir, when nothing can be
// created in it. SQLite would only say "unable to open database file (14)"
// (or fail on the first write), which names neither the path nor the cause.
func checkWritable(dir string) error {
	f, err := os.CreateTemp(dir, ".write-check-*")
	if err == nil {
		f.Close()
		os.Remove(f.Name())
		return nil
	}
	switch {
	case errors.Is(err, syscall.EROFS):
		return fmt.Errorf("store: the data directory %s is on a read-only file system: %w", dir, ErrReadOnly)
	case errors.Is(err, os.ErrPermission):
		return fmt.Errorf("store: the data directory %s is read-only for this user (permission denied): %w", dir, ErrReadOnly)
	case errors.Is(err, syscall.ENOSPC):
		return fmt.Errorf("store: the data directory %s is full: %w", dir, err)
	}
	return fmt.Errorf("store: the data directory %s cannot be written: %w", dir, err)
}

// IsUnavailable reports whether err says the database could not be reached
// or the connection to it broke: a failure to connect, a connection closed
// under a statement, PostgreSQL shutting down or starting (SQLSTATE class 08,
// 57P01-57P03). Such a failure passes once the database is back, so work
// that must not be lost (a round's events, its end) waits and tries again,
// where any other error is final. A statement whose connection broke after
// the server ran it but before it answered may have taken effect: a retry
// of it can apply twice, which is why only writes of a round are retried.
func IsUnavailable(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return strings.HasPrefix(pe.Code, "08") || pe.Code == "57P01" || pe.Code == "57P02" || pe.Code == "57P03"
	}
	var ce *pgconn.ConnectError
	if errors.As(err, &ce) {
		return true
	}
	var ne net.Error
	if errors.As(err, &ne) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) ||
		errors.Is(err, driver.ErrBadConn) {
		return true
	}
	// pgx reports some broken connections only in words.
	msg := err.Error()
	return strings.Contains(msg, "failed to connect") || strings.Contains(msg, "conn closed") ||
		strings.Contains(msg, "connection reset") || strings.Contains(msg, "unexpected EOF")
}
