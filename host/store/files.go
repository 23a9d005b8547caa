package store

import (
	"context"
	"database/sql"
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/agenthost/agenthost/host/files/filemeta"
	"github.com/agenthost/agenthost/host/tenancy"
)

const fileCols = `f.id, f.tenant_id, f.workspace_id, f.created_by, f.name, f.mime_type, f.sha256, f.size, f.version,
	f.folder_id, f.description, f.status, f.shared, f.created_at, f.updated_at`

func scanFile(row interface{ Scan(...any) error }) (filemeta.Item, error) {
	var f filemeta.Item
	var folder sql.NullString
	var status string
	var created, updated int64
	err := row.Scan(&f.ID, &f.TenantID, &f.WorkspaceID, &f.CreatedBy, &f.Name, &f.MIMEType, &f.SHA256, &f.Size, &f.Version,
		&folder, &f.Description, &status, &f.Shared, &created, &updated)
	f.FolderID, f.Status = folder.String, filemeta.Status(status)
	f.CreatedAt, f.UpdatedAt = fromMicros(created), fromMicros(updated)
	f.Tags = []string{}
	return f, err
}

// canWrite reports ErrNotFound when the principal cannot see the workspace
// and ErrForbidden when it may not write into it.
func canWrite(ctx context.Context, c conn, p tenancy.Principal, workspaceID string) error {
	_, write, err := workspaceLevels(ctx, c, p, workspaceID)
	if err == nil && write == tenancy.None {
		return fmt.Errorf("%w: no write access to workspace %q", tenancy.ErrForbidden, workspaceID)
	}
	return err
}

// authorize checks that the principal may change row id of table: it is
// ErrNotFound when the row is not readable and ErrForbidden when it is
// readable but not writable.
func authorize(ctx context.Context, c conn, p tenancy.Principal, table, sharedCol, id string) error {
	wq, wargs := scope(p, true, "t", "")
	var one int
	err := c.queryRow(ctx, `SELECT 1 FROM `+table+` t WHERE t.id = ? AND `+wq, append([]any{id}, wargs...)...).Scan(&one)
	if err == nil {
		return nil
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("store: authorize: %w", err)
	}
	rq, rargs := scope(p, false, "t", sharedCol)
	err = c.queryRow(ctx, `SELECT 1 FROM `+table+` t WHERE t.id = ? AND `+rq, append([]any{id}, rargs...)...).Scan(&one)
	if err == nil {
		return fmt.Errorf("%w: no write access to %s %q", tenancy.ErrForbidden, strings.TrimSuffix(table, "s"), id)
	}
	if errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("%w: %s %q", tenancy.ErrNotFound, strings.TrimSuffix(table, "s"), id)
	}
	return fmt.Errorf("store: authorize: %w", err)
}

// folderIn checks that a folder is readable by p and lies in the workspace.
func folderIn(ctx context.Context, c conn, p tenancy.Principal, folderID, workspaceID string) error {
	q, args := scope(p, false, "f", "")
	var ws string
	err := c.queryRow(ctx, `SELECT f.workspace_id FROM folders f WHERE f.id = ? AND `+q, append([]any{folderID}, args...)...).Scan(&ws)
	if errors.Is(err, sql.ErrNoRows) || (err == nil && ws != workspaceID) {
		return fmt.Errorf("%w: folder %q", tenancy.ErrNotFound, folderID)
	}
	return err
}

// InsertFile implements files.Store.
func (db *DB) InsertFile(ctx context.Context, p tenancy.Principal, f filemeta.Item, dedupe bool) (out filemeta.Item, existing bool, err error) {
	err = db.tx(ctx, func(c conn) error {
		if err := canWrite(ctx, c, p, f.WorkspaceID); err != nil {
			return err
		}
		if db.dialect == Postgres {
			// Serialises uploads of the same bytes and name into one workspace,
			// so concurrent duplicates find each other instead of both inserting.
			if _, err := c.exec(ctx, `SELECT pg_advisory_xact_lock(hashtextextended(?, 0))`, f.WorkspaceID+"/"+f.SHA256+"/"+f.Name); err != nil {
				return err
			}
		}
		if err := referBlob(ctx, c, f.SHA256, f.Size); err != nil {
			return err
		}
		if f.FolderID != "" {
			if err := folderIn(ctx, c, p, f.FolderID, f.WorkspaceID); err != nil {
				return err
			}
		}
		if dedupe {
			q, args := scope(p, false, "f", "shared")
			var id string
			err := c.queryRow(ctx, `SELECT f.id FROM files f WHERE f.workspace_id = ? AND f.sha256 = ? AND f.name = ?
				AND f.status <> 'archived' AND `+q+` ORDER BY f.created_at, f.id LIMIT 1`,
				append([]any{f.WorkspaceID, f.SHA256, f.Name}, args...)...).Scan(&id)
			if err == nil {
				existing = true
				out, err = fileByID(ctx, c, id)
				return err
			}
			if !errors.Is(err, sql.ErrNoRows) {
				return fmt.Errorf("store: duplicate check: %w", err)
			}
		}
		t := now()
		f.ID, f.TenantID, f.CreatedBy, f.CreatedAt, f.UpdatedAt = newID(), p.TenantID, p.UserID, t, t
		if f.Status == "" {
			f.Status = filemeta.StatusActive
		}
		_, err := c.exec(ctx, `INSERT INTO files (id, tenant_id, workspace_id, created_by, name, mime_type, sha256, size,
			folder_id, description, status, shared, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			f.ID, f.TenantID, f.WorkspaceID, f.CreatedBy, f.Name, f.MIMEType, f.SHA256, f.Size,
			nullString(f.FolderID), f.Description, string(f.Status), f.Shared, micros(f.CreatedAt), micros(f.UpdatedAt))
		if err != nil {
			return fmt.Errorf("store: insert file: %w", err)
		}
		if err := addTags(ctx, c, f.ID, f.Tags); err != nil {
			return err
		}
		f.Version = 1
		if _, err := c.exec(ctx, `INSERT INTO file_versions (file_id, version, sha256, size, created_by, created_at, note)
			VALUES (?, 1, ?, ?, ?, ?, 'upload')`, f.ID, f.SHA256, f.Size, f.CreatedBy, micros(f.CreatedAt)); err != nil {
			return fmt.Errorf("store: first version: %w", err)
		}
		if f.Tags == nil {
			f.Tags = []string{}
		}
		out = f
		return nil
	})
	return out, existing, err
}

func addTags(ctx context.Context, c conn, fileID string, tags []string) error {
	for _, t := range tags {
		if _, err := c.exec(ctx, `INSERT INTO file_tags (file_id, tag) VALUES (?, ?) ON CONFLICT DO NOTHING`, fileID, t); err != nil {
			return fmt.Errorf("store: tag: %w", err)
		}
	}
	return nil
}

// fileByID loads a file the caller has already authorised.
func fileByID(ctx context.Context, c conn, id string) (filemeta.Item, error) {
	f, err := scanFile(c.queryRow(ctx, `SELECT `+fileCols+` FROM files f WHERE f.id = ?`, id))
	if err != nil {
		return filemeta.Item{}, err
	}
	items := []filemeta.Item{f}
	if err := loadTags(ctx, c, items); err != nil {
		return filemeta.Item{}, err
	}
	return items[0], nil
}

// loadTags fills the tags of items with one query.
func loadTags(ctx context.Context, c conn, items []filemeta.Item) error {
	if len(items) == 0 {
		return nil
	}
	idx := make(map[string]int, len(items))
	args := make([]any, len(items))
	for i, f := range items {
		idx[f.ID] = i
		args[i] = f.ID
	}
	rows, err := c.query(ctx, `SELECT file_id, tag FROM file_tags WHERE file_id IN (`+placeholders(len(args))+`) ORDER BY tag`, args...)
	if err != nil {
		return fmt.Errorf("store: tags: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var id, tag string
		if err := rows.Scan(&id, &tag); err != nil {
			return err
		}
		items[idx[id]].Tags = append(items[idx[id]].Tags, tag)
	}
	return rows.Err()
}

// File implements files.Store.
func (db *DB) File(ctx context.Context, p tenancy.Principal, id string) (filemeta.Item, error) {
	c := db.conn()
	q, args := scope(p, false, "f", "shared")
	f, err := scanFile(c.queryRow(ctx, `SELECT `+fileCols+` FROM files f WHERE f.id = ? AND `+q, append([]any{id}, args...)...))
	if errors.Is(err, sql.ErrNoRows) {
		return filemeta.Item{}, fmt.Errorf("%w: file %q", tenancy.ErrNotFound, id)
	}
	if err != nil {
		return filemeta.Item{}, fmt.Errorf("store: file: %w", err)
	}
	items := []filemeta.Item{f}
	if err := loadTags(ctx, c, items); err != nil {
		return filemeta.Item{}, err
	}
	return items[0], nil
}

// Files implements files.Store: one page of a filtered listing, by keyset
// paging so deep pages cost what the first does.
func (db *DB) Files(ctx context.Context, p tenancy.Principal, flt filemeta.Filter) (filemeta.Page, error) {
	c := db.conn()
	q, args := scope(p, false, "f", "shared")
	where := []string{q}
	if flt.WorkspaceID != "" {
		where = append(where, "f.workspace_id = ?")
		args = append(args, flt.WorkspaceID)
	}
	if flt.Folder != nil {
		if *flt.Folder == "" {
			where = append(where, "f.folder_id IS NULL")
		} else {
			where = append(where, "f.folder_id = ?")
			args = append(args, *flt.Folder)
		}
	}
	for _, t := range flt.Tags {
		where = append(where, "EXISTS (SELECT 1 FROM file_tags ft WHERE ft.file_id = f.id AND ft.tag = ?)")
		args = append(args, t)
	}
	if flt.MIMEType != "" {
		if family, ok := strings.CutSuffix(strings.ToLower(flt.MIMEType), "/*"); ok {
			where = append(where, `f.mime_type LIKE ? ESCAPE '\'`)
			args = append(args, likeEscape(family)+"/%")
		} else if strings.Contains(flt.MIMEType, ";") {
			where = append(where, "f.mime_type = ?")
			args = append(args, flt.MIMEType)
		} else {
			// "text/csv" also finds "text/csv; charset=utf-8".
			where = append(where, `(f.mime_type = ? OR f.mime_type LIKE ? ESCAPE '\')`)
			args = append(args, flt.MIMEType, likeEscape(flt.MIMEType)+";%")
		}
	}
	if flt.Name != "" {
		where = append(where, `lower(f.name) LIKE ? ESCAPE '\'`)
		args = append(args, globToLike(strings.ToLower(flt.Name)))
	}
	if flt.Status != "" {
		where = append(where, "f.status = ?")
		args = append(args, string(flt.Status))
	} else {
		where = append(where, "f.status <> 'archived'")
	}
	byName := flt.Order == filemeta.OrderName
	order := "f.created_at DESC, f.id DESC"
	if byName {
		order = "f.name, f.id"
	}
	if flt.Cursor != "" {
		key, id, err := decodeCursor(flt.Cursor, byName)
		if err != nil {
			return filemeta.Page{}, err
		}
		if byName {
			// Row comparisons let both databases seek the (workspace, name, id)
			// and (workspace, created_at, id) indexes straight to the cursor.
			where = append(where, "(f.name, f.id) > (?, ?)")
			args = append(args, key, id)
		} else {
			us, _ := strconv.ParseInt(key, 10, 64)
			where = append(where, "(f.created_at, f.id) < (?, ?)")
			args = append(args, us, id)
		}
	}
	limit := flt.Limit
	if limit <= 0 {
		limit = 50
	}
	rows, err := c.query(ctx, `SELECT `+fileCols+` FROM files f WHERE `+strings.Join(where, " AND ")+
		` ORDER BY `+order+` LIMIT ?`, append(args, limit+1)...)
	if err != nil {
		return filemeta.Page{}, fmt.Errorf("store: list files: %w", err)
	}
	defer rows.Close()
	var page filemeta.Page
	for rows.Next() {
		f, err := scanFile(rows)
		if err != nil {
			return filemeta.Page{}, fmt.Errorf("store: list files: %w", err)
		}
		page.Items = append(page.Items, f)
	}
	if err := rows.Err(); err != nil {
		return filemeta.Page{}, fmt.Errorf("store: list files: %w", err)
	}
	if len(page.Items) > limit {
		page.Items = page.Items[:limit]
		last := page.Items[limit-1]
		if byName {
			page.Next = encodeCursor(last.Name, last.ID, true)
		} else {
			page.Next = encodeCursor(strconv.FormatInt(micros(last.CreatedAt), 10), last.ID, false)
		}
	}
	if page.Items == nil {
		page.Items = []filemeta.Item{}
	}
	return page, loadTags(ctx, c, page.Items)
}

func encodeCursor(key, id string, byName bool) string {
	o := "t"
	if byName {
		o = "n"
	}
	return base64.RawURLEncoding.EncodeToString([]byte(o + "\x00" + key + "\x00" + id))
}

func decodeCursor(s string, byName bool) (key, id string, err error) {
	raw, err := base64.RawURLEncoding.DecodeString(s)
	parts := strings.Split(string(raw), "\x00")
	want := "t"
	if byName {
		want = "n"
	}
	if err != nil || len(parts) != 3 || parts[0] != want {
		return "", "", fmt.Errorf("%w: cursor is malformed or from a listing in another order", tenancy.ErrInvalid)
	}
	if !byName {
		if _, err := strconv.ParseInt(parts[1], 10, 64); err != nil {
			return "", "", fmt.Errorf("%w: cursor is malformed", tenancy.ErrInvalid)
		}
	}
	return parts[1], parts[2], nil
}

// likeEscape escapes LIKE's wildcards and its escape character.
func likeEscape(s string) string {
	return strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(s)
}

// globToLike turns a * and ? glob into a LIKE pattern.
func globToLike(glob string) string {
	return strings.NewReplacer("*", "%", "?", "_").Replace(likeEscape(glob))
}

// UpdateFile implements files.Store.
func (db *DB) UpdateFile(ctx context.Context, p tenancy.Principal, id string, u filemeta.Update) (out filemeta.Item, err error) {
	err = db.tx(ctx, func(c conn) error {
		if err := authorize(ctx, c, p, "files", "shared", id); err != nil {
			return err
		}
		cur, err := fileByID(ctx, c, id)
		if err != nil {
			return err
		}
		var sets []string
		var args []any
		if u.Name != nil {
			sets, args = append(sets, "name = ?"), append(args, *u.Name)
		}
		if u.Description != nil {
			sets, args = append(sets, "description = ?"), append(args, *u.Description)
		}
		if u.Status != nil {
			sets, args = append(sets, "status = ?"), append(args, string(*u.Status))
		}
		if u.Folder != nil {
			if *u.Folder != "" {
				if err := folderIn(ctx, c, p, *u.Folder, cur.WorkspaceID); err != nil {
					return err
				}
			}
			sets, args = append(sets, "folder_id = ?"), append(args, nullString(*u.Folder))
		}
		if u.Shared != nil && *u.Shared != cur.Shared {
			if !p.Admin {
				return fmt.Errorf("%w: sharing a file with the whole tenant needs access level ALL", tenancy.ErrForbidden)
			}
			sets, args = append(sets, "shared = ?"), append(args, *u.Shared)
		}
		sets, args = append(sets, "updated_at = ?"), append(args, micros(now()))
		if _, err := c.exec(ctx, `UPDATE files SET `+strings.Join(sets, ", ")+` WHERE id = ?`, append(args, id)...); err != nil {
			return fmt.Errorf("store: update file: %w", err)
		}
		for _, t := range u.RemoveTags {
			if _, err := c.exec(ctx, `DELETE FROM file_tags WHERE file_id = ? AND tag = ?`, id, t); err != nil {
				return fmt.Errorf("store: untag: %w", err)
			}
		}
		if err := addTags(ctx, c, id, u.AddTags); err != nil {
			return err
		}
		out, err = fileByID(ctx, c, id)
		return err
	})
	return out, err
}

// DeleteFile implements files.Store.
func (db *DB) DeleteFile(ctx context.Context, p tenancy.Principal, id string) error {
	return db.tx(ctx, func(c conn) error {
		if err := authorize(ctx, c, p, "files", "shared", id); err != nil {
			return err
		}
		return trashFile(ctx, c, p, id)
	})
}
