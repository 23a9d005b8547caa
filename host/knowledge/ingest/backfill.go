package ingest

import (
	"context"
	"fmt"
	"strings"

	"github.com/agenthost/agenthost/host/knowledge/kindex"
	"github.com/agenthost/agenthost/host/llm"
	"github.com/agenthost/agenthost/host/llm/modeluse"
)

// BackfillStore is what the embedding backfill needs of the database.
type BackfillStore interface {
	ContentsMissingVectors(ctx context.Context, model string, limit int) ([]kindex.ContentKey, error)
	ChunksMissingVectors(ctx context.Context, tenantID, sha, model string) ([]kindex.Chunk, error)
	AddVectors(ctx context.Context, tenantID, sha, model string, chunks []kindex.Chunk, vecs [][]float32) error
	ContentStateOf(ctx context.Context, tenantID, sha string) (kindex.ContentState, error)
	SetContentStatus(ctx context.Context, tenantID, sha string, status kindex.Status, reason string) error
}

// vectorsMissing starts the reason recorded on a content indexed without
// its vectors (saveContent); the backfill clears it.
const vectorsMissing = "vectors missing: "

// BackfillBatch is how many contents one Backfill call completes at most.
const BackfillBatch = 50

// Backfill embeds the chunks of indexed contents that have no vector of the
// configured embedding model (indexed while the embedding service was down,
// or before a model was configured), up to BackfillBatch contents, and
// returns how many contents it completed. Without an embedding model it
// does nothing. An embedding failure ends it with the error (the service
// is still down: the caller tries again later); the contents completed
// before it stay done. A content's "vectors missing" reason is cleared once
// it has all its vectors.
func (in *Pipeline) Backfill(ctx context.Context, store BackfillStore) (int, error) {
	if in.embed == nil {
		return 0, nil
	}
	m, ok := in.embed.Model(modeluse.OpEmbedding)
	if !ok {
		return 0, nil
	}
	keys, err := store.ContentsMissingVectors(ctx, m.Name, BackfillBatch)
	if err != nil {
		return 0, fmt.Errorf("knowledge: backfill: %w", err)
	}
	done := 0
	for _, k := range keys {
		chunks, err := store.ChunksMissingVectors(ctx, k.TenantID, k.SHA256, m.Name)
		if err != nil {
			return done, fmt.Errorf("knowledge: backfill: %w", err)
		}
		if len(chunks) > 0 {
			texts := make([]string, len(chunks))
			for i, c := range chunks {
				texts[i] = c.Text
			}
			actx := llm.WithAttribution(ctx, llm.Attribution{TenantID: k.TenantID, Purpose: "embedding"})
			vecs, _, err := in.embed.Embed(actx, texts)
			if err != nil {
				return done, fmt.Errorf("knowledge: backfill: embedding %d chunks: %w", len(chunks), err)
			}
			if err := store.AddVectors(ctx, k.TenantID, k.SHA256, m.Name, chunks, vecs); err != nil {
				return done, fmt.Errorf("knowledge: backfill: %w", err)
			}
		}
		st, err := store.ContentStateOf(ctx, k.TenantID, k.SHA256)
		if err == nil && (st.Status == kindex.StatusEmbedding || st.Status == kindex.StatusIndexed && strings.HasPrefix(st.Error, vectorsMissing)) {
			if err := store.SetContentStatus(ctx, k.TenantID, k.SHA256, kindex.StatusIndexed, ""); err != nil {
				return done, fmt.Errorf("knowledge: backfill: %w", err)
			}
		}
		in.logger.Info("knowledge: backfilled vectors", "tenant", k.TenantID, "content", k.SHA256, "chunks", len(chunks))
		done++
	}
	return done, nil
}
