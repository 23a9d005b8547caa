package blob

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// retiredPrefix starts the name of a blob taken out of place by Retire (in
// DIR/tmp, so that putting it back or deleting it is a rename or an unlink).
const retiredPrefix = "retired-"

// ErrFresh is returned (wrapped) by Retire for a blob written at or after
// the cutoff: a Put of the same bytes may be about to be referred to.
var ErrFresh = errors.New("blob written recently")

// Stored is one blob of a Dir as Walk finds it.
type Stored struct {
	SHA256 string
	Size   int64
	// Written is the file's modification time: when its bytes were last
	// stored (every Put renames a freshly written file into place).
	Written time.Time
}

// Walk calls fn for every blob in the directory (as List finds them), with
// its size and modification time; one stat per blob. A blob deleted while
// Walk runs may or may not be reported.
func (d *Dir) Walk(ctx context.Context, fn func(Stored) error) error {
	for sha, err := range d.List(ctx) {
		if err != nil {
			return err
		}
		info, err := os.Stat(d.path(sha))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return fmt.Errorf("blob: walk %s: %w", sha, err)
		}
		if err := fn(Stored{SHA256: sha, Size: info.Size(), Written: info.ModTime()}); err != nil {
			return err
		}
	}
	return nil
}

// Retired is a blob taken out of place by Retire: readers no longer find
// it; Delete removes its bytes for good, Restore puts it back.
type Retired struct {
	d    *Dir
	sha  string
	path string
	// Size is the retired blob's length.
	Size int64
}

// Retire takes the blob named sha out of place, as the first half of a
// delete that the caller completes (Delete) once it has made sure in its
// database that nothing refers to the blob, or undoes (Restore).
//
// It closes the race with Put that a plain Delete has: the blob is moved
// away first and its modification time read afterwards, from the moved
// file. A Put that renamed its file into place before the move left a file
// written at or after writtenBefore, which Retire puts back (ErrFresh); a
// Put after the move finds the place empty and stores its own file, which
// Retire never touches. Either way a blob just stored survives. A missing
// blob is ErrNotFound.
func (d *Dir) Retire(ctx context.Context, sha string, writtenBefore time.Time) (*Retired, error) {
	if err := checkSHA(sha); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("blob: retire %s: %w", sha, err)
	}
	// A random suffix, not a file made first: one rename per blob. Two
	// sweepers retiring the same blob at once cannot meet here (only one
	// rename of it succeeds).
	to := filepath.Join(d.tmp, retiredPrefix+sha+"-"+strconv.FormatUint(rand.Uint64(), 36))
	if err := os.Rename(d.path(sha), to); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("blob %s: %w", sha, ErrNotFound)
		}
		return nil, fmt.Errorf("blob: retire %s: %w", sha, err)
	}
	r := &Retired{d: d, sha: sha, path: to}
	st, err := os.Stat(to)
	if err != nil {
		return nil, errors.Join(fmt.Errorf("blob: retire %s: %w", sha, err), r.Restore())
	}
	if !st.ModTime().Before(writtenBefore) {
		if err := r.Restore(); err != nil {
			return nil, err
		}
		return nil, fmt.Errorf("blob %s written at %s: %w", sha, st.ModTime().UTC().Format(time.RFC3339), ErrFresh)
	}
	r.Size = st.Size()
	return r, nil
}

// Delete removes the retired bytes. Readers that opened the blob before it
// was retired keep reading it.
func (r *Retired) Delete() error {
	if err := os.Remove(r.path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("blob: delete %s: %w", r.sha, err)
	}
	return nil
}

// Restore puts the retired blob back, unless a Put stored the same bytes in
// its place meanwhile (then the newer file stays: same content, and its
// modification time is the one the grace period must see).
func (r *Retired) Restore() error {
	return r.d.restore(r.sha, r.path)
}

func (d *Dir) restore(sha, from string) error {
	shard := filepath.Join(d.root, sha[:2])
	if err := d.ensureShard(shard); err != nil {
		return err
	}
	err := os.Link(from, d.path(sha))
	switch {
	case err == nil, errors.Is(err, fs.ErrExist):
		if err := os.Remove(from); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("blob: restore %s: %w", sha, err)
		}
		return syncDir(shard)
	default:
		return fmt.Errorf("blob: restore %s: %w", sha, err)
	}
}

// RestoreRetired puts back every blob a sweeper left retired when it was
// killed (whether or not its database transaction committed): keeping bytes
// is always safe, and bytes nothing refers to are found again by the next
// sweep. It returns how many it put back.
func (d *Dir) RestoreRetired() (int, error) {
	entries, err := os.ReadDir(d.tmp)
	if err != nil {
		return 0, fmt.Errorf("blob: restore retired: %w", err)
	}
	n := 0
	var errs []error
	for _, e := range entries {
		name := e.Name()
		if !e.Type().IsRegular() || !strings.HasPrefix(name, retiredPrefix) {
			continue
		}
		sha, _, ok := strings.Cut(strings.TrimPrefix(name, retiredPrefix), "-")
		if !ok || checkSHA(sha) != nil {
			continue
		}
		if err := d.restore(sha, filepath.Join(d.tmp, name)); err != nil {
			errs = append(errs, err)
			continue
		}
		n++
	}
	return n, errors.Join(errs...)
}
