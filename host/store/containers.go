package store

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/agenthost/agenthost/host/knowledge/kindex"
	"github.com/agenthost/agenthost/host/tenancy"
)

// entryBatch is how many entries one INSERT carries (10 values each, well
// under both databases' parameter limits).
const entryBatch = 200

// SaveContainerEntries replaces a container content's entries, named by
// their paths inside the container (without the container's own name, which
// is the name of each file carrying the bytes) (its
// content_indexes row must exist: ClaimContent made it), in one
// transaction, in the order given.
func (db *DB) SaveContainerEntries(ctx context.Context, tenantID, containerSHA string, entries []kindex.ContainerEntry) error {
	return db.tx(ctx, func(c conn) error {
		if _, err := c.exec(ctx, `DELETE FROM container_entries WHERE tenant_id = ? AND container_sha256 = ?`, tenantID, containerSHA); err != nil {
			return fmt.Errorf("store: replace container entries: %w", err)
		}
		for start := 0; start < len(entries); start += entryBatch {
			batch := entries[start:min(len(entries), start+entryBatch)]
			rows := make([]string, len(batch))
			args := make([]any, 0, len(batch)*10)
			for i, e := range batch {
				rows[i] = "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
				args = append(args, entryArgs(tenantID, containerSHA, start+i, e)...)
			}
			if _, err := c.exec(ctx, `INSERT INTO container_entries (tenant_id, container_sha256, seq, path, sha256, size, mime_type, container, error_kind, error)
				VALUES `+strings.Join(rows, ", "), args...); err != nil {
				return fmt.Errorf("store: container entries: %w", err)
			}
		}
		return nil
	})
}

func entryArgs(tenantID, containerSHA string, seq int, e kindex.ContainerEntry) []any {
	container := 0
	if e.Container {
		container = 1
	}
	return []any{tenantID, containerSHA, seq, e.Path, e.SHA256, e.Size, e.MIMEType, container, e.ErrorKind, e.Error}
}

// PutContainerEntry replaces the first entry of e's path in a container
// content, or appends it: what an on-demand extraction of one entry learned.
func (db *DB) PutContainerEntry(ctx context.Context, tenantID, containerSHA string, e kindex.ContainerEntry) error {
	if e.Path == "" {
		return fmt.Errorf("%w: a container entry needs a path", tenancy.ErrInvalid)
	}
	return db.tx(ctx, func(c conn) error {
		var seq int
		err := c.queryRow(ctx, `SELECT COALESCE(MIN(seq), -1) FROM container_entries WHERE tenant_id = ? AND container_sha256 = ? AND path = ?`,
			tenantID, containerSHA, e.Path).Scan(&seq)
		if err != nil {
			return fmt.Errorf("store: container entry: %w", err)
		}
		if seq >= 0 {
			if _, err := c.exec(ctx, `DELETE FROM container_entries WHERE tenant_id = ? AND container_sha256 = ? AND seq = ?`, tenantID, containerSHA, seq); err != nil {
				return fmt.Errorf("store: container entry: %w", err)
			}
		} else if err := c.queryRow(ctx, `SELECT COALESCE(MAX(seq), -1) + 1 FROM container_entries WHERE tenant_id = ? AND container_sha256 = ?`,
			tenantID, containerSHA).Scan(&seq); err != nil {
			return fmt.Errorf("store: container entry: %w", err)
		}
		if _, err := c.exec(ctx, `INSERT INTO container_entries (tenant_id, container_sha256, seq, path, sha256, size, mime_type, container, error_kind, error)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, entryArgs(tenantID, containerSHA, seq, e)...); err != nil {
			return fmt.Errorf("store: container entry: %w", err)
		}
		return nil
	})
}

// entrySelect reads entries with their status: a refused entry's own
// (failed, with its reason), a nested container's (indexed), else the
// status and reason of the inner content its bytes are (pending until its
// row exists).
const entrySelect = `SELECT e.path, e.size, e.mime_type, e.sha256, e.container, e.error_kind,
		CASE WHEN e.error <> '' THEN 'failed' WHEN e.container = 1 THEN 'indexed' ELSE COALESCE(ci.status, 'pending') END,
		CASE WHEN e.error <> '' THEN e.error ELSE COALESCE(ci.error, '') END
	FROM container_entries e
	LEFT JOIN content_indexes ci ON ci.tenant_id = e.tenant_id AND ci.sha256 = e.sha256 AND e.sha256 <> ''`

func (db *DB) scanEntries(ctx context.Context, q string, args ...any) ([]kindex.ContainerEntry, error) {
	rows, err := db.conn().query(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("store: container entries: %w", err)
	}
	defer rows.Close()
	out := []kindex.ContainerEntry{}
	for rows.Next() {
		var e kindex.ContainerEntry
		var container int
		if err := rows.Scan(&e.Path, &e.Size, &e.MIMEType, &e.SHA256, &container, &e.ErrorKind, &e.Status, &e.Error); err != nil {
			return nil, fmt.Errorf("store: container entries: %w", err)
		}
		e.Container = container == 1
		out = append(out, e)
	}
	return out, rows.Err()
}

// ContainerEntriesForIndexing lists a container content's entries in their
// order, for background work (administrative: no principal). Their paths
// are inside the container ("docs/b.tar/report.pdf"): the same bytes may be
// files of several names.
func (db *DB) ContainerEntriesForIndexing(ctx context.Context, tenantID, containerSHA string) ([]kindex.ContainerEntry, error) {
	return db.scanEntries(ctx, entrySelect+` WHERE e.tenant_id = ? AND e.container_sha256 = ? ORDER BY e.seq`, tenantID, containerSHA)
}

// ContainerEntries lists the entries of a container file, for a principal
// who can read the file (tenancy.ErrNotFound otherwise), each by its full
// container path, which starts with the file's name; a file that is not a
// container, not resolved yet, or locked by its password, has none.
func (db *DB) ContainerEntries(ctx context.Context, p tenancy.Principal, fileID string) ([]kindex.ContainerEntry, error) {
	f, err := db.File(ctx, p, fileID)
	if err != nil {
		return nil, err
	}
	// A container locked by its password shows none of its entries
	// (password_locks.go): their names are its content too.
	if locked, err := db.PasswordLocked(ctx, f.ID); err != nil || locked {
		return nil, err
	}
	entries, err := db.ContainerEntriesForIndexing(ctx, f.TenantID, f.SHA256)
	for i := range entries {
		entries[i].Path = f.Name + "/" + entries[i].Path
	}
	return entries, err
}

// containerCarrier joins chunks c to the files f that carry them inside a
// container (an entry of a container whose bytes the file is), giving the
// entry's full path as the file's name, "/", ce.path; the direct carrier is JOIN files f ON f.sha256
// = c.sha256. Search runs once through each, so reading an archive is what
// lets a user find the text of the files inside it.
const containerCarrier = `JOIN container_entries ce ON ce.tenant_id = c.tenant_id AND ce.sha256 = c.sha256 AND ce.error = ''
	JOIN files f ON f.tenant_id = ce.tenant_id AND f.sha256 = ce.container_sha256`

// searchContainerVectors is the exact vector search over the chunks that
// readable files carry inside containers (the direct carriers are searched
// by searchHNSW or searchExact): every candidate vector is compared, which
// is cheap because only inner files' chunks of the caller's archives are.
// A hit names the archive and the entry's container path.
func (db *DB) searchContainerVectors(ctx context.Context, where []string, args []any, model string, vec []float32, limit int) ([]kindex.Hit, error) {
	where = append(slices.Clone(where), "v.model = ?", "v.dim = ?")
	args = append(slices.Clone(args), model, len(vec))
	rows, err := db.conn().query(ctx, `SELECT `+hitCols+`, f.name || '/' || ce.path, v.vec
		FROM chunk_vectors v JOIN chunks c ON c.id = v.chunk_id `+containerCarrier+`
		WHERE `+strings.Join(where, " AND "), args...)
	if err != nil {
		return nil, fmt.Errorf("store: vector search in containers: %w", err)
	}
	defer rows.Close()
	best := map[string]kindex.Hit{}
	for rows.Next() {
		var raw []byte
		var inner string
		h, err := scanHit(rows, &inner, &raw)
		if err != nil {
			return nil, err
		}
		if _, ok := best[h.ID]; ok {
			continue
		}
		h.Ref.ContainerPath = inner
		h.Score = kindex.Cosine(vec, kindex.DecodeVector(raw))
		best[h.ID] = h
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: vector search in containers: %w", err)
	}
	return rankHits(best, limit), nil
}

// mergeHits merges two ranked lists, best first. Their ids are a content's
// own (two contents may share one), so a hit is the same only with the same
// file, container path and id.
func mergeHits(a, b []kindex.Hit, limit int) []kindex.Hit {
	best := map[string]kindex.Hit{}
	for _, h := range append(slices.Clone(a), b...) {
		key := h.FileID + "\x00" + h.Ref.ContainerPath + "\x00" + h.ID
		if o, ok := best[key]; !ok || h.Score > o.Score {
			best[key] = h
		}
	}
	out := make([]kindex.Hit, 0, len(best))
	for _, h := range best {
		out = append(out, h)
	}
	slices.SortFunc(out, func(x, y kindex.Hit) int {
		return cmp.Or(cmp.Compare(y.Score, x.Score), cmp.Compare(x.ID, y.ID))
	})
	return out[:min(limit, len(out))]
}
