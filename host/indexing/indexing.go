// Package indexing runs the knowledge store's ingestion on the job queue:
// every new file becomes one "knowledge.ingest" job, worked by `agenthost
// serve` or any `agenthost worker`, retried on failure and surviving
// restarts. It is its own package because the queue sits on the store,
// which the knowledge package must not depend on.
package indexing

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/agenthost/agenthost/host/files/filemeta"
	"github.com/agenthost/agenthost/host/jobs"
	"github.com/agenthost/agenthost/host/knowledge/extract"
	"github.com/agenthost/agenthost/host/knowledge/ingest"
	"github.com/agenthost/agenthost/host/knowledge/ocr"
	"github.com/agenthost/agenthost/host/knowledge/ondemand"
)

// IngestArgs is the job that indexes one uploaded file.
type IngestArgs struct {
	FileID string `json:"fileId"`
	// SHA256 is the content to index: a new version of the file is a new
	// job, not a duplicate of the one that indexed the old content (the
	// job reads the file's current content either way).
	SHA256 string `json:"sha256,omitempty"`
	// Again marks a re-index a person asked for (JobIndexer.Reindex): a
	// new job even when one indexed the same content before, which takes
	// a failed content again.
	Again int64 `json:"again,omitempty"`
}

// Kind implements jobs.Args.
func (IngestArgs) Kind() string { return "knowledge.ingest" }

// BackfillArgs is the job that embeds the chunks indexed without vectors
// (ingest.Pipeline.Backfill): enqueued every BackfillEvery (Periodic)
// and after every upload, one at a time.
type BackfillArgs struct{}

// Kind implements jobs.Args.
func (BackfillArgs) Kind() string { return "knowledge.embed_backfill" }

// BackfillEvery is how often the backfill looks for contents without
// vectors: a file indexed while the embedding service was down gets its
// vectors within this long of the service answering again.
const BackfillEvery = time.Minute

// Periodic lists this package's periodic jobs, for jobs.Config.Periodic.
func Periodic() []jobs.Periodic {
	return []jobs.Periodic{{Every: BackfillEvery, Args: BackfillArgs{}, RunOnStart: true}}
}

// RegisterJobs adds the ingestion and backfill job kinds to a registry.
// store is what the backfill reads and writes (the store.DB).
func RegisterJobs(reg *jobs.Registry, in *ingest.Pipeline, store ingest.BackfillStore) {
	jobs.Register(reg, func(ctx context.Context, job *jobs.Job[BackfillArgs]) error {
		// Contents are taken in batches until none is missing. A failing
		// embedding service ends the job without an error: the next
		// periodic run tries again, rather than retries piling up.
		for {
			n, err := in.Backfill(ctx, store)
			if err != nil {
				if ctx.Err() != nil {
					return err
				}
				_ = jobs.Progress(ctx, 0, "embedding service unavailable: "+err.Error())
				return nil
			}
			if n < ingest.BackfillBatch {
				return nil
			}
		}
	})
	jobs.Register(reg, func(ctx context.Context, job *jobs.Job[IngestArgs]) error {
		if job.Rescued {
			// The process indexing this file died; say so on the file's
			// state until this attempt ends it, so that "pending" has a
			// reason.
			note := fmt.Sprintf("%s (attempt %d of %d; the process indexing it stopped)", ingest.NoteRetryingAfterRestart, job.Attempt, job.MaxAttempts)
			if err := in.Note(ctx, job.Args.FileID, note); err != nil {
				if errors.Is(err, ingest.ErrPermanent) {
					return jobs.Permanent(err)
				}
				return err
			}
		}
		_, err := in.Ingest(ctx, job.Args.FileID, job.Attempt > 1 || job.Args.Again != 0)
		if errors.Is(err, ingest.ErrPermanent) {
			return jobs.Permanent(err)
		}
		return err
	})
}

// Enqueuer is what JobIndexer needs of the job queue.
type Enqueuer interface {
	Enqueue(ctx context.Context, args jobs.Args, opts *jobs.EnqueueOpts) (jobs.Enqueued, error)
}

// JobIndexer is the files.Indexer that queues an ingestion job per new file
// (one per file and content even if told twice: a new version is indexed anew).
type JobIndexer struct{ q Enqueuer }

// NewJobIndexer returns an indexer over a queue.
func NewJobIndexer(q Enqueuer) *JobIndexer { return &JobIndexer{q: q} }

// Index implements files.Indexer. It also asks for a backfill of missing
// vectors (at most one waits at a time), so that an upload, a re-upload of
// bytes indexed while the embedding service was down among them, repairs
// what is missing as soon as the service answers; it runs a few seconds
// later, after the ingestion it follows.
func (j *JobIndexer) Index(ctx context.Context, f filemeta.Item) error {
	if _, err := j.q.Enqueue(ctx, IngestArgs{FileID: f.ID, SHA256: f.SHA256}, &jobs.EnqueueOpts{Unique: &jobs.Unique{ByArgs: true}}); err != nil {
		return err
	}
	if f.MIMEType == extract.PDF {
		// A large PDF is indexed by its pre-scan first; the rest of its
		// pages follow at the lowest priority (a small one has nothing
		// left to do once indexed).
		if _, err := j.q.Enqueue(ctx, CompleteArgs{FileID: f.ID}, &jobs.EnqueueOpts{Priority: 4, ScheduledAt: time.Now().Add(completeWait),
			Unique: &jobs.Unique{ByArgs: true}}); err != nil {
			return err
		}
	}
	if wantsOCR(f) {
		// Image-only pages are read after the file is indexed, in the
		// background (a document without any is done at once).
		if _, err := j.q.Enqueue(ctx, OCRArgs{FileID: f.ID, SHA256: f.SHA256}, &jobs.EnqueueOpts{Priority: 3, ScheduledAt: time.Now().Add(completeWait),
			Unique: &jobs.Unique{ByArgs: true}}); err != nil {
			return err
		}
	}
	_, err := j.q.Enqueue(ctx, BackfillArgs{}, &jobs.EnqueueOpts{Priority: 4, ScheduledAt: time.Now().Add(backfillDelay),
		Unique: &jobs.Unique{ByPeriod: backfillDelay}})
	return err
}

// Reindex queues the ingestion of a file whose content failed to index
// (after the cause is mended: an extractor installed, a service back),
// as a new job: the earlier one counts as done. A content indexed or being
// indexed is not taken again (knowledge's claim: only pending or failed).
func (j *JobIndexer) Reindex(ctx context.Context, f filemeta.Item) error {
	_, err := j.q.Enqueue(ctx, IngestArgs{FileID: f.ID, SHA256: f.SHA256, Again: time.Now().UnixNano()}, nil)
	return err
}

// backfillDelay is how long after an upload its backfill runs: after the
// upload's own ingestion (usually), and one per such period at most.
const backfillDelay = 5 * time.Second

// CompleteArgs is the low-priority job that extracts, in the background,
// the pages of a large PDF indexed on demand that nobody has read yet, so
// that the whole document becomes searchable (ondemand.Reader.ExtractRest).
// It is queued with the file's ingestion and waits for it.
type CompleteArgs struct {
	FileID string `json:"fileId"`
}

// Kind implements jobs.Args.
func (CompleteArgs) Kind() string { return "knowledge.complete_pdf" }

// completeWait is how long a completion waits for its file's ingestion
// before looking again (a wait, not a failed attempt).
const completeWait = 2 * time.Second

// FileLookup reads a file for background work (the store).
type FileLookup interface {
	FileForIndexing(ctx context.Context, fileID string) (filemeta.Item, error)
}

// NoteSetter records how far a content's completion is (the store).
type NoteSetter interface {
	SetCompletionNote(ctx context.Context, tenantID, sha256, note string) error
}

// RegisterCompletion adds the completion job, worked through r. The
// file's index says how far it is ("extracting the remaining pages in the
// background: 40 of 500") until it is complete.
func RegisterCompletion(reg *jobs.Registry, r *ondemand.Reader, lookup FileLookup, notes NoteSetter) {
	jobs.Register(reg, func(ctx context.Context, job *jobs.Job[CompleteArgs]) error {
		f, err := lookup.FileForIndexing(ctx, job.Args.FileID)
		if err != nil {
			return jobs.Permanent(err) // the file was deleted
		}
		_, err = r.ExtractRest(ctx, f, func(done, total int) {
			note := ""
			if done < total {
				note = fmt.Sprintf("extracting the remaining pages in the background: %d of %d", done, total)
			}
			if err := notes.SetCompletionNote(context.WithoutCancel(ctx), f.TenantID, f.SHA256, note); err != nil {
				_ = jobs.Progress(ctx, float64(done)/float64(max(total, 1)), err.Error())
				return
			}
			_ = jobs.Progress(ctx, float64(done)/float64(max(total, 1)), note)
		})
		if errors.Is(err, ondemand.ErrNotReady) {
			return jobs.Snooze(completeWait)
		}
		return err
	})
}

// OCRArgs is the low-priority job that reads a document's image-only pages
// by OCR in the background, page by page (ocr.Runner.Run): queued with
// the ingestion of every PDF and image file, it waits for it, and finds
// nothing to do in a document without such pages. A run stopped by a
// restart is picked up again and goes on from the first page not read.
type OCRArgs struct {
	FileID string `json:"fileId"`
	// SHA256 makes a new version of the file a new job.
	SHA256 string `json:"sha256,omitempty"`
}

// Kind implements jobs.Args.
func (OCRArgs) Kind() string { return "knowledge.ocr" }

// RegisterOCR adds the OCR job, worked through o.
func RegisterOCR(reg *jobs.Registry, o *ocr.Runner, lookup FileLookup) {
	jobs.Register(reg, func(ctx context.Context, job *jobs.Job[OCRArgs]) error {
		f, err := lookup.FileForIndexing(ctx, job.Args.FileID)
		if err != nil {
			return jobs.Permanent(err) // the file was deleted
		}
		_, err = o.Run(ctx, f, func(done, total int) {
			_ = jobs.Progress(ctx, float64(done)/float64(max(total, 1)), fmt.Sprintf("OCR: %d of %d image-only pages read", done, total))
		})
		if errors.Is(err, ondemand.ErrNotReady) {
			return jobs.Snooze(completeWait)
		}
		return err
	})
}

// wantsOCR: files that may hold image-only pages (PDFs) or are pictures.
func wantsOCR(f filemeta.Item) bool {
	return f.MIMEType == extract.PDF || strings.HasSuffix(strings.ToLower(f.Name), ".pdf") || ocr.IsImageFile(f.Name, f.MIMEType)
}
