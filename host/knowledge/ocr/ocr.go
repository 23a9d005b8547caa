package ocr

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"

	"github.com/agenthost/agenthost/host/blob"
	"github.com/agenthost/agenthost/host/files/filemeta"
	"github.com/agenthost/agenthost/host/knowledge/chunk"
	"github.com/agenthost/agenthost/host/knowledge/extract"
	"github.com/agenthost/agenthost/host/knowledge/internal/keyed"
	"github.com/agenthost/agenthost/host/knowledge/kindex"
	"github.com/agenthost/agenthost/host/knowledge/ondemand"
	"github.com/agenthost/agenthost/host/llm"
	"github.com/agenthost/agenthost/host/llm/modeluse"
	"github.com/agenthost/agenthost/host/tenancy"
	"github.com/agenthost/agenthost/host/toolcall"
	"github.com/agenthost/agenthost/host/wasm"
	"github.com/agenthost/agenthost/pdk/content"
)

// ImageFileWarning is an image file's reason in its index.
const ImageFileWarning = "image only: a picture, whose words are found only once OCR has read it"

// NoModel says why image-only pages stay unread and how to change it.
var NoModel = "no OCR model is configured, so the text of image-only pages is not read: set " +
	"AGENTHOST_MODEL_OCR=model[@provider] (a vision-capable model of any OpenAI-compatible endpoint, e.g. gpt-4o-mini, " +
	"or qwen2.5vl on Ollama) or llm.models.ocr in the configuration file (see docs/knowledge.md#ocr), then upload the file again " +
	"or restart the server"

// IsImageFile reports an image file by MIME type or extension.
func IsImageFile(name, mimeType string) bool {
	m, _, _ := strings.Cut(mimeType, ";")
	if strings.HasPrefix(strings.ToLower(strings.TrimSpace(m)), "image/") {
		return true
	}
	switch strings.ToLower(extract.PathExt(name)) {
	case ".png", ".jpg", ".jpeg", ".jpe", ".gif", ".webp", ".bmp", ".tif", ".tiff":
		return true
	}
	return false
}

// MarkImageFile marks an image file's index image only (ingestion).
func MarkImageFile(f filemeta.Item, idx *content.Index) {
	if !IsImageFile(f.Name, f.MIMEType) {
		return
	}
	if idx.Structure == nil {
		idx.Structure = map[string]any{}
	}
	idx.Structure[kindex.StructTextStatus] = kindex.TextImageOnly
	idx.Structure["warning"] = ImageFileWarning
}

// Reader reads a page of a PDF, or an image file, by OCR.
type Reader interface {
	OCRPage(ctx context.Context, name, mimeType string, in wasm.Input, page int) (extract.OCRText, error)
	OCRImage(ctx context.Context, name, mimeType string, in wasm.Input, page int) (extract.OCRText, error)
}

// Store is what OCR needs of the database.
type Store interface {
	ContentStateOf(ctx context.Context, tenantID, sha string) (kindex.ContentState, error)
	AddOCRPages(ctx context.Context, tenantID, sha string, pages []int, summaries []content.Summary, chunks []kindex.Chunk) error
	SetContentOCR(ctx context.Context, tenantID, sha string, state kindex.OCRState) error
	AddVectors(ctx context.Context, tenantID, sha, model string, chunks []kindex.Chunk, vecs [][]float32) error
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

// ModelConfig tells whether an operation has a model (llm.Client).
type ModelConfig interface {
	Configured(op modeluse.Operation) bool
}

// Runner reads image-only pages in the background (see the package doc).
type Runner struct {
	store  Store
	blobs  Blobs
	reader Reader
	models ModelConfig // nil: no OCR model
	embed  Embedder    // nil: OCR text found by words only
	logger *slog.Logger
	locks  keyed.Mutex
}

// New returns the OCR runner; models nil means no OCR model.
func New(store Store, blobs Blobs, reader Reader, models ModelConfig) *Runner {
	return &Runner{store: store, blobs: blobs, reader: reader, models: models, logger: slog.New(slog.DiscardHandler)}
}

// WithEmbedder embeds the chunks OCR stores; logger hears of failures.
func (o *Runner) WithEmbedder(e Embedder, logger *slog.Logger) *Runner {
	o.embed = e
	if logger != nil {
		o.logger = logger
	}
	return o
}

// Capability error codes that end a run without a retry: a budget or
// spending limit reached.
var ocrStops = map[string]string{"budget_exceeded": kindex.OCRStopped, wasm.CodeSpendingLimit: kindex.OCRStopped}

// Run reads the image-only pages of f's content that OCR has not read,
// one at a time, each stored as soon as it is read; progress is told how
// many of how many after each. It returns how many pages it read. A
// content not indexed yet is ErrNotReady; one without image-only pages
// has nothing to do. Without an OCR model the content's OCR state says so
// and how to configure one; a limit reached stops the run with the reason
// (the pages read stay). Other failures are returned, for the job to try
// again: it goes on from the first page not read.
func (o *Runner) Run(ctx context.Context, f filemeta.Item, progress func(done, total int)) (int, error) {
	unlock := o.locks.Lock(f.TenantID + ":" + f.SHA256)
	defer unlock()
	st, err := o.store.ContentStateOf(ctx, f.TenantID, f.SHA256)
	if errors.Is(err, tenancy.ErrNotFound) {
		return 0, fmt.Errorf("%w: %s is not indexed yet", ondemand.ErrNotReady, f.Name)
	}
	if err != nil {
		return 0, err
	}
	switch st.Status {
	case kindex.StatusFailed:
		return 0, nil
	case kindex.StatusIndexed, kindex.StatusEmbedding:
	default:
		return 0, fmt.Errorf("%w: %s is being indexed (%s)", ondemand.ErrNotReady, f.Name, st.Status)
	}
	need := kindex.ImageOnlyPages(st.Index)
	if len(need) == 0 {
		return 0, nil
	}
	done := kindex.OCRPages(st.Index)
	var todo []int
	for _, pg := range need {
		if _, ok := slices.BinarySearch(done, pg); !ok {
			todo = append(todo, pg)
		}
	}
	state := kindex.OCRState{Status: kindex.OCRRunning, Pages: len(need), Done: len(need) - len(todo)}
	if prev := kindex.OCRStateOf(st.Index); prev != nil {
		state.Skipped, state.CostCHF, state.Model = prev.Skipped, prev.CostCHF, prev.Model
	}
	set := func(s kindex.OCRState) error {
		return o.store.SetContentOCR(context.WithoutCancel(ctx), f.TenantID, f.SHA256, s)
	}
	if len(todo) == 0 {
		if prev := kindex.OCRStateOf(st.Index); prev == nil || prev.Status != kindex.OCRDone {
			state.Status = kindex.OCRDone
			return 0, set(state)
		}
		return 0, nil
	}
	if o.models == nil || !o.models.Configured(modeluse.OpOCR) {
		state.Status, state.Message = kindex.OCRNotConfigured, NoModel
		return 0, set(state)
	}
	// The model capability acts for a caller: the file's uploader in its
	// workspace, who is billed as for the file's embeddings.
	ctx = wasm.WithTenant(ctx, f.TenantID)
	ctx = toolcall.With(ctx, toolcall.Caller{Principal: tenancy.Principal{TenantID: f.TenantID, UserID: f.CreatedBy}, WorkspaceID: f.WorkspaceID})
	ctx = llm.WithAttribution(ctx, llm.Attribution{TenantID: f.TenantID, WorkspaceID: f.WorkspaceID, UserID: f.CreatedBy, Purpose: "ocr"})
	blob, err := o.blobs.Open(ctx, f.SHA256)
	if err != nil {
		return 0, fmt.Errorf("knowledge: content of %s: %w", f.Name, err)
	}
	defer blob.Close()
	image := IsImageFile(f.Name, f.MIMEType) && !extract.IsPDF(f)
	sections := ondemand.Sections(st.Index)
	read := 0
	if err := set(state); err != nil {
		return 0, err
	}
	for _, pg := range todo {
		if err := ctx.Err(); err != nil {
			return read, err
		}
		var t extract.OCRText
		if image {
			t, err = o.reader.OCRImage(ctx, f.Name, f.MIMEType, blob, pg)
		} else {
			t, err = o.reader.OCRPage(ctx, f.Name, f.MIMEType, blob, pg)
		}
		var werr *wasm.Error
		if err != nil && errors.As(err, &werr) {
			if werr.Code == "no_model" {
				// The OCR chain is configured (checked above): the
				// plugin host's model capability is not connected to it
				// yet (serve connects it after the queue starts). The
				// job tries again.
				return read, fmt.Errorf("knowledge: OCR of %s page %d: the model capability is not connected yet: %w", f.Name, pg, err)
			}
			if s, ok := ocrStops[werr.Code]; ok {
				state.Status, state.Message = s, werr.Message
				return read, set(state)
			}
			if werr.Code == "no_images" {
				// Nothing OCR can read (JPX, JBIG2, damaged images): the
				// page counts as done, and the state says how many.
				state.Skipped++
				err = o.store.AddOCRPages(ctx, f.TenantID, f.SHA256, []int{pg}, nil, nil)
				if err == nil {
					state.Done++
					err = set(state)
				}
				if err != nil {
					return read, err
				}
				continue
			}
		}
		if err != nil {
			state.Message = err.Error()
			_ = set(state)
			return read, fmt.Errorf("knowledge: OCR of %s page %d: %w", f.Name, pg, err)
		}
		obj := ocrObject(pg, image && len(need) == 1, sections, t)
		var sums []content.Summary
		var chunks []kindex.Chunk
		if strings.TrimSpace(obj.Data) != "" {
			sums = []content.Summary{content.Summarize(obj)}
			chunks = chunk.Split([]content.Object{obj}, chunk.Tokens)
		}
		if err := o.store.AddOCRPages(ctx, f.TenantID, f.SHA256, []int{pg}, sums, chunks); err != nil {
			return read, fmt.Errorf("knowledge: storing OCR of %s page %d: %w", f.Name, pg, err)
		}
		o.embedChunks(ctx, f, chunks)
		read++
		state.Done++
		state.CostCHF += t.CostCHF
		if t.Model != "" {
			state.Model = t.Model
		}
		state.Message = ""
		if err := set(state); err != nil {
			return read, err
		}
		if progress != nil {
			progress(state.Done, state.Pages)
		}
	}
	state.Status = kindex.OCRDone
	return read, set(state)
}

// ocrObject is the text OCR read of page pg (of an image file: the
// picture), referenced to its page and section and marked as OCR's.
func ocrObject(pg int, image bool, sections []ondemand.Section, t extract.OCRText) content.Object {
	o := content.Object{ID: fmt.Sprintf("ocr-%d", pg), ContentType: content.Text, Data: strings.TrimSpace(t.Text), Sequence: pg,
		Metadata: map[string]any{"textSource": kindex.TextOCR, "model": t.Model, "sent": t.Sent}}
	if image {
		o.ID = "ocr"
		o.Ref = content.Ref{Label: "ocr", Location: "ocr"}
		return o
	}
	o.Ref = content.Ref{PageIndex: pg, Label: "ocr", Location: fmt.Sprintf("page:%d/ocr", pg)}
	best := -1
	for i, s := range sections {
		if s.StartPage <= pg && pg <= s.EndPage && (best < 0 || s.Level >= sections[best].Level) {
			best = i
		}
	}
	if best >= 0 {
		o.Ref.SectionID = sections[best].ID
	}
	return o
}

func (o *Runner) embedChunks(ctx context.Context, f filemeta.Item, chunks []kindex.Chunk) {
	if o.embed == nil || len(chunks) == 0 {
		return
	}
	m, ok := o.embed.Model(modeluse.OpEmbedding)
	if !ok {
		return
	}
	ctx = llm.WithAttribution(ctx, llm.Attribution{TenantID: f.TenantID, WorkspaceID: f.WorkspaceID, UserID: f.CreatedBy, Purpose: "embedding"})
	texts := make([]string, len(chunks))
	for i, ch := range chunks {
		texts[i] = ch.Text
	}
	vecs, _, err := o.embed.Embed(ctx, texts)
	if err == nil {
		err = o.store.AddVectors(ctx, f.TenantID, f.SHA256, m.Name, chunks, vecs)
	}
	if err != nil {
		o.logger.Warn("knowledge: embedding OCR text failed; it is found by its words", "file", f.ID, "err", err)
	}
}
