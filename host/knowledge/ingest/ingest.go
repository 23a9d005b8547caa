package ingest

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/agenthost/agenthost/host/blob"
	"github.com/agenthost/agenthost/host/files/filemeta"
	"github.com/agenthost/agenthost/host/knowledge/chunk"
	"github.com/agenthost/agenthost/host/knowledge/extract"
	"github.com/agenthost/agenthost/host/knowledge/kindex"
	"github.com/agenthost/agenthost/host/knowledge/ocr"
	"github.com/agenthost/agenthost/host/knowledge/unlock"
	"github.com/agenthost/agenthost/host/llm"
	"github.com/agenthost/agenthost/host/llm/modeluse"
	"github.com/agenthost/agenthost/host/wasm"
	"github.com/agenthost/agenthost/pdk/content"
)

// Store is what ingestion needs of the database.
type Store interface {
	// FileForIndexing reads a file for background work done on its
	// uploader's behalf (administrative: no principal).
	FileForIndexing(ctx context.Context, fileID string) (filemeta.Item, error)
	ClaimContent(ctx context.Context, tenantID, sha string, reclaim bool) (bool, error)
	SetContentStatus(ctx context.Context, tenantID, sha string, status kindex.Status, reason string) error
	// SetContentNote records what is happening to a content on its way
	// (ContentState.Note).
	SetContentNote(ctx context.Context, tenantID, sha, note string) error
	SaveContent(ctx context.Context, tenantID, sha string, idx content.Index, chunks []kindex.Chunk, status kindex.Status) error
	SaveVectors(ctx context.Context, tenantID, sha, model string, chunks []kindex.Chunk, vecs [][]float32) error
	// SetContentExtractor records which extractor a content was given (or
	// that none was, and why); the content's index record shows it.
	SetContentExtractor(ctx context.Context, tenantID, sha string, rec kindex.ExtractorRecord) error
}

// Blobs opens stored content.
type Blobs interface {
	Open(ctx context.Context, sha string) (blob.Reader, error)
}

// Embedder turns texts into vectors (the model layer's embedding
// operation); search.Embedder and the others' are the same interface.
type Embedder interface {
	Embed(ctx context.Context, texts []string) ([][]float32, modeluse.Usage, error)
	Model(op modeluse.Operation) (llm.ModelInfo, bool)
}

// Extractor turns a document into content objects.
type Extractor interface {
	Extract(ctx context.Context, name, mimeType string, in wasm.Input) (content.Index, []content.Object, error)
}

// Pipeline indexes uploaded files: extract with the
// document's extractor plugin, cut into chunks, write the lexical index
// (vectors join when an embedding model is configured), with the status
// moving pending → extracted → indexed, or failed with the reason. The same
// bytes in a tenant are extracted once.
type Pipeline struct {
	store     Store
	blobs     Blobs
	extractor Extractor
	embed     Embedder // nil: no vectors
	smart     SmartPDF // zero: every PDF extracted whole
	// containers resolves ZIP/TAR/GZ files (containers.go); nil: none.
	containers *containerParts
	logger     *slog.Logger
	phases     PhaseObserver // nil: not timed
}

// Ingestion phases a PhaseObserver is told of.
const (
	PhaseExtract = "extract" // the extractor plugin (a PDF's pre-scan included)
	PhaseChunk   = "chunk"   // cutting objects into chunks, counting tokens
	PhaseStore   = "store"   // index, chunks and lexical index written
	PhaseEmbed   = "embed"   // vectors computed and written
)

// PhaseObserver is told how long each phase of indexing one content took
// (a container's entries count one by one): what the ingest.phase figures
// and the ingest metrics show.
type PhaseObserver func(phase string, d time.Duration)

// WithPhaseObserver makes the ingester time its phases for o.
func (in *Pipeline) WithPhaseObserver(o PhaseObserver) *Pipeline {
	in.phases = o
	return in
}

// timed runs fn and tells the phase observer how long it took.
func (in *Pipeline) timed(phase string, fn func() error) error {
	if in.phases == nil {
		return fn()
	}
	start := time.Now()
	err := fn()
	in.phases(phase, time.Since(start))
	return err
}

// WithEmbedder makes the ingester embed every chunk (in the model layer's
// batches) after the lexical index is written; nil leaves vectors out.
func (in *Pipeline) WithEmbedder(e Embedder) *Pipeline {
	in.embed = e
	return in
}

// New returns an ingester; logger nil discards logs.
func New(store Store, blobs Blobs, extractor Extractor, logger *slog.Logger) *Pipeline {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &Pipeline{store: store, blobs: blobs, extractor: extractor, logger: logger}
}

// embedChunks embeds and stores a content's chunk vectors, billed to the
// file's tenant, workspace and uploader.
func (in *Pipeline) embedChunks(ctx context.Context, f filemeta.Item, model string, chunks []kindex.Chunk) error {
	ctx = llm.WithAttribution(ctx, llm.Attribution{TenantID: f.TenantID, WorkspaceID: f.WorkspaceID, UserID: f.CreatedBy, Purpose: "embedding"})
	texts := make([]string, len(chunks))
	for i, c := range chunks {
		texts[i] = c.Text
	}
	vecs, _, err := in.embed.Embed(ctx, texts)
	if err != nil {
		return err
	}
	return in.store.SaveVectors(ctx, f.TenantID, f.SHA256, model, chunks, vecs)
}

// Note records what is happening to a file's content before or while it is
// indexed (ContentState.Note, e.g. NoteRetryingAfterRestart); indexing
// clears it when the content is indexed or fails.
func (in *Pipeline) Note(ctx context.Context, fileID, note string) error {
	f, err := in.store.FileForIndexing(ctx, fileID)
	if err != nil {
		return fmt.Errorf("knowledge: %w: %w", ErrPermanent, err)
	}
	if err := in.store.SetContentNote(ctx, f.TenantID, f.SHA256, note); err != nil {
		return fmt.Errorf("knowledge: noting %s: %w", f.Name, err)
	}
	return nil
}

// ErrPermanent marks failures that another attempt cannot mend (no
// extractor for the type, a malformed document).
var ErrPermanent = errors.New("permanent")

// Ingest indexes a file's content unless it is indexed (or being indexed)
// already, and reports whether it extracted anything. retry says an earlier
// attempt failed, so a content left pending or failed is taken again.
func (in *Pipeline) Ingest(ctx context.Context, fileID string, retry bool) (extracted bool, err error) {
	f, err := in.store.FileForIndexing(ctx, fileID)
	if err != nil {
		return false, fmt.Errorf("knowledge: %w: %w", ErrPermanent, err)
	}
	claimed, err := in.store.ClaimContent(ctx, f.TenantID, f.SHA256, retry)
	if err != nil || !claimed {
		return false, err
	}
	return in.ingestClaimed(ctx, f, retry)
}

// ingestClaimed extracts and indexes f's content, claimed by the caller.
func (in *Pipeline) ingestClaimed(ctx context.Context, f filemeta.Item, retry bool) (extracted bool, err error) {
	// The extractor's run is billed to the file's tenant, workspace and
	// uploader, as its embeddings are.
	ctx = llm.WithAttribution(ctx, llm.Attribution{TenantID: f.TenantID, WorkspaceID: f.WorkspaceID, UserID: f.CreatedBy, Purpose: "extraction"})
	fail := func(err error) (bool, error) { return true, in.failed(ctx, f, f.Name, err) }
	r, err := in.blobs.Open(ctx, f.SHA256)
	if err != nil {
		return fail(fmt.Errorf("knowledge: content of %s: %w", f.Name, err))
	}
	defer r.Close()
	if in.isContainer(f) {
		return true, in.ingestContainer(ctx, f, r, retry)
	}
	var idx content.Index
	var objects []content.Object
	err = in.timed(PhaseExtract, func() (err error) {
		idx, objects, err = in.extract(ctx, f, r)
		return err
	})
	if err != nil {
		if why := encryptedReason(f.Name, err); why != "" {
			// Not a failure another attempt mends, nor one to show as
			// such: the document waits for its password (ShownStatus).
			in.logger.Info("document encrypted", "file", f.ID, "name", f.Name, "passwordGiven", unlock.PasswordOf(ctx) != "")
			return fail(encryptedError(why))
		}
		if errors.Is(err, extract.ErrNoExtractor) || errors.As(err, new(*wasm.Error)) {
			err = fmt.Errorf("%w: %w", ErrPermanent, err)
		}
		return fail(fmt.Errorf("knowledge: extracting %s: %w", f.Name, err))
	}
	if err := in.store.SetContentStatus(ctx, f.TenantID, f.SHA256, kindex.StatusExtracted, ""); err != nil {
		return true, err
	}
	idx.FileName, idx.MIMEType, idx.TotalSize = f.Name, f.MIMEType, f.Size
	ocr.MarkImageFile(f, &idx)
	chunks, err := in.saveContent(ctx, f, f.Name, idx, objects, nil)
	if err != nil {
		return true, err
	}
	in.logger.Info("indexed", "file", f.ID, "name", f.Name, "objects", len(objects), "chunks", chunks)
	if in.containers != nil && hasAttachments(idx) {
		in.ingestAttachments(ctx, f, retry)
	}
	return true, nil
}

// failed records err as the failure of f's content (f.SHA256 in f's
// tenant) and returns it; a failure to record it is logged, not returned,
// so the caller sees the cause. label names the content (a file's name, a
// container entry's path).
func (in *Pipeline) failed(ctx context.Context, f filemeta.Item, label string, err error) error {
	if serr := in.store.SetContentStatus(context.WithoutCancel(ctx), f.TenantID, f.SHA256, kindex.StatusFailed, err.Error()); serr != nil {
		in.logger.Error("knowledge: recording a failure", "file", f.ID, "content", label, "err", serr)
	}
	return err
}

// saveContent cuts an extracted content's objects into chunks and saves its
// index and chunks under f.SHA256 in f's tenant, lexically indexed at once;
// with an embedding model the chunks are embedded next (the content is
// "embedding" meanwhile), billed to f's tenant, workspace and uploader. It
// serves an uploaded file and a container's inner file alike; label names
// the content in errors and logs (the file's name, the entry's path). A
// failure to save is recorded on the content. It returns how many chunks it
// saved. With a batch (a container's entries), the chunks join it instead,
// to be embedded with other contents' in few requests when it flushes.
func (in *Pipeline) saveContent(ctx context.Context, f filemeta.Item, label string, idx content.Index, objects []content.Object, batch *embedBatch) (int, error) {
	var chunks []kindex.Chunk
	_ = in.timed(PhaseChunk, func() error { chunks = chunk.Split(objects, chunk.Tokens); return nil })
	model, embed := "", in.embed != nil
	if embed {
		m, ok := in.embed.Model(modeluse.OpEmbedding)
		model, embed = m.Name, ok && len(chunks) > 0
	}
	status := kindex.StatusIndexed
	if embed {
		status = kindex.StatusEmbedding
	}
	if err := in.timed(PhaseStore, func() error { return in.store.SaveContent(ctx, f.TenantID, f.SHA256, idx, chunks, status) }); err != nil {
		return 0, in.failed(ctx, f, label, fmt.Errorf("knowledge: saving %s: %w", label, err))
	}
	if !embed {
		return len(chunks), nil
	}
	if batch != nil {
		return len(chunks), batch.add(ctx, f, label, chunks)
	}
	// The lexical index already serves; vectors that fail leave the
	// content found by its words, with the reason recorded.
	reason := ""
	if err := in.timed(PhaseEmbed, func() error { return in.embedChunks(ctx, f, model, chunks) }); err != nil {
		reason = vectorsMissing + err.Error()
		in.logger.Warn("knowledge: embedding failed", "file", f.ID, "content", label, "err", err)
	}
	return len(chunks), in.store.SetContentStatus(ctx, f.TenantID, f.SHA256, kindex.StatusIndexed, reason)
}

// recordExtractor records on f's content which extractor x chooses for it
// (and why, or why none), when x tells (a Chooser), before it runs: a
// content whose extraction fails names the extractor that failed, and one
// that no extractor gets says why.
func (in *Pipeline) recordExtractor(ctx context.Context, f filemeta.Item, x any) error {
	c, ok := x.(extract.Chooser)
	if !ok {
		return nil
	}
	ch := c.Choose(f.Name, f.MIMEType)
	if err := in.store.SetContentExtractor(ctx, f.TenantID, f.SHA256, ch.Record()); err != nil {
		return fmt.Errorf("knowledge: recording the extractor of %s: %w", f.Name, err)
	}
	return nil
}
