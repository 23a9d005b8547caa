package store

import (
	"context"
	"fmt"
	"time"
)

// TenantStorage is what one tenant's rows keep stored. A blob shared by
// several tenants counts for each of them.
type TenantStorage struct {
	TenantID, Name string
	// Blobs and Bytes: distinct contents the tenant's files, versions,
	// proposals, trash and archive members refer to.
	Blobs, Bytes int64
	// Files and FileBytes: current files and their distinct contents.
	Files, FileBytes int64
	// Trashed and TrashBytes: deleted files in the trash.
	Trashed, TrashBytes int64
}

// StorageReport is what `agenthost admin storage` shows.
type StorageReport struct {
	// Blobs and Bytes: rows of the blobs table.
	Blobs, Bytes int64
	Tenants      []TenantStorage
	// Unreferenced and UnreferencedBytes: blob rows no row refers to,
	// written before the grace cutoff (the next sweep deletes them).
	Unreferenced, UnreferencedBytes int64
	// ExpiredVersions and ExpiredTrash: rows past their retention (the next
	// sweep deletes them; their bytes go a grace period later if nothing
	// else refers to them).
	ExpiredVersions, ExpiredTrash int64
	// Holds lists the reasons of storage holds in force.
	Holds []string
}

// StorageReport measures what is held and what a sweep at now with r and
// the grace cutoff writtenBefore would reclaim.
func (db *DB) StorageReport(ctx context.Context, r Retention, at, writtenBefore time.Time) (StorageReport, error) {
	c := db.conn()
	var out StorageReport
	if err := c.queryRow(ctx, `SELECT COUNT(*), COALESCE(SUM(size), 0) FROM blobs`).Scan(&out.Blobs, &out.Bytes); err != nil {
		return out, fmt.Errorf("store: storage report: %w", err)
	}
	if err := c.queryRow(ctx, `SELECT COUNT(*), COALESCE(SUM(b.size), 0) FROM blobs b WHERE b.written_at < ? AND `+blobUnreferenced,
		micros(writtenBefore)).Scan(&out.Unreferenced, &out.UnreferencedBytes); err != nil {
		return out, fmt.Errorf("store: storage report: %w", err)
	}
	if r.Versions > 0 {
		if err := c.queryRow(ctx, `SELECT COUNT(*) FROM file_versions v WHERE `+supersededBefore("v"),
			micros(at.Add(-r.Versions))).Scan(&out.ExpiredVersions); err != nil {
			return out, fmt.Errorf("store: storage report: %w", err)
		}
	}
	if r.Trash >= 0 {
		before := micros(at.Add(-r.Trash))
		if r.Trash == 0 {
			before = micros(at) + 1
		}
		if err := c.queryRow(ctx, `SELECT COUNT(*) FROM file_trash WHERE deleted_at < ?`, before).Scan(&out.ExpiredTrash); err != nil {
			return out, fmt.Errorf("store: storage report: %w", err)
		}
	}
	tenants, err := queryAll(ctx, c, "storage by tenant", func(row interface{ Scan(...any) error }) (TenantStorage, error) {
		var t TenantStorage
		return t, row.Scan(&t.TenantID, &t.Name, &t.Blobs, &t.Bytes, &t.Files, &t.FileBytes, &t.Trashed, &t.TrashBytes)
	}, `WITH held AS (
			SELECT tenant_id, sha256 FROM files
			UNION SELECT f.tenant_id, v.sha256 FROM file_versions v JOIN files f ON f.id = v.file_id
			UNION SELECT tenant_id, sha256 FROM file_proposals
			UNION SELECT tenant_id, sha256 FROM file_trash
			UNION SELECT tenant_id, sha256 FROM container_entries WHERE sha256 <> ''),
		held_sum AS (SELECT h.tenant_id, COUNT(*) AS n, COALESCE(SUM(b.size), 0) AS bytes
			FROM held h JOIN blobs b ON b.sha256 = h.sha256 GROUP BY h.tenant_id),
		file_sum AS (SELECT tenant_id, COUNT(*) AS n FROM files GROUP BY tenant_id),
		file_bytes AS (SELECT d.tenant_id, COALESCE(SUM(d.size), 0) AS bytes
			FROM (SELECT DISTINCT tenant_id, sha256, size FROM files) d GROUP BY d.tenant_id),
		trash_sum AS (SELECT tenant_id, COUNT(*) AS n, COALESCE(SUM(size), 0) AS bytes FROM file_trash GROUP BY tenant_id)
		SELECT t.id, t.name, COALESCE(h.n, 0), COALESCE(h.bytes, 0), COALESCE(fs.n, 0), COALESCE(fb.bytes, 0),
			COALESCE(ts.n, 0), COALESCE(ts.bytes, 0)
		FROM tenants t
		LEFT JOIN held_sum h ON h.tenant_id = t.id
		LEFT JOIN file_sum fs ON fs.tenant_id = t.id
		LEFT JOIN file_bytes fb ON fb.tenant_id = t.id
		LEFT JOIN trash_sum ts ON ts.tenant_id = t.id
		ORDER BY COALESCE(h.bytes, 0) DESC, t.id`)
	if err != nil {
		return out, err
	}
	out.Tenants = tenants
	holds, err := queryAll(ctx, c, "storage holds", func(row interface{ Scan(...any) error }) (string, error) {
		var s string
		return s, row.Scan(&s)
	}, `SELECT reason FROM storage_holds WHERE expires_at > ? ORDER BY created_at`, micros(now()))
	if err != nil {
		return out, err
	}
	out.Holds = holds
	return out, nil
}
