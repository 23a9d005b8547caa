package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/agenthost/agenthost/host/knowledge/kindex"
	"github.com/agenthost/agenthost/host/tenancy"
	"github.com/agenthost/agenthost/pdk/content"
)

// ContentChunks returns the stored chunks of a file's content in reading
// order (page, then sequence), for a principal who can read the file,
// filtered by pages, section and types. It is how the knowledge store's
// cached content is read back; a file locked by its password has none.
func (db *DB) ContentChunks(ctx context.Context, p tenancy.Principal, fileID string, flt kindex.ChunkFilter) ([]kindex.Chunk, error) {
	q, args := scope(p, false, "f", "shared")
	return db.contentChunks(ctx, `FROM files f JOIN chunks c ON c.tenant_id = f.tenant_id AND c.sha256 = f.sha256`,
		[]string{"f.id = ?", q, passwordOpen("f")}, append([]any{fileID}, args...), flt)
}

// ContentChunksOf returns a content's stored chunks by its sha256 in a
// tenant, like ContentChunks (administrative: the caller checked access on
// a file that reaches the content, e.g. the container an entry is in).
func (db *DB) ContentChunksOf(ctx context.Context, tenantID, sha string, flt kindex.ChunkFilter) ([]kindex.Chunk, error) {
	return db.contentChunks(ctx, `FROM chunks c`, []string{"c.tenant_id = ?", "c.sha256 = ?"}, []any{tenantID, sha}, flt)
}

// ContentStateOf reads a content's status and index by its sha256 in a
// tenant (administrative, as ContentChunksOf; the index's file name is
// left empty, a content has none of its own); tenancy.ErrNotFound when
// there is none.
func (db *DB) ContentStateOf(ctx context.Context, tenantID, sha string) (kindex.ContentState, error) {
	var st kindex.ContentState
	var status, structure, objects, extractor string
	err := db.conn().queryRow(ctx, `SELECT status, error, mime_type, total_objects, total_size, structure, objects, extractor, note
		FROM content_indexes WHERE tenant_id = ? AND sha256 = ?`, tenantID, sha).
		Scan(&status, &st.Error, &st.Index.MIMEType, &st.Index.TotalObjects, &st.Index.TotalSize, &structure, &objects, &extractor, &st.Note)
	if errors.Is(err, sql.ErrNoRows) {
		return kindex.ContentState{}, fmt.Errorf("%w: no content %s", tenancy.ErrNotFound, sha)
	}
	if err != nil {
		return kindex.ContentState{}, fmt.Errorf("store: content state: %w", err)
	}
	st.Status = kindex.Status(status)
	if st.Extractor, err = extractorRecord(extractor); err != nil {
		return kindex.ContentState{}, err
	}
	if err := json.Unmarshal([]byte(structure), &st.Index.Structure); err != nil {
		return kindex.ContentState{}, fmt.Errorf("store: content structure: %w", err)
	}
	if err := json.Unmarshal([]byte(objects), &st.Index.Objects); err != nil {
		return kindex.ContentState{}, fmt.Errorf("store: content objects: %w", err)
	}
	return st, nil
}

// contentChunks reads chunks c from (which joins c to whatever the where
// clause checks) in reading order, with flt's filters added.
func (db *DB) contentChunks(ctx context.Context, from string, where []string, args []any, flt kindex.ChunkFilter) ([]kindex.Chunk, error) {
	where = slices.Clone(where)
	if len(flt.Pages) > 0 {
		where = append(where, "c.page IN ("+placeholders(len(flt.Pages))+")")
		for _, pg := range flt.Pages {
			args = append(args, pg)
		}
	}
	if flt.Section != "" {
		// The section and the sections numbered below it; LIKE's wildcards
		// in the id are escaped so "2_1" matches itself only.
		esc := strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(flt.Section)
		where = append(where, `(c.section = ? OR c.section LIKE ? ESCAPE '\')`)
		args = append(args, flt.Section, esc+".%")
	}
	if len(flt.Types) > 0 {
		where = append(where, "c.content_type IN ("+placeholders(len(flt.Types))+")")
		for _, t := range flt.Types {
			args = append(args, string(t))
		}
	}
	rows, err := db.conn().query(ctx, `SELECT c.id, c.seq, c.object_id, c.content_type, c.text, c.ref, c.tokens
		`+from+` WHERE `+strings.Join(where, " AND ")+` ORDER BY c.page, c.seq`, args...)
	if err != nil {
		return nil, fmt.Errorf("store: content chunks: %w", err)
	}
	defer rows.Close()
	out := []kindex.Chunk{}
	for rows.Next() {
		var ch kindex.Chunk
		var ct, ref string
		if err := rows.Scan(&ch.ID, &ch.Seq, &ch.ObjectID, &ct, &ch.Text, &ref, &ch.Tokens); err != nil {
			return nil, fmt.Errorf("store: content chunks: %w", err)
		}
		ch.ContentType = content.Type(ct)
		if err := json.Unmarshal([]byte(ref), &ch.Ref); err != nil {
			return nil, fmt.Errorf("store: chunk reference: %w", err)
		}
		ch.ID = ownChunkID(ch.ID)
		out = append(out, ch)
	}
	return out, rows.Err()
}

// AddContentPages records pages of an on-demand content as extracted: in
// one transaction it adds their chunks to the lexical index (a chunk
// already stored is kept, so two hosts that extracted the same page store
// it once), appends their object summaries to the index and merges the
// pages into structure["extractedPages"]. The content row is locked for the
// merge, so concurrent additions never lose each other's pages.
func (db *DB) AddContentPages(ctx context.Context, tenantID, sha string, pages []int, summaries []content.Summary, chunks []kindex.Chunk) error {
	return db.addPages(ctx, tenantID, sha, pages, summaries, chunks, func(st map[string]any) {
		done := kindex.ExtractedPages(content.Index{Structure: st})
		done = append(done, pages...)
		slices.Sort(done)
		st[kindex.StructExtractedPages] = slices.Compact(done)
	})
}

// AddOCRPages records pages (of a PDF; page 1 of an image file) as read by
// OCR, like AddContentPages: their chunks join the lexical index, their
// summaries the index, the pages structure["ocrPages"], and the page map
// says "ocr" for them where it said "imageOnly" (unreadPages drops them),
// all in one transaction on the locked content row.
func (db *DB) AddOCRPages(ctx context.Context, tenantID, sha string, pages []int, summaries []content.Summary, chunks []kindex.Chunk) error {
	return db.addPages(ctx, tenantID, sha, pages, summaries, chunks, func(st map[string]any) {
		kindex.MarkOCRPages(st, pages)
	})
}

// SetContentOCR records how far OCR of a content is (structure["ocr"]),
// keeping the rest of its structure.
func (db *DB) SetContentOCR(ctx context.Context, tenantID, sha string, state kindex.OCRState) error {
	return db.addPages(ctx, tenantID, sha, nil, nil, nil, func(st map[string]any) {
		st[kindex.StructOCR] = state
	})
}

// addPages is AddContentPages with the structure's update given.
func (db *DB) addPages(ctx context.Context, tenantID, sha string, pages []int, summaries []content.Summary, chunks []kindex.Chunk, update func(st map[string]any)) error {
	return db.tx(ctx, func(c conn) error {
		lock := ""
		if db.dialect == Postgres {
			lock = " FOR UPDATE"
		}
		var structure, objects string
		err := c.queryRow(ctx, `SELECT structure, objects FROM content_indexes WHERE tenant_id = ? AND sha256 = ?`+lock, tenantID, sha).Scan(&structure, &objects)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("%w: no content %s", tenancy.ErrNotFound, sha)
		}
		if err != nil {
			return fmt.Errorf("store: content pages: %w", err)
		}
		st := map[string]any{}
		if err := json.Unmarshal([]byte(structure), &st); err != nil {
			return fmt.Errorf("store: content structure: %w", err)
		}
		var sums []content.Summary
		if err := json.Unmarshal([]byte(objects), &sums); err != nil {
			return fmt.Errorf("store: content objects: %w", err)
		}
		update(st)
		have := make(map[string]bool, len(sums))
		for _, s := range sums {
			have[s.ID] = true
		}
		for _, s := range summaries {
			if !have[s.ID] {
				have[s.ID] = true
				sums = append(sums, s)
			}
		}
		rawSt, err := json.Marshal(st)
		if err != nil {
			return fmt.Errorf("store: content structure: %w", err)
		}
		rawObj, err := json.Marshal(sums)
		if err != nil {
			return fmt.Errorf("store: content objects: %w", err)
		}
		if _, err := c.exec(ctx, `UPDATE content_indexes SET structure = ?, objects = ?, total_objects = ?, updated_at = ? WHERE tenant_id = ? AND sha256 = ?`,
			string(rawSt), string(rawObj), len(sums), micros(now()), tenantID, sha); err != nil {
			return fmt.Errorf("store: content pages: %w", err)
		}
		for _, ch := range chunks {
			if err := insertChunk(ctx, c, db.analyzer, tenantID, sha, ch, "ON CONFLICT (id) DO NOTHING"); err != nil {
				return err
			}
		}
		return nil
	})
}
