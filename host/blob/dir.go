package blob

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"iter"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// stagingPrefix starts the name of every staging file, so CleanStaging
// removes only what Put created.
const stagingPrefix = "put-"

// Dir stores each blob as one file DIR/ab/cdef… (the first two hex digits name
// a subfolder, so no folder grows past 1/256 of the blobs). Uploads are staged
// in DIR/tmp, on the same file system, so that making one visible is a rename.
// It is safe for concurrent use, also by several processes sharing DIR.
type Dir struct {
	root string
	tmp  string
}

// NewDir opens (creating if needed) a blob directory. It does not touch staging
// files left by a killed process: another process may be uploading into the
// same directory, so removing them is [Dir.CleanStaging]'s job, by age.
func NewDir(dir string) (*Dir, error) {
	if dir == "" {
		return nil, errors.New("blob: NewDir needs a directory")
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("blob: %w", err)
	}
	d := &Dir{root: abs, tmp: filepath.Join(abs, "tmp")}
	if err := os.MkdirAll(d.tmp, 0o750); err != nil {
		return nil, fmt.Errorf("blob: create %s: %w", d.tmp, err)
	}
	return d, nil
}

// Path is where the blob named sha is (or would be) stored; for diagnostics
// and for handing a file to a tool that needs a path. The sha is validated.
func (d *Dir) Path(sha string) (string, error) {
	if err := checkSHA(sha); err != nil {
		return "", err
	}
	return d.path(sha), nil
}

// path assumes a checked sha: 64 hex digits cannot contain a separator or "..".
func (d *Dir) path(sha string) string { return filepath.Join(d.root, sha[:2], sha[2:]) }

// Put stores everything r yields, up to max bytes (NoLimit: any length), and
// returns its sha and size. It streams through a staging file in DIR/tmp,
// fsyncs it, and renames it into place, so the blob is either complete or
// absent. Costs: one pass over the data (write and hash), one fsync of the file
// and one of its folder. Storing bytes already present rewrites the same file
// atomically, which is harmless to readers (an open Reader keeps the old file).
// On any error (too large, ctx done, reader or disk error) nothing is stored
// and the staging file is removed.
func (d *Dir) Put(ctx context.Context, r io.Reader, max int64) (sha string, size int64, err error) {
	f, err := os.CreateTemp(d.tmp, stagingPrefix+"*")
	if err != nil {
		return "", 0, fmt.Errorf("blob: create staging file: %w", err)
	}
	tmp := f.Name()
	committed := false
	defer func() {
		if !committed {
			f.Close()
			os.Remove(tmp)
		}
	}()
	sha, size, err = stage(ctx, f, r, max)
	if err != nil {
		return "", 0, err
	}
	// The data must be on disk before the name is: otherwise a crash after the
	// rename could leave a visible file with missing bytes.
	if err := f.Sync(); err != nil {
		return "", 0, fmt.Errorf("blob: sync staging file: %w", err)
	}
	if err := f.Close(); err != nil {
		return "", 0, fmt.Errorf("blob: close staging file: %w", err)
	}
	// A cancellation that arrives after the last byte still wins: the caller
	// has been told the upload is abandoned and must not find it stored.
	if err := ctx.Err(); err != nil {
		return "", 0, fmt.Errorf("blob: upload stopped: %w", err)
	}
	shard := filepath.Join(d.root, sha[:2])
	if err := d.ensureShard(shard); err != nil {
		return "", 0, err
	}
	// Always renaming (instead of skipping when the file exists) keeps a racing
	// Delete from undoing this Put after the existence check.
	if err := os.Rename(tmp, filepath.Join(shard, sha[2:])); err != nil {
		return "", 0, fmt.Errorf("blob: store %s: %w", sha, err)
	}
	committed = true
	if err := syncDir(shard); err != nil {
		return "", 0, err
	}
	return sha, size, nil
}

// ensureShard creates a blob subfolder and makes its name durable.
func (d *Dir) ensureShard(shard string) error {
	err := os.Mkdir(shard, 0o750)
	if errors.Is(err, fs.ErrExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("blob: create %s: %w", shard, err)
	}
	return syncDir(d.root)
}

// syncDir fsyncs a folder so that a rename or creation in it survives a crash.
func syncDir(dir string) error {
	f, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("blob: sync %s: %w", dir, err)
	}
	defer f.Close()
	if err := f.Sync(); err != nil {
		return fmt.Errorf("blob: sync %s: %w", dir, err)
	}
	return nil
}

// Open returns a Reader on the blob named sha, or an error wrapping
// ErrNotFound. Costs one open and one fstat; reads go straight to the file.
// The Reader keeps reading the same bytes even if the blob is deleted
// meanwhile. The content is not re-hashed: the directory is trusted.
func (d *Dir) Open(ctx context.Context, sha string) (Reader, error) {
	if err := checkSHA(sha); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("blob: open %s: %w", sha, err)
	}
	f, err := os.Open(d.path(sha))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("blob %s: %w", sha, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("blob: open %s: %w", sha, err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("blob: open %s: %w", sha, err)
	}
	return &fileReader{f: f, size: st.Size()}, nil
}

// Stat returns the size of the blob named sha, or an error wrapping
// ErrNotFound. Costs one stat.
func (d *Dir) Stat(ctx context.Context, sha string) (int64, error) {
	if err := checkSHA(sha); err != nil {
		return 0, err
	}
	if err := ctx.Err(); err != nil {
		return 0, fmt.Errorf("blob: stat %s: %w", sha, err)
	}
	st, err := os.Stat(d.path(sha))
	if errors.Is(err, fs.ErrNotExist) {
		return 0, fmt.Errorf("blob %s: %w", sha, ErrNotFound)
	}
	if err != nil {
		return 0, fmt.Errorf("blob: stat %s: %w", sha, err)
	}
	return st.Size(), nil
}

// Delete removes the blob named sha; a missing blob is not an error. It is for
// the garbage collector, which must make sure nothing refers to the blob and
// that no upload of the same bytes is under way: Delete does not coordinate
// with Put, so a racing Put may return a sha whose file is already gone.
// Readers that already opened the blob keep reading it.
func (d *Dir) Delete(ctx context.Context, sha string) error {
	if err := checkSHA(sha); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("blob: delete %s: %w", sha, err)
	}
	err := os.Remove(d.path(sha))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("blob: delete %s: %w", sha, err)
	}
	return nil
}

// CleanStaging removes staging files in DIR/tmp not written to for olderThan,
// and returns how many it removed. They are what a process killed mid-Put
// leaves behind; they were never visible as blobs. A live Put keeps its file's
// modification time fresh as long as its input flows, so olderThan must exceed
// the longest pause of a live upload (an hour is generous); a Put whose file
// was removed fails instead of storing anything. Call it at start-up or
// periodically; it is not done by NewDir because another process may share DIR.
func (d *Dir) CleanStaging(olderThan time.Duration) (int, error) {
	return cleanStaging(d.tmp, stagingPrefix, olderThan)
}

// cleanStaging removes the regular files in dir whose names start with prefix
// and whose modification time is older than olderThan.
func cleanStaging(dir, prefix string, olderThan time.Duration) (int, error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil // nothing was ever staged there
	}
	if err != nil {
		return 0, fmt.Errorf("blob: clean staging: %w", err)
	}
	cutoff := time.Now().Add(-olderThan)
	removed := 0
	var errs []error
	for _, e := range entries {
		if !e.Type().IsRegular() || !strings.HasPrefix(e.Name(), prefix) {
			continue
		}
		info, err := e.Info()
		if errors.Is(err, fs.ErrNotExist) {
			continue // renamed into place or removed meanwhile
		}
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if info.ModTime().After(cutoff) {
			continue
		}
		err = os.Remove(filepath.Join(dir, e.Name()))
		switch {
		case err == nil:
			removed++
		case !errors.Is(err, fs.ErrNotExist):
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return removed, fmt.Errorf("blob: clean staging: %w", err)
	}
	return removed, nil
}

// fileReader exposes only reading of an *os.File, whose ReadAt already has the
// io.ReaderAt semantics (io.EOF with a short read at the end) and is safe for
// concurrent use.
type fileReader struct {
	f    *os.File
	size int64
}

func (r *fileReader) Read(p []byte) (int, error)              { return r.f.Read(p) }
func (r *fileReader) ReadAt(p []byte, off int64) (int, error) { return r.f.ReadAt(p, off) }
func (r *fileReader) Seek(off int64, whence int) (int64, error) {
	return r.f.Seek(off, whence)
}
func (r *fileReader) Close() error { return r.f.Close() }
func (r *fileReader) Size() int64  { return r.size }

// List yields the sha of every stored blob, in order, reading one shard
// folder at a time; staging files and anything else that is not a blob's
// name are skipped. Blobs stored or deleted meanwhile may or may not be
// yielded.
func (d *Dir) List(ctx context.Context) iter.Seq2[string, error] {
	return func(yield func(string, error) bool) {
		shards, err := os.ReadDir(d.root)
		if err != nil {
			yield("", fmt.Errorf("blob: list %s: %w", d.root, err))
			return
		}
		for _, shard := range shards {
			if !shard.IsDir() || len(shard.Name()) != 2 {
				continue
			}
			if err := ctx.Err(); err != nil {
				yield("", fmt.Errorf("blob: list: %w", err))
				return
			}
			files, err := os.ReadDir(filepath.Join(d.root, shard.Name()))
			if errors.Is(err, fs.ErrNotExist) {
				continue
			}
			if err != nil {
				yield("", fmt.Errorf("blob: list: %w", err))
				return
			}
			for _, f := range files {
				sha := shard.Name() + f.Name()
				if !f.Type().IsRegular() || checkSHA(sha) != nil {
					continue
				}
				if !yield(sha, nil) {
					return
				}
			}
		}
	}
}
