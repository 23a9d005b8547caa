package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/agenthost/agenthost/host/files/filemeta"
	"github.com/agenthost/agenthost/host/knowledge/analysis"
	"github.com/agenthost/agenthost/host/knowledge/kindex"
	"github.com/agenthost/agenthost/host/tenancy"
	"github.com/agenthost/agenthost/pdk/content"
)

// ClaimContent marks a tenant's content (by sha256) pending unless it is
// known already, and reports whether it was new: the caller that gets true
// extracts it, every other finds it indexed or in progress. This is how the
// same bytes in a tenant are extracted once. With reclaim, a content left
// pending or failed (by an attempt that died or failed) is taken again.
func (db *DB) ClaimContent(ctx context.Context, tenantID, sha string, reclaim bool) (bool, error) {
	c := db.conn()
	res, err := c.exec(ctx, `INSERT INTO content_indexes (tenant_id, sha256, status, updated_at) VALUES (?, ?, 'pending', ?)
		ON CONFLICT (tenant_id, sha256) DO NOTHING`, tenantID, sha, micros(now()))
	if err != nil {
		return false, fmt.Errorf("store: claim content: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 1 || !reclaim {
		return n == 1, nil
	}
	res, err = c.exec(ctx, `UPDATE content_indexes SET status = 'pending', error = '', updated_at = ?
		WHERE tenant_id = ? AND sha256 = ? AND status IN ('pending', 'failed')`, micros(now()), tenantID, sha)
	if err != nil {
		return false, fmt.Errorf("store: reclaim content: %w", err)
	}
	n, _ := res.RowsAffected()
	return n == 1, nil
}

// FileForIndexing reads a file for background indexing, done on the
// uploader's behalf (administrative: no principal).
func (db *DB) FileForIndexing(ctx context.Context, fileID string) (filemeta.Item, error) {
	f, err := fileByID(ctx, db.conn(), fileID)
	if errors.Is(err, sql.ErrNoRows) {
		return filemeta.Item{}, fmt.Errorf("%w: file %q", tenancy.ErrNotFound, fileID)
	}
	return f, err
}

// SetContentStatus moves a content along the pipeline (failed with its
// reason).
// A content that ends (indexed, failed) loses its note: the note says what
// happens to a content on its way.
func (db *DB) SetContentStatus(ctx context.Context, tenantID, sha string, status kindex.Status, reason string) error {
	_, err := db.conn().exec(ctx, `UPDATE content_indexes SET status = ?, error = ?, updated_at = ?,
		note = CASE WHEN ? THEN '' ELSE note END WHERE tenant_id = ? AND sha256 = ?`,
		string(status), reason, micros(now()), status == kindex.StatusIndexed || status == kindex.StatusFailed, tenantID, sha)
	if err != nil {
		return fmt.Errorf("store: content status: %w", err)
	}
	return nil
}

// SetContentNote records what is happening to a tenant's content (by
// sha256) that is not indexed yet, such as "retrying after restart"; the
// content's index record shows it until the content is indexed or fails. A
// content not claimed yet is recorded pending with the note; one that is
// indexed or failed already is left as it is.
func (db *DB) SetContentNote(ctx context.Context, tenantID, sha, note string) error {
	t := micros(now())
	_, err := db.conn().exec(ctx, `INSERT INTO content_indexes (tenant_id, sha256, status, note, updated_at) VALUES (?, ?, 'pending', ?, ?)
		ON CONFLICT (tenant_id, sha256) DO UPDATE SET note = excluded.note, updated_at = excluded.updated_at
		WHERE content_indexes.status NOT IN ('indexed', 'failed')`, tenantID, sha, note, t)
	if err != nil {
		return fmt.Errorf("store: content note: %w", err)
	}
	return nil
}

// SetCompletionNote records how far the background completion of an
// indexed on-demand content is ("" when it is complete); unlike
// SetContentNote it applies to indexed contents only.
func (db *DB) SetCompletionNote(ctx context.Context, tenantID, sha, note string) error {
	_, err := db.conn().exec(ctx, `UPDATE content_indexes SET note = ?, updated_at = ? WHERE tenant_id = ? AND sha256 = ?
		AND status IN ('indexed', 'embedding')`, note, micros(now()), tenantID, sha)
	if err != nil {
		return fmt.Errorf("store: completion note: %w", err)
	}
	return nil
}

// SetContentExtractor records which extractor a content was given (or
// that none was, and why).
func (db *DB) SetContentExtractor(ctx context.Context, tenantID, sha string, rec kindex.ExtractorRecord) error {
	b, err := json.Marshal(rec)
	if err != nil {
		return fmt.Errorf("store: content extractor: %w", err)
	}
	_, err = db.conn().exec(ctx, `UPDATE content_indexes SET extractor = ?, updated_at = ? WHERE tenant_id = ? AND sha256 = ?`,
		string(b), micros(now()), tenantID, sha)
	if err != nil {
		return fmt.Errorf("store: content extractor: %w", err)
	}
	return nil
}

// extractorRecord reads the extractor column: nil when none was recorded.
func extractorRecord(s string) (*kindex.ExtractorRecord, error) {
	if s == "" {
		return nil, nil
	}
	var rec kindex.ExtractorRecord
	if err := json.Unmarshal([]byte(s), &rec); err != nil {
		return nil, fmt.Errorf("store: content extractor: %w", err)
	}
	return &rec, nil
}

// SaveContent stores a content's index and chunks, replacing earlier ones,
// in one transaction, and sets its status.
func (db *DB) SaveContent(ctx context.Context, tenantID, sha string, idx content.Index, chunks []kindex.Chunk, status kindex.Status) error {
	structure, err := json.Marshal(idx.Structure)
	if err != nil {
		return fmt.Errorf("store: content structure: %w", err)
	}
	objects, err := json.Marshal(idx.Objects)
	if err != nil {
		return fmt.Errorf("store: content objects: %w", err)
	}
	return db.tx(ctx, func(c conn) error {
		t := micros(now())
		_, err := c.exec(ctx, `INSERT INTO content_indexes (tenant_id, sha256, status, mime_type, total_objects, total_size, structure, objects, extracted_at, updated_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
			ON CONFLICT (tenant_id, sha256) DO UPDATE SET status = excluded.status, error = '', note = '', mime_type = excluded.mime_type,
				total_objects = excluded.total_objects, total_size = excluded.total_size, structure = excluded.structure,
				objects = excluded.objects, extracted_at = excluded.extracted_at, updated_at = excluded.updated_at`,
			tenantID, sha, string(status), idx.MIMEType, idx.TotalObjects, idx.TotalSize, string(structure), string(objects), t, t)
		if err != nil {
			return fmt.Errorf("store: save content: %w", err)
		}
		if _, err := c.exec(ctx, `DELETE FROM chunks WHERE tenant_id = ? AND sha256 = ?`, tenantID, sha); err != nil {
			return fmt.Errorf("store: replace chunks: %w", err)
		}
		for _, ch := range chunks {
			if err := insertChunk(ctx, c, db.analyzer, tenantID, sha, ch, ""); err != nil {
				return err
			}
		}
		return nil
	})
}

// insertChunk writes one chunk of a content with its text analysed for
// search; conflict is the statement's ON CONFLICT clause ("" for none).
func insertChunk(ctx context.Context, c conn, an *analysis.Analyzer, tenantID, sha string, ch kindex.Chunk, conflict string) error {
	ref, _ := json.Marshal(ch.Ref)
	f := an.Document(ch.Text, "")
	if _, err := c.exec(ctx, `INSERT INTO chunks (id, tenant_id, sha256, seq, object_id, content_type, text, ref, page, section, tokens, hidden,
		lang, terms_exact, terms_stems, terms_parts, analysis)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) `+conflict, tenantID+":"+sha+":"+ch.ID, tenantID, sha, ch.Seq, ch.ObjectID,
		string(ch.ContentType), ch.Text, string(ref), ch.Ref.PageIndex, ch.Ref.SectionID, ch.Tokens, ch.Hidden,
		f.Lang, f.Exact, f.Stems, f.Parts, analysis.Version); err != nil {
		return fmt.Errorf("store: chunk %s: %w", ch.ID, err)
	}
	return nil
}

// ContentState returns the indexing state of a file's content, for a
// principal who can read the file. A file whose indexing job has not begun
// yet (no content record) is pending, noted "queued".
func (db *DB) ContentState(ctx context.Context, p tenancy.Principal, fileID string) (kindex.ContentState, error) {
	q, args := scope(p, false, "f", "shared")
	var st kindex.ContentState
	var status, structure, objects, extractor, note, errText, mimeType sql.NullString
	var totalObjects, totalSize sql.NullInt64
	var open bool
	err := db.conn().queryRow(ctx, `SELECT ci.status, ci.error, ci.mime_type, ci.total_objects, ci.total_size, ci.structure, ci.objects, ci.extractor, ci.note, f.name, `+passwordOpen("f")+`
		FROM files f LEFT JOIN content_indexes ci ON ci.tenant_id = f.tenant_id AND ci.sha256 = f.sha256
		WHERE f.id = ? AND `+q, append([]any{fileID}, args...)...).
		Scan(&status, &errText, &mimeType, &totalObjects, &totalSize, &structure, &objects, &extractor, &note, &st.Index.FileName, &open)
	if errors.Is(err, sql.ErrNoRows) {
		return kindex.ContentState{}, fmt.Errorf("%w: no file %q", tenancy.ErrNotFound, fileID)
	}
	if err != nil {
		return kindex.ContentState{}, fmt.Errorf("store: content state: %w", err)
	}
	if !status.Valid {
		st.Status, st.Note = kindex.StatusPending, kindex.NoteQueued
		return st, nil
	}
	st.Status, st.Error, st.Note = kindex.Status(status.String), errText.String, note.String
	if !open {
		// Read (or being read) with a password given for another file:
		// this one shows nothing of it but that it waits for its
		// password, in its own name (the content's reason names the
		// file the password was given for), or the failure that ended
		// its indexing for another reason.
		st.Error = lockedState(st.Status, st.Error, st.Index.FileName)
		st.Status, st.Note = kindex.StatusFailed, ""
		return st, nil
	}
	st.Index.MIMEType, st.Index.TotalObjects, st.Index.TotalSize = mimeType.String, int(totalObjects.Int64), totalSize.Int64
	if st.Extractor, err = extractorRecord(extractor.String); err != nil {
		return kindex.ContentState{}, err
	}
	if err := json.Unmarshal([]byte(structure.String), &st.Index.Structure); err != nil {
		return kindex.ContentState{}, fmt.Errorf("store: content structure: %w", err)
	}
	if err := json.Unmarshal([]byte(objects.String), &st.Index.Objects); err != nil {
		return kindex.ContentState{}, fmt.Errorf("store: content objects: %w", err)
	}
	return st, nil
}

// SearchLexical finds chunks by their words, best first: FTS5's bm25 on
// SQLite, ts_rank_cd on PostgreSQL, any of the query's terms matching. The
// query is analysed as the chunks were (host/knowledge/analysis), as each of
// its languages: a word matches a chunk by its exact form, its stem or, in
// a German compound, as one of its parts, ranked in that order. Only
// chunks of files the principal can read are considered (through the files
// that carry their bytes), in the query's layer and filters.
func (db *DB) SearchLexical(ctx context.Context, p tenancy.Principal, qy kindex.Query) ([]kindex.Hit, error) {
	terms := db.analyzer.Query(strings.Join(kindex.Terms(qy.Text), " "), qy.Languages)
	if len(terms) == 0 {
		return nil, fmt.Errorf("%w: the query has no words to search for", tenancy.ErrInvalid)
	}
	limit := qy.Limit
	if limit <= 0 {
		limit = 10
	}
	if limit > 100 {
		return nil, fmt.Errorf("%w: limit %d is more than 100", tenancy.ErrInvalid, limit)
	}
	where, args, err := chunkFilters(p, qy)
	if err != nil {
		return nil, err
	}
	// Chunks reach files directly (the file's own bytes) and through the
	// containers that carry them (containers.go). On SQLite one query
	// matches once (FTS5 scores every match: the MATCH is the cost) and
	// ranks rowids of both carriers before it reads any text; on PostgreSQL
	// one query a carrier, merged by score.
	cond := strings.Join(where, " AND ")
	type search struct {
		q    string
		args []any
	}
	// On SQLite the MATCH is first cut to the window best-scoring chunks
	// (FTS5 sorts its matches by score as the bare query does), and only
	// those are joined to their files and filtered; when fewer than the
	// rows wanted pass, the search is run again over every match. The
	// window's rows that pass are the best of all that pass, so the answer
	// is the same.
	windows := []int{-1}
	if db.dialect == SQLite {
		windows = []int{limit * 30, -1}
	}
	var hits []kindex.Hit
	for _, window := range windows {
		hits = hits[:0]
		seen := map[string]bool{}
		var searches []search
		switch db.dialect {
		case SQLite:
			// Weights of terms_exact, terms_stems, terms_parts: as
			// PostgreSQL's A, B, C below.
			q := `WITH m AS MATERIALIZED (SELECT rowid AS rid, -bm25(chunks_fts, 4.0, 2.0, 1.0) AS score FROM chunks_fts WHERE chunks_fts MATCH ? ORDER BY score DESC LIMIT ?),
			top AS (
				SELECT c.rowid AS rid, f.id AS fid, '' AS inner_path, m.score AS score FROM m JOIN chunks c ON c.rowid = m.rid
				JOIN files f ON f.sha256 = c.sha256 WHERE ` + cond + `
				UNION ALL
				SELECT c.rowid, f.id, f.name || '/' || ce.path, m.score FROM m JOIN chunks c ON c.rowid = m.rid
				` + containerCarrier + ` WHERE ` + cond + `
				ORDER BY score DESC LIMIT ?)
			SELECT ` + hitCols + `, top.inner_path, top.score FROM top JOIN chunks c ON c.rowid = top.rid JOIN files f ON f.id = top.fid
			ORDER BY top.score DESC`
			a := append([]any{matchSQLite(terms), window}, args...)
			a = append(append(a, args...), limit*3)
			searches = append(searches, search{q, a})
		case Postgres:
			for _, carrier := range []struct{ join, path string }{
				{`JOIN files f ON f.sha256 = c.sha256`, `''`},
				{containerCarrier, `f.name || '/' || ce.path`},
			} {
				q := `SELECT ` + hitCols + `, ` + carrier.path + `, ts_rank_cd('{0.1, 0.25, 0.5, 1.0}', c.tsv, query) AS score FROM chunks c
				` + carrier.join + `
				CROSS JOIN to_tsquery('simple', ?) query
				WHERE c.tsv @@ query AND ` + cond + ` ORDER BY score DESC LIMIT ?`
				searches = append(searches, search{q, append(append([]any{matchPostgres(terms)}, args...), limit*3)})
			}
		}
		for _, sr := range searches {
			// Several readable files may carry the same bytes: fetch extra rows
			// and keep each chunk once, with its best file.
			rows, err := db.conn().query(ctx, sr.q, sr.args...)
			if err != nil {
				return nil, fmt.Errorf("store: search: %w", err)
			}
			for rows.Next() {
				var h kindex.Hit
				var ct, ref, inner string
				if err := rows.Scan(&h.ID, &h.Seq, &h.ObjectID, &ct, &h.Text, &ref, &h.Tokens, &h.Hidden, &h.FileID, &h.FileName, &h.WorkspaceID, &inner, &h.Score); err != nil {
					rows.Close()
					return nil, fmt.Errorf("store: search: %w", err)
				}
				if seen[h.ID] {
					continue
				}
				seen[h.ID] = true
				h.ContentType = content.Type(ct)
				if err := json.Unmarshal([]byte(ref), &h.Ref); err != nil {
					rows.Close()
					return nil, fmt.Errorf("store: chunk reference: %w", err)
				}
				if inner != "" {
					h.Ref.ContainerPath = inner
				}
				h.ID = ownChunkID(h.ID)
				hits = append(hits, h)
			}
			err = rows.Err()
			rows.Close()
			if err != nil {
				return nil, fmt.Errorf("store: search: %w", err)
			}
		}
		if len(hits) >= limit {
			break
		}
	}
	sort.SliceStable(hits, func(i, j int) bool { return hits[i].Score > hits[j].Score })
	return hits[:min(limit, len(hits))], nil
}

// chunkFilters is the WHERE clause shared by both searches over chunks c
// joined to the files f that carry them: the caller's read scope, the layer
// and the query's filters.
func chunkFilters(p tenancy.Principal, qy kindex.Query) ([]string, []any, error) {
	scopeSQL, args := scope(p, false, "f", "shared")
	where := []string{scopeSQL, "c.tenant_id = f.tenant_id", "f.status <> 'archived'", passwordOpen("f")}
	switch qy.Layer {
	case kindex.LayerInstance:
		if qy.WorkspaceID == "" {
			return nil, nil, fmt.Errorf("%w: the instance layer needs a workspace", tenancy.ErrInvalid)
		}
	case kindex.LayerShared:
		where = append(where, "f.shared")
	case kindex.LayerAll:
	default:
		return nil, nil, fmt.Errorf("%w: unknown layer %q (instance, shared)", tenancy.ErrInvalid, qy.Layer)
	}
	if qy.WorkspaceID != "" && qy.Layer != kindex.LayerShared {
		where = append(where, "f.workspace_id = ?")
		args = append(args, qy.WorkspaceID)
	}
	if len(qy.FileIDs) > 0 {
		where = append(where, "f.id IN ("+placeholders(len(qy.FileIDs))+")")
		for _, id := range qy.FileIDs {
			args = append(args, id)
		}
	}
	if qy.ContentType != "" {
		where = append(where, "c.content_type = ?")
		args = append(args, string(qy.ContentType))
	}
	if qy.Page > 0 {
		where = append(where, "c.page = ?")
		args = append(args, qy.Page)
	}
	if qy.Section != "" {
		where = append(where, "c.section = ?")
		args = append(args, qy.Section)
	}
	switch qy.Hidden {
	case kindex.HiddenExclude:
		where, args = append(where, "c.hidden = ?"), append(args, false)
	case kindex.HiddenOnly:
		where, args = append(where, "c.hidden = ?"), append(args, true)
	}
	return where, args, nil
}

// ownChunkID is a stored chunk id ("tenant:sha:id") without its tenant and
// content (neither holds a colon).
func ownChunkID(stored string) string {
	parts := strings.SplitN(stored, ":", 3)
	return parts[len(parts)-1]
}

// ClaimEncryptedContent takes a tenant's content (by sha256) again for
// indexing only while it waits for its password (failed with
// kindex.ReasonEncrypted or ReasonWrongPassword), and reports whether it
// did: a password given never races an indexing in progress. The content
// is marked read with a password.
func (db *DB) ClaimEncryptedContent(ctx context.Context, tenantID, sha string) (bool, error) {
	// The content is read with a password from here on: it stays locked
	// for every file that carries it until a password is given for that
	// file too (password_locks.go).
	res, err := db.conn().exec(ctx, `UPDATE content_indexes SET status = 'pending', error = '', updated_at = ?, password_read = ?
		WHERE tenant_id = ? AND sha256 = ? AND status = 'failed'
		AND (substr(error, 1, ?) = ? OR substr(error, 1, ?) = ?)`, micros(now()), true, tenantID, sha,
		len(kindex.ReasonEncrypted), kindex.ReasonEncrypted, len(kindex.ReasonWrongPassword), kindex.ReasonWrongPassword)
	if err != nil {
		return false, fmt.Errorf("store: claim encrypted content: %w", err)
	}
	n, _ := res.RowsAffected()
	return n == 1, nil
}
