// Package sweep gives storage back: a periodic job deletes the blobs that
// nothing refers to any more (deleted files, versions past their retention,
// emptied trash, deleted workspaces, archive members of deleted archives,
// uploads killed before their row), after first deleting the rows past
// their retention.
//
// # Safety
//
// A blob may be shared by content between files and tenants, so whether it
// is referred to is asked of the database when it is deleted, in the same
// transaction that deletes its row (store.Reclaim): on SQLite under the
// write lock, on PostgreSQL under the blob row's lock, with the foreign keys
// of files, versions and proposals refusing a delete that a concurrent
// transaction made wrong. Bytes in a directory are taken out of place
// (blob.Dir.Retire) inside that transaction and unlinked only after it
// committed; a failed transaction puts them back, and a sweeper killed in
// between leaves them to be put back by the next one.
//
// An upload stores its bytes before its row refers to them. Every blob
// written (stored, or referred to, or no longer referred to) within Grace is
// left alone, so an upload has Grace between its Put and its commit; a Put
// of bytes already stored renews the time, and Retire reads it after moving
// the file, so a Put racing the sweep always wins. A storage hold (taken by
// `agenthost backup`) stops every sweep until it is released.
//
// # Several hosts
//
// The sweep is a periodic job of the job queue (host/jobs): River's leader
// enqueues it once per period for all hosts, and the queue runs one job at
// a time and hands a dead host's job to a live one. A sweep that stops
// midway is safe to run again from the start.
package sweep

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/agenthost/agenthost/host/blob"
	"github.com/agenthost/agenthost/host/jobs"
	"github.com/agenthost/agenthost/host/store"
)

// Defaults of Config.
const (
	DefaultGrace            = time.Hour
	DefaultEvery            = time.Hour
	DefaultVersionRetention = 30 * 24 * time.Hour
	DefaultTrashRetention   = 7 * 24 * time.Hour
	DefaultBatch            = 200
)

// Config configures a Sweeper.
type Config struct {
	// Retention of old versions and of the trash.
	Retention store.Retention
	// Grace: a blob written less than this long ago is kept (see the
	// package documentation). It must exceed the longest time between an
	// upload's bytes being stored and its row being committed. Default 1 h;
	// negative: 0 (tests).
	Grace time.Duration
	// Batch is how many blobs one transaction deletes (default 200): short
	// transactions keep the write lock (SQLite) free for uploads.
	Batch int
	// RowsOnly is for a blob backend the sweeper cannot delete from safely
	// (object storage, blob.S3): only the rows past their retention are
	// deleted, and blob rows and bytes stay where they are.
	RowsOnly bool
	// Staging, when set, has the staging files and unfinished multipart
	// uploads a killed process left behind (older than the grace) removed
	// at each sweep: every blob store keeps its partial uploads apart from
	// its blobs, and nothing else removes them.
	Staging Staging
	// Logger receives a line per sweep; nil discards.
	Logger *slog.Logger
}

// Store is what a sweep reads and deletes (the store.DB).
type Store interface {
	PurgeExpired(ctx context.Context, r store.Retention, at time.Time) (store.Purged, error)
	UnreferencedBlobs(ctx context.Context, after string, writtenBefore time.Time, limit int) ([]store.StoredBlob, error)
	Unrecorded(ctx context.Context, shas []string) ([]string, error)
	ReclaimTx(ctx context.Context, fn func(r *store.Reclaim) error) error
	StorageReport(ctx context.Context, r store.Retention, at, writtenBefore time.Time) (store.StorageReport, error)
}

// Dir is what a sweep needs of a blob directory (blob.Dir).
type Dir interface {
	Walk(ctx context.Context, fn func(blob.Stored) error) error
	Retire(ctx context.Context, sha string, writtenBefore time.Time) (*blob.Retired, error)
	RestoreRetired() (int, error)
}

// Staging is a blob store's clean-up of its partial uploads (blob.Dir,
// blob.Postgres and blob.S3 have it).
type Staging interface {
	CleanStaging(olderThan time.Duration) (int, error)
}

// Sweeper deletes what nothing refers to.
type Sweeper struct {
	db     Store
	dir    Dir // nil: the blobs live in the database (blob.Postgres)
	cfg    Config
	logger *slog.Logger
}

// New returns a sweeper of db's rows and, when dir is not nil, of the blob
// directory beside it. With the PostgreSQL blob backend dir is nil: its
// bytes go with the blobs rows.
func New(db Store, dir Dir, cfg Config) *Sweeper {
	if cfg.Grace == 0 {
		cfg.Grace = DefaultGrace
	}
	if cfg.Grace < 0 {
		cfg.Grace = 0
	}
	if cfg.Batch <= 0 {
		cfg.Batch = DefaultBatch
	}
	logger := cfg.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &Sweeper{db: db, dir: dir, cfg: cfg, logger: logger}
}

// Result is what one sweep did.
type Result struct {
	Purged store.Purged
	// Blobs and Bytes deleted.
	Blobs int
	Bytes int64
	// Kept counts candidates found written or referred to again when they
	// were to be deleted.
	Kept int
	// Restored counts blobs a killed sweep had left retired.
	Restored int
	// Staging counts partial uploads removed (Config.Staging).
	Staging int
}

// ErrHeld is returned (wrapped, with who holds) while a storage hold is in
// force; nothing was deleted by the transaction that found it.
var ErrHeld = store.ErrHeld

// Sweep runs one sweep at now: the rows past their retention, then the
// unreferenced blob rows (and their bytes), then (with a directory) the
// bytes that have no row at all.
func (s *Sweeper) Sweep(ctx context.Context) (Result, error) {
	var res Result
	if s.dir != nil {
		n, err := s.dir.RestoreRetired()
		res.Restored = n
		if err != nil {
			return res, err
		}
	}
	start := time.Now()
	purged, err := s.db.PurgeExpired(ctx, s.cfg.Retention, start)
	res.Purged = purged
	if err != nil {
		return res, err
	}
	cutoff := time.Now().Add(-s.cfg.Grace)
	if s.cfg.Grace == 0 {
		cutoff = time.Now().Add(time.Microsecond) // the store keeps microseconds
	}
	if s.cfg.Staging != nil {
		// A live upload touches its staging file as it writes, so the grace
		// that protects fresh blobs protects uploads in progress too.
		n, err := s.cfg.Staging.CleanStaging(max(s.cfg.Grace, time.Minute))
		res.Staging = n
		if err != nil {
			s.logger.Warn("storage sweep: partial uploads not cleaned", "err", err)
		}
	}
	if s.cfg.RowsOnly {
		s.logger.Info("storage sweep: rows past their retention deleted; blobs in object storage are not reclaimed",
			"versions", purged.Versions, "proposals", purged.Proposals, "trash", purged.Trash)
		return res, nil
	}
	if err := s.sweepRows(ctx, cutoff, &res); err != nil {
		return res, err
	}
	if s.dir != nil {
		if err := s.sweepDir(ctx, cutoff, &res); err != nil {
			return res, err
		}
	}
	s.logger.Info("storage sweep", "blobs", res.Blobs, "bytes", res.Bytes, "versions", purged.Versions,
		"proposals", purged.Proposals, "trash", purged.Trash, "kept", res.Kept, "took", time.Since(start).Round(time.Millisecond))
	return res, nil
}

// sweepRows deletes the unreferenced blob rows written before cutoff.
func (s *Sweeper) sweepRows(ctx context.Context, cutoff time.Time, res *Result) error {
	after := ""
	for {
		batch, err := s.db.UnreferencedBlobs(ctx, after, cutoff, s.cfg.Batch)
		if err != nil || len(batch) == 0 {
			return err
		}
		after = batch[len(batch)-1].SHA256
		var retired []*blob.Retired
		var deleted []store.StoredBlob
		err = s.db.ReclaimTx(ctx, func(r *store.Reclaim) error {
			retired, deleted = retired[:0], deleted[:0]
			// Bytes first (out of place, a Put racing this one wins), then
			// the rows, then the bytes whose rows stayed go back.
			held := map[string]*blob.Retired{}
			shas := make([]string, 0, len(batch))
			for _, b := range batch {
				if s.dir != nil {
					rt, err := s.dir.Retire(ctx, b.SHA256, cutoff)
					switch {
					case errors.Is(err, blob.ErrFresh):
						res.Kept++
						continue
					case errors.Is(err, blob.ErrNotFound):
						// The row outlived its bytes: it goes too.
					case err != nil:
						return errors.Join(err, restoreAll(held))
					default:
						held[b.SHA256] = rt
					}
				}
				shas = append(shas, b.SHA256)
			}
			gone, err := r.DeleteBlobs(ctx, shas, cutoff)
			if err != nil {
				return errors.Join(err, restoreAll(held))
			}
			for _, b := range batch {
				rt := held[b.SHA256]
				if !gone[b.SHA256] {
					if rt != nil {
						if err := rt.Restore(); err != nil {
							delete(held, b.SHA256)
							return errors.Join(err, restoreAll(held))
						}
						res.Kept++
					}
					continue
				}
				if rt != nil {
					retired = append(retired, rt)
				}
				deleted = append(deleted, b)
			}
			return nil
		})
		if err := s.finish(retired, err); err != nil {
			return err
		}
		for _, b := range deleted {
			res.Blobs++
			res.Bytes += b.Size
		}
		if len(batch) < s.cfg.Batch {
			return nil
		}
	}
}

// restoreAll puts retired bytes back.
func restoreAll(held map[string]*blob.Retired) error {
	var errs []error
	for _, rt := range held {
		errs = append(errs, rt.Restore())
	}
	return errors.Join(errs...)
}

// finish deletes the retired bytes of a committed transaction, or puts them
// back when it failed (err). Unlinks run a few at a time: on a busy disk
// each waits on the file system's journal, not on the CPU.
func (s *Sweeper) finish(retired []*blob.Retired, err error) error {
	if err != nil {
		for _, rt := range retired {
			err = errors.Join(err, rt.Restore())
		}
		return err
	}
	const workers = 8
	errs := make([]error, len(retired))
	var wg sync.WaitGroup
	next := make(chan int)
	for range min(workers, len(retired)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				errs[i] = retired[i].Delete()
			}
		}()
	}
	for i := range retired {
		next <- i
	}
	close(next)
	wg.Wait()
	return errors.Join(errs...)
}

// sweepDir deletes the blob files written before cutoff that have no row
// and that no row refers to, a page at a time as the walk finds them.
func (s *Sweeper) sweepDir(ctx context.Context, cutoff time.Time, res *Result) error {
	page := make([]string, 0, s.cfg.Batch)
	err := s.dir.Walk(ctx, func(b blob.Stored) error {
		if !b.Written.Before(cutoff) {
			return nil
		}
		page = append(page, b.SHA256)
		if len(page) < s.cfg.Batch {
			return nil
		}
		err := s.sweepOrphans(ctx, page, cutoff, res)
		page = page[:0]
		return err
	})
	if err != nil {
		return err
	}
	return s.sweepOrphans(ctx, page, cutoff, res)
}

// sweepOrphans deletes those of shas (files of the directory) that have no
// row and that no row refers to.
func (s *Sweeper) sweepOrphans(ctx context.Context, shas []string, cutoff time.Time, res *Result) error {
	orphans, err := s.db.Unrecorded(ctx, shas)
	if err != nil || len(orphans) == 0 {
		return err
	}
	var retired []*blob.Retired
	err = s.db.ReclaimTx(ctx, func(r *store.Reclaim) error {
		retired = retired[:0]
		for _, sha := range orphans {
			rt, err := s.dir.Retire(ctx, sha, cutoff)
			if errors.Is(err, blob.ErrFresh) || errors.Is(err, blob.ErrNotFound) {
				res.Kept++
				continue
			}
			if err != nil {
				return err
			}
			ok, err := r.Unrecorded(ctx, sha)
			if err != nil || !ok {
				if err = errors.Join(err, rt.Restore()); err != nil {
					return err
				}
				res.Kept++
				continue
			}
			retired = append(retired, rt)
		}
		return nil
	})
	if err := s.finish(retired, err); err != nil {
		return err
	}
	for _, rt := range retired {
		res.Blobs++
		res.Bytes += rt.Size
	}
	return nil
}

// Report measures what is stored and what the next sweep would reclaim.
func (s *Sweeper) Report(ctx context.Context) (store.StorageReport, error) {
	now := time.Now()
	return s.db.StorageReport(ctx, s.cfg.Retention, now, now.Add(-s.cfg.Grace))
}

// Args is the periodic sweep job.
type Args struct{}

// Kind implements jobs.Args.
func (Args) Kind() string { return "storage.sweep" }

// Register adds the sweep job to a registry.
func Register(reg *jobs.Registry, s *Sweeper) {
	jobs.Register(reg, func(ctx context.Context, job *jobs.Job[Args]) error {
		_, err := s.Sweep(ctx)
		if errors.Is(err, ErrHeld) {
			// A backup is copying: the next period sweeps.
			s.logger.Info("storage sweep skipped", "reason", err.Error())
			return nil
		}
		if err != nil {
			return fmt.Errorf("sweep: %w", err)
		}
		return nil
	})
}

// Periodic is the sweep's periodic job for jobs.Config.Periodic (every
// DefaultEvery unless every is positive).
func Periodic(every time.Duration) []jobs.Periodic {
	if every <= 0 {
		every = DefaultEvery
	}
	return []jobs.Periodic{{Every: every, Args: Args{}}}
}
