package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/agenthost/agenthost/host/tenancy"
)

// This file is the store's side of giving space back (package sweep): the
// rows that keep a blob alive, retention of old versions and of the trash,
// holds that stop sweeping while a backup copies blobs, and the one
// transaction in which a blob's row is deleted only if nothing refers to it.
//
// A blob is referred to by content (sha256) from files, file_versions,
// file_proposals (any status), file_trash, and container_entries whose
// container is itself referred to. Blobs are shared across files and
// tenants, so the question is asked of the whole database at sweep time,
// never kept as a counter that could drift.
//
// blobs.written_at is the last time the blob was stored or a row started or
// stopped referring to it. The sweeper leaves alone every blob written within
// its grace period, which covers an upload whose bytes are stored but whose
// row is not committed yet, and a reader (a version restore, a download)
// that read a row just before retention deleted it.

// referBlob records that a row of this transaction refers to the blob: its
// row is created (the directory backend has none until then) or its
// written_at renewed, which restarts the sweeper's grace period.
func referBlob(ctx context.Context, c conn, sha string, size int64) error {
	t := micros(now())
	if _, err := c.exec(ctx, `INSERT INTO blobs (sha256, size, created_at, written_at) VALUES (?, ?, ?, ?)
		ON CONFLICT (sha256) DO UPDATE SET written_at = excluded.written_at`, sha, size, t, t); err != nil {
		return fmt.Errorf("store: blob row: %w", err)
	}
	return nil
}

// touchBlobs renews written_at of the blobs named by the sha256 column of
// the rows query selects (args are its arguments); it is called before rows
// that refer to blobs are deleted.
func touchBlobs(ctx context.Context, c conn, query string, args ...any) error {
	_, err := c.exec(ctx, `UPDATE blobs SET written_at = ? WHERE sha256 IN (`+query+`)`, append([]any{micros(now())}, args...)...)
	if err != nil {
		return fmt.Errorf("store: renew blobs: %w", err)
	}
	return nil
}

// trashFile moves a file the caller has authorised to the trash: its row
// (with its versions, tags and proposals) goes, and a file_trash row keeps
// its content's blob for the trash retention.
func trashFile(ctx context.Context, c conn, p tenancy.Principal, id string) error {
	if _, err := c.exec(ctx, `INSERT INTO file_trash (file_id, tenant_id, workspace_id, name, mime_type, sha256, size, deleted_by, deleted_at)
		SELECT id, tenant_id, workspace_id, name, mime_type, sha256, size, ?, ? FROM files WHERE id = ?
		ON CONFLICT (file_id) DO NOTHING`, p.UserID, micros(now()), id); err != nil {
		return fmt.Errorf("store: trash file: %w", err)
	}
	// Its older versions and proposals stop referring to their blobs now.
	if err := touchBlobs(ctx, c, `SELECT sha256 FROM file_versions WHERE file_id = ? UNION SELECT sha256 FROM file_proposals WHERE file_id = ?`, id, id); err != nil {
		return err
	}
	if _, err := c.exec(ctx, `DELETE FROM files WHERE id = ?`, id); err != nil {
		return fmt.Errorf("store: delete file: %w", err)
	}
	return nil
}

// referencedBy is the condition "a row refers to the blob whose sha256 is
// col", other than through an archive.
func referencedBy(col string) string {
	return `(EXISTS (SELECT 1 FROM files r WHERE r.sha256 = ` + col + `)
		OR EXISTS (SELECT 1 FROM file_versions r WHERE r.sha256 = ` + col + `)
		OR EXISTS (SELECT 1 FROM file_proposals r WHERE r.sha256 = ` + col + `)
		OR EXISTS (SELECT 1 FROM file_trash r WHERE r.sha256 = ` + col + `))`
}

// unreferencedBy is the negation of referencedBy, written as NOT EXISTS
// joined by AND so that PostgreSQL plans each as an anti-join (OR-ed EXISTS
// are correlated subplans, run row by row: seconds per page of candidates
// when the tables' statistics are stale, as after a mass deletion).
func unreferencedBy(col string) string {
	return `(NOT EXISTS (SELECT 1 FROM files r WHERE r.sha256 = ` + col + `)
		AND NOT EXISTS (SELECT 1 FROM file_versions r WHERE r.sha256 = ` + col + `)
		AND NOT EXISTS (SELECT 1 FROM file_proposals r WHERE r.sha256 = ` + col + `)
		AND NOT EXISTS (SELECT 1 FROM file_trash r WHERE r.sha256 = ` + col + `))`
}

// blobUnreferenced is the condition "no row refers to blob b": not
// directly, and not as a member of an archive that is referred to. Every
// member of an archive, nested archives' members included, is recorded
// under the outermost archive's content, so one level of indirection covers
// every depth. blobReferenced is its negation.
var (
	blobUnreferenced = `(` + unreferencedBy("b.sha256") + `
	AND NOT EXISTS (SELECT 1 FROM container_entries e WHERE e.sha256 = b.sha256 AND ` + referencedBy("e.container_sha256") + `))`
	blobReferenced = `NOT ` + blobUnreferenced
)

// Retention says how long rows that keep blobs alive are kept after they
// stopped being current.
type Retention struct {
	// Versions: a version that stopped being its file's current one
	// longer ago than this is deleted, as is a proposal decided (accepted
	// or rejected) longer ago. Zero or negative keeps them forever.
	Versions time.Duration
	// Trash: a deleted file stays in the trash (its bytes kept) this long;
	// zero empties it at every sweep; negative keeps it forever.
	Trash time.Duration
}

// Purged counts what PurgeExpired deleted.
type Purged struct {
	Versions, Proposals, Trash int64
}

// PurgeExpired deletes the versions, decided proposals and trash entries
// past their retention at now. The blobs they referred to are renewed, so
// they outlive the rows by at least the sweeper's grace period.
func (db *DB) PurgeExpired(ctx context.Context, r Retention, at time.Time) (Purged, error) {
	var out Purged
	err := db.tx(ctx, func(c conn) error {
		if r.Versions > 0 {
			before := micros(at.Add(-r.Versions))
			old := `SELECT v.sha256 FROM file_versions v WHERE ` + supersededBefore("v")
			if err := touchBlobs(ctx, c, old, before); err != nil {
				return err
			}
			n, err := execCount(ctx, c, `DELETE FROM file_versions WHERE `+supersededBefore("file_versions"), before)
			if err != nil {
				return fmt.Errorf("store: purge versions: %w", err)
			}
			out.Versions = n
			decided := `SELECT sha256 FROM file_proposals WHERE status <> 'pending' AND decided_at < ?`
			if err := touchBlobs(ctx, c, decided, before); err != nil {
				return err
			}
			if out.Proposals, err = execCount(ctx, c, `DELETE FROM file_proposals WHERE status <> 'pending' AND decided_at < ?`, before); err != nil {
				return fmt.Errorf("store: purge proposals: %w", err)
			}
		}
		if r.Trash >= 0 {
			before := micros(at.Add(-r.Trash))
			if r.Trash == 0 {
				before = micros(at) + 1 // everything in the trash now
			}
			if err := touchBlobs(ctx, c, `SELECT sha256 FROM file_trash WHERE deleted_at < ?`, before); err != nil {
				return err
			}
			n, err := execCount(ctx, c, `DELETE FROM file_trash WHERE deleted_at < ?`, before)
			if err != nil {
				return fmt.Errorf("store: purge trash: %w", err)
			}
			out.Trash = n
		}
		return nil
	})
	return out, err
}

// supersededBefore is the condition "version row v stopped being its
// file's current content (its successor was made) before ?": retention
// counts from then, not from when the version itself was made.
func supersededBefore(v string) string {
	return `EXISTS (SELECT 1 FROM file_versions n WHERE n.file_id = ` + v + `.file_id AND n.version = ` + v + `.version + 1 AND n.created_at < ?)`
}

func execCount(ctx context.Context, c conn, query string, args ...any) (int64, error) {
	res, err := c.exec(ctx, query, args...)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

// StoredBlob is one row of the blobs table.
type StoredBlob struct {
	SHA256    string
	Size      int64
	WrittenAt time.Time
}

// UnreferencedBlobs lists, in sha order after the sha after, up to limit
// blobs written before writtenBefore that no row refers to: the sweeper's
// candidates (each is checked again when it is deleted).
func (db *DB) UnreferencedBlobs(ctx context.Context, after string, writtenBefore time.Time, limit int) ([]StoredBlob, error) {
	return queryAll(ctx, db.conn(), "unreferenced blobs", scanStoredBlob,
		`SELECT b.sha256, b.size, b.written_at FROM blobs b WHERE b.sha256 > ? AND b.written_at < ? AND `+blobUnreferenced+`
		ORDER BY b.sha256 LIMIT ?`, after, micros(writtenBefore), limit)
}

func scanStoredBlob(row interface{ Scan(...any) error }) (StoredBlob, error) {
	var b StoredBlob
	var w int64
	if err := row.Scan(&b.SHA256, &b.Size, &w); err != nil {
		return StoredBlob{}, err
	}
	b.WrittenAt = fromMicros(w)
	return b, nil
}

// ErrHeld is returned (wrapped, with the holds' reasons) by ReclaimTx while
// a storage hold is in force.
var ErrHeld = errors.New("store: sweeping is held")

// Reclaim is the transaction in which the sweeper deletes blob rows. On
// SQLite it holds the database's write lock, so no reference can be
// committed beside it; on PostgreSQL it holds the lock of every blob row it
// deleted, so a transaction that starts referring to one of them waits for
// it and, should it still commit a reference, the foreign key makes the
// delete fail instead (the row is then kept).
type Reclaim struct {
	c  conn
	sp int
}

// ReclaimTx runs fn in one transaction that first checks that no storage
// hold is in force (ErrHeld otherwise). fn's deletions are committed when it
// returns nil; a blob's bytes (in a directory) must be deleted only after
// that, and put back if ReclaimTx fails.
func (db *DB) ReclaimTx(ctx context.Context, fn func(r *Reclaim) error) error {
	return db.tx(ctx, func(c conn) error {
		reasons, err := queryAll(ctx, c, "storage holds", func(row interface{ Scan(...any) error }) (string, error) {
			var s string
			return s, row.Scan(&s)
		}, `SELECT reason FROM storage_holds WHERE expires_at > ? ORDER BY created_at`, micros(now()))
		if err != nil {
			return err
		}
		if len(reasons) > 0 {
			return fmt.Errorf("%w: %s", ErrHeld, strings.Join(reasons, "; "))
		}
		return fn(&Reclaim{c: c})
	})
}

// DeleteBlobs deletes the rows of those of shas that were written before
// writtenBefore and that no row refers to, together with their content
// indexes (which nothing could reach without a file); on PostgreSQL the blob
// backend's chunks go with the rows. It returns the shas it deleted; a blob
// that gained a reference meanwhile is kept.
func (r *Reclaim) DeleteBlobs(ctx context.Context, shas []string, writtenBefore time.Time) (map[string]bool, error) {
	if len(shas) == 0 {
		return map[string]bool{}, nil
	}
	deleted, err := r.deleteBlobs(ctx, shas, writtenBefore)
	if isForeignKey(err) {
		// On PostgreSQL a transaction that committed a reference while
		// the delete waited for its row lock fails the whole statement:
		// one row at a time finds which.
		deleted = map[string]bool{}
		for _, sha := range shas {
			d, err := r.deleteBlobs(ctx, []string{sha}, writtenBefore)
			if isForeignKey(err) {
				continue
			}
			if err != nil {
				return nil, err
			}
			for k := range d {
				deleted[k] = true
			}
		}
	} else if err != nil {
		return nil, err
	}
	if len(deleted) > 0 {
		args := make([]any, 0, len(deleted))
		for sha := range deleted {
			args = append(args, sha)
		}
		if _, err := r.c.exec(ctx, `DELETE FROM content_indexes WHERE sha256 IN (`+placeholders(len(args))+`)`, args...); err != nil {
			return nil, fmt.Errorf("store: drop content indexes: %w", err)
		}
	}
	return deleted, nil
}

// deleteBlobs is one DELETE of DeleteBlobs, inside a savepoint on
// PostgreSQL so that a foreign-key violation leaves the transaction usable.
// (On SQLite the write lock makes the violation impossible: no reference
// can be committed beside this transaction, and the statement's own
// condition covers every table with a foreign key to blobs.)
func (r *Reclaim) deleteBlobs(ctx context.Context, shas []string, writtenBefore time.Time) (map[string]bool, error) {
	sp := ""
	if r.c.dialect == Postgres {
		r.sp++
		sp = fmt.Sprintf("reclaim_%d", r.sp)
		if _, err := r.c.exec(ctx, `SAVEPOINT `+sp); err != nil {
			return nil, fmt.Errorf("store: reclaim: %w", err)
		}
	}
	args := make([]any, 0, len(shas)+1)
	for _, sha := range shas {
		args = append(args, sha)
	}
	args = append(args, micros(writtenBefore))
	out := map[string]bool{}
	err := func() error {
		rows, err := r.c.query(ctx, `DELETE FROM blobs WHERE sha256 IN (`+placeholders(len(shas))+`) AND written_at < ? AND `+
			strings.ReplaceAll(blobUnreferenced, "b.sha256", "blobs.sha256")+` RETURNING sha256`, args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var sha string
			if err := rows.Scan(&sha); err != nil {
				return err
			}
			out[sha] = true
		}
		return rows.Err()
	}()
	if err != nil {
		if sp != "" {
			if _, rerr := r.c.exec(ctx, `ROLLBACK TO SAVEPOINT `+sp); rerr != nil {
				return nil, fmt.Errorf("store: reclaim: %w (and rolling back: %w)", err, rerr)
			}
		}
		if isForeignKey(err) {
			return nil, err
		}
		return nil, fmt.Errorf("store: reclaim: %w", err)
	}
	if sp != "" {
		if _, err := r.c.exec(ctx, `RELEASE SAVEPOINT `+sp); err != nil {
			return nil, fmt.Errorf("store: reclaim: %w", err)
		}
	}
	return out, nil
}

// Unrecorded reports whether blob sha has no row and no row refers to it:
// bytes in a directory that no committed upload owns (one killed between
// storing its bytes and its row, an archive member whose archive is gone).
// If so, their content indexes are deleted too.
func (r *Reclaim) Unrecorded(ctx context.Context, sha string) (bool, error) {
	var one int
	err := r.c.queryRow(ctx, `SELECT 1 FROM (SELECT CAST(? AS TEXT) AS sha256) b WHERE EXISTS (SELECT 1 FROM blobs x WHERE x.sha256 = b.sha256) OR `+blobReferenced, sha).Scan(&one)
	if err == nil {
		return false, nil
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return false, fmt.Errorf("store: check blob %s: %w", sha, err)
	}
	return true, r.dropIndexes(ctx, sha)
}

// dropIndexes deletes every tenant's content index of sha (chunks,
// vectors and archive members go with it by cascade).
func (r *Reclaim) dropIndexes(ctx context.Context, sha string) error {
	if _, err := r.c.exec(ctx, `DELETE FROM content_indexes WHERE sha256 = ?`, sha); err != nil {
		return fmt.Errorf("store: drop indexes of %s: %w", sha, err)
	}
	return nil
}

// Hold stops every sweep until Release or expiry; reason says who holds
// (shown to the operator). It returns the hold's id.
func (db *DB) Hold(ctx context.Context, reason string, ttl time.Duration) (string, error) {
	id := newID()
	t := now()
	if _, err := db.conn().exec(ctx, `INSERT INTO storage_holds (id, reason, created_at, expires_at) VALUES (?, ?, ?, ?)`,
		id, reason, micros(t), micros(t.Add(ttl))); err != nil {
		return "", fmt.Errorf("store: hold storage: %w", err)
	}
	return id, nil
}

// RenewHold extends a hold to ttl from now.
func (db *DB) RenewHold(ctx context.Context, id string, ttl time.Duration) error {
	if _, err := db.conn().exec(ctx, `UPDATE storage_holds SET expires_at = ? WHERE id = ?`, micros(now().Add(ttl)), id); err != nil {
		return fmt.Errorf("store: renew storage hold: %w", err)
	}
	return nil
}

// Release ends a hold, and forgets expired ones.
func (db *DB) Release(ctx context.Context, id string) error {
	if _, err := db.conn().exec(ctx, `DELETE FROM storage_holds WHERE id = ? OR expires_at <= ?`, id, micros(now())); err != nil {
		return fmt.Errorf("store: release storage hold: %w", err)
	}
	return nil
}

// Unrecorded returns those of shas that have no blob row and that no row
// refers to (read-only; the sweeper asks again inside its transaction).
func (db *DB) Unrecorded(ctx context.Context, shas []string) ([]string, error) {
	if len(shas) == 0 {
		return nil, nil
	}
	args := make([]any, len(shas))
	for i, s := range shas {
		args[i] = s
	}
	known, err := queryAll(ctx, db.conn(), "recorded blobs", func(row interface{ Scan(...any) error }) (string, error) {
		var s string
		return s, row.Scan(&s)
	}, `SELECT b.sha256 FROM (SELECT sha256 FROM blobs WHERE sha256 IN (`+placeholders(len(shas))+`)) b
		UNION SELECT b.sha256 FROM (SELECT CAST(x.sha AS TEXT) AS sha256 FROM (`+valuesList(len(shas))+`) x) b WHERE `+blobReferenced,
		append(args, args...)...)
	if err != nil {
		return nil, err
	}
	have := make(map[string]bool, len(known))
	for _, s := range known {
		have[s] = true
	}
	var out []string
	for _, s := range shas {
		if !have[s] {
			out = append(out, s)
		}
	}
	return out, nil
}

// valuesList is a derived table of n placeholders in one column named sha.
func valuesList(n int) string {
	var b strings.Builder
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteString(" UNION ALL ")
		}
		b.WriteString("SELECT ? AS sha")
	}
	return b.String()
}

// DeleteWorkspace deletes a workspace and everything in it (files, folders,
// trash, conversations, memberships: the schema's cascades), administratively.
// Its blobs are renewed first, so they go at the first sweep a grace
// period later unless other rows still refer to them.
func (db *DB) DeleteWorkspace(ctx context.Context, id string) error {
	return db.tx(ctx, func(c conn) error {
		if err := touchBlobs(ctx, c, `SELECT sha256 FROM files WHERE workspace_id = ?
			UNION SELECT v.sha256 FROM file_versions v JOIN files f ON f.id = v.file_id WHERE f.workspace_id = ?
			UNION SELECT sha256 FROM file_proposals WHERE workspace_id = ?
			UNION SELECT sha256 FROM file_trash WHERE workspace_id = ?`, id, id, id, id); err != nil {
			return err
		}
		n, err := execCount(ctx, c, `DELETE FROM workspaces WHERE id = ?`, id)
		if err != nil {
			return fmt.Errorf("store: delete workspace: %w", err)
		}
		if n == 0 {
			return fmt.Errorf("%w: workspace %q", tenancy.ErrNotFound, id)
		}
		return nil
	})
}
