package store

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/agenthost/agenthost/host/knowledge/kindex"
	"github.com/agenthost/agenthost/host/tenancy"
	"github.com/agenthost/agenthost/pdk/content"
)

// vectorBatch is how many vectors one INSERT carries: few round trips, far
// below SQLite's limit of bound parameters.
const vectorBatch = 100

// SaveVectors stores the embeddings of a content's chunks (aligned with
// chunks), replacing earlier ones. Every vector is kept in chunk_vectors
// (float32 blobs, any dimension, both databases); on PostgreSQL with
// pgvector it is also written to the HNSW-indexed table of its dimension
// (see pgvector.go), in the same transaction.
func (db *DB) SaveVectors(ctx context.Context, tenantID, sha, model string, chunks []kindex.Chunk, vecs [][]float32) error {
	return db.saveVectors(ctx, tenantID, sha, model, chunks, vecs, true)
}

// AddVectors stores the embeddings of some of a content's chunks (aligned
// with chunks) beside its other vectors: those of these chunks are
// replaced, the rest kept. It is how the pages of an on-demand PDF, read
// one run at a time, get their vectors; SaveVectors would drop the pages
// read before.
func (db *DB) AddVectors(ctx context.Context, tenantID, sha, model string, chunks []kindex.Chunk, vecs [][]float32) error {
	return db.saveVectors(ctx, tenantID, sha, model, chunks, vecs, false)
}

// saveVectors stores vectors, replacing all of the content's (all) or
// those of the chunks given.
func (db *DB) saveVectors(ctx context.Context, tenantID, sha, model string, chunks []kindex.Chunk, vecs [][]float32, all bool) error {
	if len(chunks) != len(vecs) {
		return fmt.Errorf("%w: %d vectors for %d chunks", tenancy.ErrInvalid, len(vecs), len(chunks))
	}
	if model == "" {
		return fmt.Errorf("%w: vectors need the name of the model that made them", tenancy.ErrInvalid)
	}
	for i, v := range vecs {
		if err := checkVector(v); err != nil {
			return fmt.Errorf("vector %d: %w", i, err)
		}
	}
	// The typed tables are created (DDL, under a lock) before the
	// transaction that fills them.
	tables := map[int]vectorTable{}
	if idx, err := db.vectors.state(ctx, db); err != nil {
		return err
	} else if idx.usable {
		for _, v := range vecs {
			if _, done := tables[len(v)]; done {
				continue
			}
			tbl, err := db.vectors.table(ctx, db, len(v))
			if err != nil {
				return err
			}
			tables[len(v)] = tbl
		}
	}
	return db.tx(ctx, func(c conn) error {
		if all {
			if _, err := c.exec(ctx, `DELETE FROM chunk_vectors WHERE tenant_id = ? AND sha256 = ?`, tenantID, sha); err != nil {
				return fmt.Errorf("store: replace vectors: %w", err)
			}
		} else {
			for start := 0; start < len(chunks); start += vectorBatch {
				end := min(start+vectorBatch, len(chunks))
				ids := make([]any, 0, end-start)
				for _, ch := range chunks[start:end] {
					ids = append(ids, tenantID+":"+sha+":"+ch.ID)
				}
				if _, err := c.exec(ctx, `DELETE FROM chunk_vectors WHERE chunk_id IN (`+placeholders(len(ids))+`)`, ids...); err != nil {
					return fmt.Errorf("store: replace vectors: %w", err)
				}
			}
		}
		for start := 0; start < len(vecs); start += vectorBatch {
			end := min(start+vectorBatch, len(vecs))
			args := make([]any, 0, 6*(end-start))
			for i := start; i < end; i++ {
				args = append(args, tenantID+":"+sha+":"+chunks[i].ID, tenantID, sha, model, len(vecs[i]), kindex.EncodeVector(vecs[i]))
			}
			if _, err := c.exec(ctx, `INSERT INTO chunk_vectors (chunk_id, tenant_id, sha256, model, dim, vec) VALUES `+valueRows(6, end-start), args...); err != nil {
				return fmt.Errorf("store: vectors %d-%d: %w", start, end-1, err)
			}
		}
		// The typed rows go in after their chunk_vectors rows (their foreign
		// key); the DELETEs above took the old ones with them.
		if len(tables) == 0 {
			return nil
		}
		rows := make([]typedRow, len(vecs))
		for i, v := range vecs {
			rows[i] = typedRow{id: tenantID + ":" + sha + ":" + chunks[i].ID, model: model, vec: v}
		}
		return insertTyped(ctx, c, tables, rows)
	})
}

// checkVector refuses what no index can rank: an empty vector and values
// that are not finite (pgvector refuses them too; the exact search would
// turn them into NaN scores).
func checkVector(v []float32) error {
	if len(v) == 0 {
		return fmt.Errorf("%w: an empty vector", tenancy.ErrInvalid)
	}
	for _, x := range v {
		if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
			return fmt.Errorf("%w: a vector with a value that is not a finite number", tenancy.ErrInvalid)
		}
	}
	return nil
}

// SearchVectors finds the chunks nearest to vec (cosine) among those the
// principal can read, in the query's layer and filters, embedded by model.
// Only vectors of the query's dimension and model are compared.
//
// On PostgreSQL with pgvector the search goes through the HNSW index of the
// query's dimension when the caller's scope holds more candidates than the
// exact cut-off (Config.VectorExactBelow); the scope and filters are applied
// to what the index yields (pgvector's iterative scan goes on until enough
// rows pass them), and if the index cannot produce enough rows in scope the
// search is done exactly. Everywhere else it is exact: every candidate's
// vector is compared, which is right for a workspace's documents and slow
// for millions of chunks.
func (db *DB) SearchVectors(ctx context.Context, p tenancy.Principal, qy kindex.Query, model string, vec []float32) ([]kindex.Hit, error) {
	limit := qy.Limit
	if limit <= 0 {
		limit = 10
	}
	if limit > 100 {
		return nil, fmt.Errorf("%w: limit %d is more than 100", tenancy.ErrInvalid, limit)
	}
	if err := checkVector(vec); err != nil {
		return nil, fmt.Errorf("query: %w", err)
	}
	where, args, err := chunkFilters(p, qy)
	if err != nil {
		return nil, err
	}
	hits, ok, err := db.searchHNSW(ctx, where, args, model, vec, limit)
	if err != nil {
		return nil, err
	}
	if !ok {
		if hits, err = db.searchExact(ctx, where, args, model, vec, limit); err != nil {
			return nil, err
		}
	}
	// Chunks of files inside readable archives (containers.go).
	inner, err := db.searchContainerVectors(ctx, where, args, model, vec, limit)
	if err != nil || len(inner) == 0 {
		return hits, err
	}
	return mergeHits(hits, inner, limit), nil
}

// searchExact compares the query with every vector of its model and
// dimension in scope.
func (db *DB) searchExact(ctx context.Context, where []string, args []any, model string, vec []float32, limit int) ([]kindex.Hit, error) {
	where = append(slices.Clone(where), "v.model = ?", "v.dim = ?")
	args = append(slices.Clone(args), model, len(vec))
	rows, err := db.conn().query(ctx, `SELECT `+hitCols+`, v.vec
		FROM chunk_vectors v JOIN chunks c ON c.id = v.chunk_id JOIN files f ON f.sha256 = c.sha256
		WHERE `+strings.Join(where, " AND "), args...)
	if err != nil {
		return nil, fmt.Errorf("store: vector search: %w", err)
	}
	defer rows.Close()
	best := map[string]kindex.Hit{}
	for rows.Next() {
		var raw []byte
		h, err := scanHit(rows, &raw)
		if err != nil {
			return nil, err
		}
		if _, ok := best[h.ID]; ok {
			continue
		}
		h.Score = kindex.Cosine(vec, kindex.DecodeVector(raw))
		best[h.ID] = h
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: vector search: %w", err)
	}
	return rankHits(best, limit), nil
}

// hitCols are the columns scanHit reads, of chunks c and files f.
const hitCols = `c.id, c.seq, c.object_id, c.content_type, c.text, c.ref, c.tokens, c.hidden, f.id, f.name, f.workspace_id`

// scanHit reads hitCols and then extra.
func scanHit(rows interface{ Scan(...any) error }, extra ...any) (kindex.Hit, error) {
	var h kindex.Hit
	var ct, ref string
	if err := rows.Scan(append([]any{&h.ID, &h.Seq, &h.ObjectID, &ct, &h.Text, &ref, &h.Tokens, &h.Hidden, &h.FileID, &h.FileName, &h.WorkspaceID}, extra...)...); err != nil {
		return kindex.Hit{}, fmt.Errorf("store: vector search: %w", err)
	}
	h.ContentType = content.Type(ct)
	if err := json.Unmarshal([]byte(ref), &h.Ref); err != nil {
		return kindex.Hit{}, fmt.Errorf("store: chunk reference: %w", err)
	}
	return h, nil
}

// rankHits orders hits (keyed by stored chunk id, one per chunk) best first
// and keeps limit of them, with their own chunk ids.
func rankHits(best map[string]kindex.Hit, limit int) []kindex.Hit {
	hits := make([]kindex.Hit, 0, len(best))
	for _, h := range best {
		h.ID = ownChunkID(h.ID)
		hits = append(hits, h)
	}
	slices.SortFunc(hits, func(a, b kindex.Hit) int {
		return cmp.Or(cmp.Compare(b.Score, a.Score), cmp.Compare(a.ID, b.ID))
	})
	return hits[:min(limit, len(hits))]
}

// valueRows is the VALUES list of rows rows of cols placeholders each.
func valueRows(cols, rows int) string {
	row := "(" + placeholders(cols) + ")"
	return strings.Repeat(row+", ", rows-1) + row
}

// staleEmbedding is how long a content may stay "embedding" before the
// backfill takes it for one whose indexing died between its lexical index
// and its vectors (no retry takes it again: it is not pending or failed).
const staleEmbedding = 10 * time.Minute

// ContentsMissingVectors lists up to limit indexed contents (and contents
// left embedding for staleEmbedding) that have chunks without a vector of
// model: contents indexed while the embedding service was down (or before
// a model was configured), which the embedding backfill
// (ingest.Pipeline.Backfill) completes. Administrative: no principal.
func (db *DB) ContentsMissingVectors(ctx context.Context, model string, limit int) ([]kindex.ContentKey, error) {
	rows, err := db.conn().query(ctx, `SELECT DISTINCT c.tenant_id, c.sha256 FROM chunks c
		JOIN content_indexes ci ON ci.tenant_id = c.tenant_id AND ci.sha256 = c.sha256
		WHERE (ci.status = 'indexed' OR (ci.status = 'embedding' AND ci.updated_at < ?))
			AND NOT EXISTS (SELECT 1 FROM chunk_vectors v WHERE v.chunk_id = c.id AND v.model = ?)
		ORDER BY c.tenant_id, c.sha256 LIMIT ?`, micros(now().Add(-staleEmbedding)), model, limit)
	if err != nil {
		return nil, fmt.Errorf("store: contents missing vectors: %w", err)
	}
	defer rows.Close()
	var out []kindex.ContentKey
	for rows.Next() {
		var k kindex.ContentKey
		if err := rows.Scan(&k.TenantID, &k.SHA256); err != nil {
			return nil, fmt.Errorf("store: contents missing vectors: %w", err)
		}
		out = append(out, k)
	}
	return out, rows.Err()
}

// ChunksMissingVectors returns a content's chunks that have no vector of
// model, in reading order.
func (db *DB) ChunksMissingVectors(ctx context.Context, tenantID, sha, model string) ([]kindex.Chunk, error) {
	rows, err := db.conn().query(ctx, `SELECT c.id FROM chunks c WHERE c.tenant_id = ? AND c.sha256 = ?
		AND NOT EXISTS (SELECT 1 FROM chunk_vectors v WHERE v.chunk_id = c.id AND v.model = ?)`, tenantID, sha, model)
	if err != nil {
		return nil, fmt.Errorf("store: chunks missing vectors: %w", err)
	}
	missing := map[string]bool{}
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return nil, fmt.Errorf("store: chunks missing vectors: %w", err)
		}
		missing[id] = true
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: chunks missing vectors: %w", err)
	}
	if len(missing) == 0 {
		return nil, nil
	}
	all, err := db.ContentChunksOf(ctx, tenantID, sha, kindex.ChunkFilter{})
	if err != nil {
		return nil, err
	}
	out := make([]kindex.Chunk, 0, len(missing))
	for _, ch := range all {
		if missing[tenantID+":"+sha+":"+ch.ID] {
			out = append(out, ch)
		}
	}
	return out, nil
}
