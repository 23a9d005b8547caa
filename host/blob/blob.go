// Package blob stores immutable byte strings under the lowercase hex SHA-256
// of their content, in one of three backends:
//
//   - [Dir], the embedded default: one file per blob in a local directory
//     (DIR/ab/cdef…), for a single host;
//   - [Postgres], chunks of 1 MiB in the blob_chunks table, for the PostgreSQL
//     deployment, where every host of a cluster reads the same bytes;
//   - [S3], one object per blob in an S3-compatible bucket (AWS S3, MinIO,
//     Ceph, Cloudflare R2, …), for clusters without a shared disk and for
//     more documents than a database should hold.
//
// All give the same guarantees, checked by one conformance test:
//
//   - Put streams: it never holds the whole input in memory. It hashes while
//     copying to a local staging file and makes the blob visible in one atomic
//     step (a rename, a transaction, an upload's completion) only once every
//     byte is durable, so a
//     reader never sees a partial blob, and an upload that fails, is cancelled
//     or whose process is killed leaves nothing visible.
//   - Put is idempotent and safe to race: any number of concurrent Puts of the
//     same bytes store one blob and return the same sha.
//   - Reads of a range cost the range (on Postgres rounded out to whole
//     chunks; on S3 one ranged GET), not the blob.
//   - A sha is validated before use (64 lowercase hex digits), so no caller
//     input ever becomes a path or reaches a query in another form.
//
// Blobs carry no owner: who may read a blob is decided by the rows that point
// at it (files), which is also why deleting exists only for the garbage
// collector (package sweep): [Dir.Retire] for a directory, and for Postgres
// the sweeper's own transaction on the blobs row. Both record when a blob's
// bytes were last written (a Dir file's modification time, the blobs row's
// written_at): a Put of bytes already stored renews it.
package blob

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
)

// Reader reads one stored blob; ranges are served without reading the whole
// blob. ReadAt is safe for concurrent use (as io.ReaderAt requires); Read and
// Seek share one offset and are not. Close releases the reader's resources.
type Reader interface {
	io.ReaderAt
	io.ReadSeekCloser
	// Size is the blob's length in bytes.
	Size() int64
}

// ErrNotFound is returned (wrapped) by Open and Stat when no blob has the
// given sha, including while a Put of that content is still in progress.
var ErrNotFound = errors.New("blob not found")

// ErrTooLarge is returned (wrapped, by an error that states the limit) by Put
// when the input is longer than the limit; nothing is stored.
var ErrTooLarge = errors.New("blob too large")

// ErrInvalidSHA is returned (wrapped) when a sha is not 64 lowercase hex
// digits. Such a string is never used as a path or a key.
var ErrInvalidSHA = errors.New("invalid blob sha256")

// NoLimit passed as Put's max accepts input of any length.
const NoLimit int64 = -1

// copyBufSize is the buffer Put copies through: large enough that system
// calls and hashing dominate nothing, small enough that many concurrent
// uploads stay cheap.
const copyBufSize = 256 << 10

// checkSHA reports whether sha names a blob: exactly 64 lowercase hex digits.
// Uppercase is refused rather than folded so that one blob has one name.
func checkSHA(sha string) error {
	if len(sha) != sha256.Size*2 {
		return fmt.Errorf("%w: %q is not 64 hex digits", ErrInvalidSHA, clip(sha))
	}
	for i := 0; i < len(sha); i++ {
		c := sha[i]
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return fmt.Errorf("%w: %q is not 64 lowercase hex digits", ErrInvalidSHA, clip(sha))
		}
	}
	return nil
}

// clip keeps error messages short when a caller passes something huge.
func clip(s string) string {
	if len(s) > 80 {
		return s[:80] + "…"
	}
	return s
}

// stage copies r to w while hashing, refusing more than max bytes (NoLimit or
// any negative max: no limit) and stopping when ctx is done. ctx is checked
// between reads: a Read that blocks is for the reader's owner to unblock (an
// HTTP request body does so when the request ends).
func stage(ctx context.Context, w io.Writer, r io.Reader, max int64) (sha string, size int64, err error) {
	h := sha256.New()
	buf := make([]byte, copyBufSize)
	for {
		if err := ctx.Err(); err != nil {
			return "", size, fmt.Errorf("blob: upload stopped after %d bytes: %w", size, err)
		}
		n, rerr := r.Read(buf)
		if n > 0 {
			size += int64(n)
			if max >= 0 && size > max {
				return "", size, fmt.Errorf("blob: upload exceeds the limit of %d bytes: %w", max, ErrTooLarge)
			}
			h.Write(buf[:n]) // a hash.Hash's Write never fails
			if _, err := w.Write(buf[:n]); err != nil {
				return "", size, fmt.Errorf("blob: write staging file: %w", err)
			}
		}
		if rerr == io.EOF {
			return hex.EncodeToString(h.Sum(nil)), size, nil
		}
		if rerr != nil {
			return "", size, fmt.Errorf("blob: read upload after %d bytes: %w", size, rerr)
		}
	}
}

// createStagingFile makes a staging file named prefix* in dir, creating dir
// when it is missing: for the stores that stage outside their own directory
// (Postgres, S3) it is usually inside a data directory that a fresh host has
// not made (nothing else writes there), and a temporary folder's cleaner may
// remove it while the host runs.
func createStagingFile(dir, prefix string) (*os.File, error) {
	f, err := os.CreateTemp(dir, prefix+"*")
	if errors.Is(err, fs.ErrNotExist) {
		if mkErr := os.MkdirAll(dir, 0o700); mkErr != nil {
			return nil, fmt.Errorf("blob: create staging folder: %w", mkErr)
		}
		f, err = os.CreateTemp(dir, prefix+"*")
	}
	if err != nil {
		return nil, fmt.Errorf("blob: create staging file: %w", err)
	}
	return f, nil
}
