package blob

import (
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
)

// Source is a store whose blobs can be listed and read: the store blobs are
// copied from.
type Source interface {
	List(ctx context.Context) iter.Seq2[string, error]
	Open(ctx context.Context, sha string) (Reader, error)
}

// Destination is the store blobs are copied to.
type Destination interface {
	Stat(ctx context.Context, sha string) (int64, error)
	Put(ctx context.Context, r io.Reader, max int64) (sha string, size int64, err error)
}

// CopyResult counts what Copy did.
type CopyResult struct {
	// Copied blobs were sent; Present ones were in the destination already.
	Copied, Present int
	// Bytes is the size of the copied blobs.
	Bytes int64
}

// Copy puts every blob of src that dst lacks into dst, one at a time,
// streamed, and checks that each arrives under its own name: a source blob
// whose bytes no longer hash to it is an error naming it, and dst does not
// keep it under that name. Copy is idempotent, so a copy stopped (an error,
// ctx done) resumes where it stopped when run again; it stops at the first
// error, with the counts so far. progress, if set, is called after each blob.
func Copy(ctx context.Context, dst Destination, src Source, progress func(sha string, copied bool)) (CopyResult, error) {
	var res CopyResult
	for sha, err := range src.List(ctx) {
		if err != nil {
			return res, err
		}
		copied, n, err := copyOne(ctx, dst, src, sha)
		if err != nil {
			return res, err
		}
		if copied {
			res.Copied++
			res.Bytes += n
		} else {
			res.Present++
		}
		if progress != nil {
			progress(sha, copied)
		}
	}
	return res, nil
}

// copyOne copies the blob sha unless dst has it (same size) already.
func copyOne(ctx context.Context, dst Destination, src Source, sha string) (copied bool, size int64, err error) {
	r, err := src.Open(ctx, sha)
	if err != nil {
		return false, 0, fmt.Errorf("blob: copy %s: %w", sha, err)
	}
	defer r.Close()
	have, err := dst.Stat(ctx, sha)
	if err == nil && have == r.Size() {
		return false, 0, nil
	}
	if err != nil && !errors.Is(err, ErrNotFound) {
		return false, 0, fmt.Errorf("blob: copy %s: %w", sha, err)
	}
	got, n, err := dst.Put(ctx, r, NoLimit)
	if err != nil {
		return false, 0, fmt.Errorf("blob: copy %s: %w", sha, err)
	}
	if got != sha {
		// dst stored the bytes under their real name, which nothing refers to.
		return false, 0, fmt.Errorf("blob: copy %s: the source's %d bytes hash to %s: it is damaged", sha, n, got)
	}
	return true, n, nil
}
