package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/pgvector/pgvector-go"

	"github.com/agenthost/agenthost/host/knowledge/kindex"
)

// The approximate vector index on PostgreSQL (pgvector HNSW).
//
// Why tables made at run time and not a migration: HNSW needs a column of a
// fixed dimension (vector(384)), and the dimension is only known once an
// embedding model is configured; over a store's life several models, of
// several dimensions, may have written vectors. So each dimension gets its
// own table, chunk_vectors_<dim>, made (with its index) the first time a
// vector of that dimension is saved or searched, under an advisory lock so
// that hosts sharing the database do not race. A migration could only create
// the extension, which needs rights a migration should not assume, and must
// not fail on servers without pgvector (the PostgreSQL 15 of Debian has none).
//
// chunk_vectors stays the record of every vector (any dimension, both
// databases; the exact search reads it). The typed tables are an index over
// it: their rows reference chunk_vectors and vanish with them, and a typed
// table made after vectors of its dimension exist is filled from it, so a
// store that gains pgvector later, or a new dimension, loses nothing.
//
// Vectors of another dimension than the query's are never compared: they
// live in other tables. Vectors of another model of the same dimension share
// the table and are filtered out by the model column.

// defaultExactBelow is the scope size (candidate vectors) up to which a
// search is exact even where the index exists: comparing ten thousand
// vectors costs a few milliseconds in PostgreSQL, and an exact answer is
// complete; above it the index pays. Weaviate's "flat search cut-off" is the
// same idea.
const defaultExactBelow = 10_000

// maxScanTuples bounds pgvector's iterative index scan (hnsw.max_scan_tuples,
// default 20,000): a scope that is a small share of a large table needs more
// tuples visited before enough pass the filters. A scan that still finds too
// few falls back to the exact search.
const maxScanTuples = 100_000

// pgVectors is a PostgreSQL store's pgvector state, detected once.
type pgVectors struct {
	exactBelow int
	logger     *slog.Logger

	mu       sync.Mutex
	detected bool
	st       vectorState
	tables   map[int]vectorTable

	indexed atomic.Int64 // searches the index answered (for tests and figures)
}

// vectorState is what the server offers.
type vectorState struct {
	usable    bool   // the extension is installed in the database
	version   string // pgvector's version
	iterative bool   // iterative index scans (pgvector ≥ 0.8)
}

// vectorTable is the typed table of one dimension; name "" means no index
// for that dimension (too many dimensions for HNSW), so the search is exact.
type vectorTable struct {
	name string
	typ  string // vector, or halfvec above 2,000 dimensions
	dim  int
}

func newPGVectors(exactBelow int, logger *slog.Logger) *pgVectors {
	if exactBelow == 0 {
		exactBelow = defaultExactBelow
	}
	return &pgVectors{exactBelow: exactBelow, logger: logger, tables: map[int]vectorTable{}}
}

// VectorSearch says how vector search runs on this store: "exact", or
// "hnsw" with pgvector's version (and "iterative scan" when the server has
// it). On PostgreSQL the first call detects pgvector and, when the server
// has it but the database does not, creates the extension.
func (db *DB) VectorSearch(ctx context.Context) (string, error) {
	st, err := db.vectors.state(ctx, db)
	if err != nil || !st.usable {
		return "exact", err
	}
	mode := "hnsw (pgvector " + st.version
	if st.iterative {
		mode += ", iterative scan"
	}
	return mode + ")", nil
}

// state detects pgvector on first use. SQLite (v nil) has no index.
func (v *pgVectors) state(ctx context.Context, db *DB) (vectorState, error) {
	if v == nil || db.dialect != Postgres {
		return vectorState{}, nil
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.detected {
		return v.st, nil
	}
	st, err := v.detect(ctx, db)
	if err != nil {
		return vectorState{}, err
	}
	v.st, v.detected = st, true
	if st.usable {
		v.logger.Info("store: vector search uses pgvector HNSW indexes", "pgvector", st.version, "iterativeScan", st.iterative)
	}
	return st, nil
}

// advisory lock key of the vector DDL ("agenthost vectors").
const vectorLock = 0x61676876

func (v *pgVectors) detect(ctx context.Context, db *DB) (vectorState, error) {
	var installed sql.NullString
	var available bool
	err := db.sql.QueryRowContext(ctx, `SELECT (SELECT extversion FROM pg_extension WHERE extname = 'vector'),
		EXISTS (SELECT 1 FROM pg_available_extensions WHERE name = 'vector')`).Scan(&installed, &available)
	if err != nil {
		return vectorState{}, fmt.Errorf("store: detect pgvector: %w", err)
	}
	if !installed.Valid {
		if !available {
			v.logger.Info("store: vector search is exact: the PostgreSQL server has no pgvector extension")
			return vectorState{}, nil
		}
		err := db.tx(ctx, func(c conn) error {
			if _, err := c.exec(ctx, `SELECT pg_advisory_xact_lock(?)`, vectorLock); err != nil {
				return err
			}
			_, err := c.exec(ctx, `CREATE EXTENSION IF NOT EXISTS vector`)
			return err
		})
		var pgErr *pgconn.PgError
		if errors.As(err, &pgErr) {
			// The server refused (commonly: the role may not create
			// extensions). That will not change while we run.
			v.logger.Warn("store: vector search is exact: pgvector is available but could not be created; an administrator can run CREATE EXTENSION vector", "err", err)
			return vectorState{}, nil
		}
		if err != nil {
			return vectorState{}, fmt.Errorf("store: create extension vector: %w", err)
		}
		if err := db.sql.QueryRowContext(ctx, `SELECT extversion FROM pg_extension WHERE extname = 'vector'`).Scan(&installed); err != nil {
			return vectorState{}, fmt.Errorf("store: detect pgvector: %w", err)
		}
	}
	return vectorState{usable: true, version: installed.String, iterative: versionAtLeast(installed.String, 0, 8)}, nil
}

// versionAtLeast compares a "major.minor[.patch]" version.
func versionAtLeast(version string, major, minor int) bool {
	parts := strings.SplitN(version, ".", 3)
	if len(parts) < 2 {
		return false
	}
	ma, err1 := strconv.Atoi(parts[0])
	mi, err2 := strconv.Atoi(parts[1])
	if err1 != nil || err2 != nil {
		return false
	}
	return ma > major || ma == major && mi >= minor
}

// table returns the typed table of a dimension, creating, indexing and
// filling it on first use.
func (v *pgVectors) table(ctx context.Context, db *DB, dim int) (vectorTable, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if t, ok := v.tables[dim]; ok {
		return t, nil
	}
	t := vectorTable{dim: dim}
	var ops string
	switch {
	case dim <= 2000: // HNSW's limit for vector
		t.typ, ops = "vector", "vector_cosine_ops"
	case dim <= 4000: // halfvec's: half the bytes, for large models (3,072)
		t.typ, ops = "halfvec", "halfvec_cosine_ops"
	default:
		v.logger.Info("store: vectors of this dimension have no HNSW index (more than 4,000); their search is exact", "dim", dim)
		v.tables[dim] = t
		return t, nil
	}
	name := fmt.Sprintf("chunk_vectors_%d", dim)
	err := db.tx(ctx, func(c conn) error {
		if _, err := c.exec(ctx, `SELECT pg_advisory_xact_lock(?)`, vectorLock); err != nil {
			return err
		}
		// The table is only an index over chunk_vectors: one whose column is
		// not what it should be (left by DROP EXTENSION vector CASCADE, which
		// drops the column and keeps the table) is made anew and refilled.
		var have sql.NullString
		if err := c.queryRow(ctx, `SELECT format_type(a.atttypid, a.atttypmod) FROM pg_attribute a
			WHERE a.attrelid = to_regclass(?) AND a.attname = 'embedding' AND NOT a.attisdropped`, name).Scan(&have); err != nil && !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		if have.String != fmt.Sprintf("%s(%d)", t.typ, dim) {
			if _, err := c.exec(ctx, `DROP TABLE IF EXISTS `+name); err != nil {
				return err
			}
		}
		if _, err := c.exec(ctx, fmt.Sprintf(`CREATE TABLE IF NOT EXISTS %s (
			chunk_id  TEXT PRIMARY KEY REFERENCES chunk_vectors (chunk_id) ON DELETE CASCADE,
			model     TEXT NOT NULL,
			embedding %s(%d) NOT NULL)`, name, t.typ, dim)); err != nil {
			return err
		}
		_, err := c.exec(ctx, fmt.Sprintf(`CREATE INDEX IF NOT EXISTS %s_hnsw ON %s USING hnsw (embedding %s)`, name, name, ops))
		return err
	})
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		// Refused by the server (no right to create tables, a name taken by
		// something else): vectors of this dimension are still saved and
		// searched, exactly, rather than ingestion failing for an index.
		v.logger.Warn("store: no HNSW index for this dimension; its vector search is exact", "dim", dim, "table", name, "err", err)
		v.tables[dim] = t
		return t, nil
	}
	if err != nil {
		return vectorTable{}, fmt.Errorf("store: vector table of dimension %d: %w", dim, err)
	}
	t.name = name
	if err := backfill(ctx, db, t); err != nil {
		return vectorTable{}, err
	}
	v.logger.Info("store: vector index ready", "table", name, "dim", dim, "type", t.typ)
	v.tables[dim] = t
	return t, nil
}

// backfill copies into a typed table the vectors of its dimension that
// chunk_vectors holds and it lacks (saved before the table or the extension
// existed).
func backfill(ctx context.Context, db *DB, t vectorTable) error {
	for {
		rows, err := db.conn().query(ctx, `SELECT v.chunk_id, v.model, v.vec FROM chunk_vectors v
			WHERE v.dim = ? AND NOT EXISTS (SELECT 1 FROM `+t.name+` t WHERE t.chunk_id = v.chunk_id) LIMIT 1000`, t.dim)
		if err != nil {
			return fmt.Errorf("store: fill %s: %w", t.name, err)
		}
		var batch []typedRow
		for rows.Next() {
			var r typedRow
			var raw []byte
			if err := rows.Scan(&r.id, &r.model, &raw); err != nil {
				rows.Close()
				return fmt.Errorf("store: fill %s: %w", t.name, err)
			}
			r.vec = kindex.DecodeVector(raw)
			batch = append(batch, r)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return fmt.Errorf("store: fill %s: %w", t.name, err)
		}
		if len(batch) == 0 {
			return nil
		}
		err = db.tx(ctx, func(c conn) error {
			return insertTyped(ctx, c, map[int]vectorTable{t.dim: t}, batch)
		})
		if err != nil {
			return fmt.Errorf("store: fill %s: %w", t.name, err)
		}
		if len(batch) < 1000 {
			return nil
		}
	}
}

// typedRow is one vector for a typed table.
type typedRow struct {
	id, model string
	vec       []float32
}

// insertTyped writes rows into the typed tables of their dimensions (those
// with no table are skipped: their search is exact).
func insertTyped(ctx context.Context, c conn, tables map[int]vectorTable, rows []typedRow) error {
	byDim := map[int][]typedRow{}
	for _, r := range rows {
		if t := tables[len(r.vec)]; t.name != "" {
			byDim[t.dim] = append(byDim[t.dim], r)
		}
	}
	for dim, rs := range byDim {
		t := tables[dim]
		row := "(?, ?, ?::" + t.typ + ")"
		for start := 0; start < len(rs); start += vectorBatch {
			end := min(start+vectorBatch, len(rs))
			vals := make([]string, 0, end-start)
			args := make([]any, 0, 3*(end-start))
			for _, r := range rs[start:end] {
				vals = append(vals, row)
				args = append(args, r.id, r.model, pgValue(t, r.vec))
			}
			if _, err := c.exec(ctx, `INSERT INTO `+t.name+` (chunk_id, model, embedding) VALUES `+strings.Join(vals, ", ")+
				` ON CONFLICT (chunk_id) DO UPDATE SET model = excluded.model, embedding = excluded.embedding`, args...); err != nil {
				return fmt.Errorf("store: index vectors: %w", err)
			}
		}
	}
	return nil
}

// pgValue is a vector as a parameter of the table's column type.
func pgValue(t vectorTable, v []float32) any {
	if t.typ == "halfvec" {
		return pgvector.NewHalfVector(v)
	}
	return pgvector.NewVector(v)
}

// searchHNSW answers a search through the typed table's HNSW index, or
// reports (false) that the exact search should: no pgvector, no index for
// the dimension, a scope small enough to compare exhaustively, or an index
// scan that ran out before enough rows in scope came up.
//
// The scope and filters (where, args: chunkFilters) are applied to the rows
// the index yields, in the same query, so the index can narrow a result but
// never widen it. With pgvector ≥ 0.8 the scan is iterative (relaxed order,
// re-sorted here): it goes on through the graph until enough rows pass the
// filters. Before 0.8 the index yields at most ef_search candidates, raised
// to its maximum here, and the filters thin them.
func (db *DB) searchHNSW(ctx context.Context, where []string, args []any, model string, vec []float32, limit int) ([]kindex.Hit, bool, error) {
	st, err := db.vectors.state(ctx, db)
	if err != nil || !st.usable {
		return nil, false, err
	}
	t, err := db.vectors.table(ctx, db, len(vec))
	if err != nil || t.name == "" {
		return nil, false, err
	}
	var norm float32
	for _, x := range vec {
		norm += x * x
	}
	if norm == 0 { // cosine distance to nothing: no ranking the index can give
		return nil, false, nil
	}
	from, scopeArgs := hnswFrom(t, where, args, model)
	// How many vectors are in scope, counted up to what decides: whether the
	// scope is small enough for the exact search, and how many hits the
	// index must produce to be complete.
	probe := max(db.vectors.exactBelow, limit) + 1
	var inScope int
	if err := db.conn().queryRow(ctx, `SELECT count(DISTINCT chunk_id) FROM (SELECT v.chunk_id`+from+` LIMIT ?) s`,
		append(scopeArgs, probe)...).Scan(&inScope); err != nil {
		return nil, false, fmt.Errorf("store: vector search: %w", err)
	}
	if inScope <= db.vectors.exactBelow || inScope == 0 {
		return nil, false, nil
	}
	want := min(limit, inScope)
	// ef_search is the candidate list of the graph walk (pgvector's default
	// 40): 100, or four times the hits asked, bought recall@20 from 0.85 to
	// 0.9+ on clustered test data for a few milliseconds.
	efSearch := min(1000, max(100, 4*limit))
	if !st.iterative {
		efSearch = 1000
	}
	best := map[string]kindex.Hit{}
	err = db.tx(ctx, func(c conn) error {
		sets := []string{fmt.Sprintf("SET LOCAL hnsw.ef_search = %d", efSearch)}
		if st.iterative {
			sets = append(sets, "SET LOCAL hnsw.iterative_scan = relaxed_order", fmt.Sprintf("SET LOCAL hnsw.max_scan_tuples = %d", maxScanTuples))
		}
		for _, s := range sets {
			if _, err := c.exec(ctx, s); err != nil {
				return err
			}
		}
		q, qArgs := hnswQuery(t, from, scopeArgs, vec, limit)
		rows, err := c.query(ctx, q, qArgs...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var dist float64
			h, err := scanHit(rows, &dist)
			if err != nil {
				return err
			}
			if _, ok := best[h.ID]; !ok {
				h.Score = 1 - dist
				best[h.ID] = h
			}
		}
		return rows.Err()
	})
	if err != nil {
		return nil, false, fmt.Errorf("store: vector search (hnsw): %w", err)
	}
	if len(best) < want {
		db.logger.Debug("store: the HNSW scan found too few vectors in scope; searching exactly", "found", len(best), "want", want)
		return nil, false, nil
	}
	db.vectors.indexed.Add(1)
	return rankHits(best, limit), true, nil
}

// hnswQuery is the index search: the nearest vectors by cosine distance
// (the operator and ORDER BY … LIMIT the HNSW index serves), through the
// scope and filters of from. Several readable files may carry the same
// bytes, so it fetches extra rows; the caller keeps each chunk once.
func hnswQuery(t vectorTable, from string, scopeArgs []any, vec []float32, limit int) (string, []any) {
	return `SELECT ` + hitCols + `, v.embedding <=> ?::` + t.typ + ` AS distance` + from + ` ORDER BY distance LIMIT ?`,
		append(append([]any{pgValue(t, vec)}, scopeArgs...), 3*limit)
}

// hnswFrom is the FROM and WHERE of the index search: a typed table's
// vectors of model, with their chunks and the files that carry them, in the
// scope and filters where (chunkFilters).
func hnswFrom(t vectorTable, where []string, args []any, model string) (string, []any) {
	return ` FROM ` + t.name + ` v JOIN chunks c ON c.id = v.chunk_id JOIN files f ON f.sha256 = c.sha256
		WHERE ` + strings.Join(append(slices.Clone(where), "v.model = ?"), " AND "),
		append(slices.Clone(args), model)
}
