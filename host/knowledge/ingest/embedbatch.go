package ingest

import (
	"context"
	"fmt"

	"github.com/agenthost/agenthost/host/files/filemeta"
	"github.com/agenthost/agenthost/host/knowledge/chunk"
	"github.com/agenthost/agenthost/host/knowledge/kindex"
	"github.com/agenthost/agenthost/host/llm"
	"github.com/agenthost/agenthost/host/llm/modeluse"
)

// Bounds of an embedBatch before it flushes: what one Embed call is given.
// The model layer cuts it into requests within the provider's limits
// (llm.EmbeddingConfig: inputs and tokens per request) and retries each,
// honouring Retry-After on 429; these bounds only keep the memory of texts
// waiting small (about 1024 chunks of chunk.Tokens).
const (
	embedFlushTexts  = 1024
	embedFlushTokens = 1024 * chunk.Tokens
)

// embedBatch gathers the chunks of many contents (a container's entries)
// and embeds them together. Archives of thousands of small files made one
// embedding request per entry (10,115 for one upload); gathered, they make
// one per provider batch. Each content waits in status "embedding" and is
// marked indexed when its vectors are saved, or indexed with "vectors
// missing" (for the backfill to complete) when the embedding fails.
type embedBatch struct {
	in    *Pipeline
	owner filemeta.Item // the container: whose tenant, workspace and uploader pay
	model string
	items []batchItem
	texts []string
	tok   int
}

type batchItem struct {
	f      filemeta.Item
	label  string
	chunks []kindex.Chunk
}

// newEmbedBatch returns a batch billed to owner, or nil when there is no
// embedding model (saveContent then embeds nothing).
func (in *Pipeline) newEmbedBatch(owner filemeta.Item) *embedBatch {
	if in.embed == nil {
		return nil
	}
	m, ok := in.embed.Model(modeluse.OpEmbedding)
	if !ok {
		return nil
	}
	return &embedBatch{in: in, owner: owner, model: m.Name}
}

// add queues a saved content's chunks, flushing when the batch is full.
func (b *embedBatch) add(ctx context.Context, f filemeta.Item, label string, chunks []kindex.Chunk) error {
	b.items = append(b.items, batchItem{f: f, label: label, chunks: chunks})
	for _, c := range chunks {
		b.texts = append(b.texts, c.Text)
		b.tok += c.Tokens
	}
	if len(b.texts) >= embedFlushTexts || b.tok >= embedFlushTokens {
		return b.flush(ctx)
	}
	return nil
}

// flush embeds what waits and saves each content's vectors. An embedding
// failure is recorded on every content of the batch (found by words until
// the backfill embeds them) and not returned: the container's indexing goes
// on. A failure to write is returned.
func (b *embedBatch) flush(ctx context.Context) error {
	if b == nil || len(b.items) == 0 {
		return nil
	}
	items, texts := b.items, b.texts
	b.items, b.texts, b.tok = nil, nil, 0
	actx := llm.WithAttribution(ctx, llm.Attribution{TenantID: b.owner.TenantID, WorkspaceID: b.owner.WorkspaceID,
		UserID: b.owner.CreatedBy, Purpose: "embedding"})
	vecs, _, err := b.in.embed.Embed(actx, texts)
	if err == nil && len(vecs) != len(texts) {
		err = fmt.Errorf("%d vectors for %d texts", len(vecs), len(texts))
	}
	if err != nil {
		b.in.logger.Warn("knowledge: embedding failed", "file", b.owner.ID, "contents", len(items), "err", err)
	}
	off := 0
	for _, it := range items {
		reason := ""
		if err != nil {
			reason = vectorsMissing + err.Error()
		} else if serr := b.in.store.SaveVectors(ctx, it.f.TenantID, it.f.SHA256, b.model, it.chunks, vecs[off:off+len(it.chunks)]); serr != nil {
			reason = vectorsMissing + serr.Error()
			b.in.logger.Warn("knowledge: saving vectors failed", "file", b.owner.ID, "content", it.label, "err", serr)
		}
		off += len(it.chunks)
		if serr := b.in.store.SetContentStatus(ctx, it.f.TenantID, it.f.SHA256, kindex.StatusIndexed, reason); serr != nil {
			return fmt.Errorf("knowledge: %s: %w", it.label, serr)
		}
	}
	return nil
}
