package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/agenthost/agenthost/host/files/filemeta"
	"github.com/agenthost/agenthost/host/tenancy"
)

const folderCols = `f.id, f.tenant_id, f.workspace_id, f.parent_id, f.name, f.created_by, f.auto_rule, f.created_at`

func scanFolder(row interface{ Scan(...any) error }) (filemeta.Folder, error) {
	var f filemeta.Folder
	var parent sql.NullString
	var created int64
	err := row.Scan(&f.ID, &f.TenantID, &f.WorkspaceID, &parent, &f.Name, &f.CreatedBy, &f.AutoRule, &created)
	f.ParentID, f.CreatedAt = parent.String, fromMicros(created)
	return f, err
}

func folderConflict(name string) error {
	return fmt.Errorf("%w: a folder named %q exists there already", tenancy.ErrConflict, name)
}

// InsertFolder implements files.Store.
func (db *DB) InsertFolder(ctx context.Context, p tenancy.Principal, f filemeta.Folder) (out filemeta.Folder, err error) {
	err = db.tx(ctx, func(c conn) error {
		if err := canWrite(ctx, c, p, f.WorkspaceID); err != nil {
			return err
		}
		if f.ParentID != "" {
			if err := folderIn(ctx, c, p, f.ParentID, f.WorkspaceID); err != nil {
				return err
			}
		}
		f.ID, f.TenantID, f.CreatedBy, f.CreatedAt = newID(), p.TenantID, p.UserID, now()
		_, err := c.exec(ctx, `INSERT INTO folders (id, tenant_id, workspace_id, parent_id, name, created_by, auto_rule, created_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?)`, f.ID, f.TenantID, f.WorkspaceID, nullString(f.ParentID), f.Name, f.CreatedBy, f.AutoRule, micros(f.CreatedAt))
		if isUnique(err) {
			return folderConflict(f.Name)
		}
		if err != nil {
			return fmt.Errorf("store: insert folder: %w", err)
		}
		out = f
		return nil
	})
	return out, err
}

// Folder implements files.Store.
func (db *DB) Folder(ctx context.Context, p tenancy.Principal, id string) (filemeta.Folder, error) {
	q, args := scope(p, false, "f", "")
	f, err := scanFolder(db.conn().queryRow(ctx, `SELECT `+folderCols+` FROM folders f WHERE f.id = ? AND `+q, append([]any{id}, args...)...))
	if errors.Is(err, sql.ErrNoRows) {
		return filemeta.Folder{}, fmt.Errorf("%w: folder %q", tenancy.ErrNotFound, id)
	}
	if err != nil {
		return filemeta.Folder{}, fmt.Errorf("store: folder: %w", err)
	}
	return f, nil
}

// Folders implements files.Store: the readable folders of a workspace, by name.
func (db *DB) Folders(ctx context.Context, p tenancy.Principal, workspaceID string) ([]filemeta.Folder, error) {
	// A workspace the principal does not belong to is not found, as on
	// every workspace route, rather than empty.
	if _, _, err := db.Levels(ctx, p, workspaceID); err != nil {
		return nil, err
	}
	q, args := scope(p, false, "f", "")
	return queryAll(ctx, db.conn(), "folders", scanFolder, `SELECT `+folderCols+` FROM folders f WHERE f.workspace_id = ? AND `+q+` ORDER BY f.name, f.id`,
		append([]any{workspaceID}, args...)...)
}

// UpdateFolder implements files.Store. A move into the folder itself or any
// of its descendants is refused with ErrInvalid.
func (db *DB) UpdateFolder(ctx context.Context, p tenancy.Principal, id string, u filemeta.FolderUpdate) (out filemeta.Folder, err error) {
	err = db.tx(ctx, func(c conn) error {
		if err := authorize(ctx, c, p, "folders", "", id); err != nil {
			return err
		}
		cur, err := scanFolder(c.queryRow(ctx, `SELECT `+folderCols+` FROM folders f WHERE f.id = ?`, id))
		if err != nil {
			return fmt.Errorf("store: folder: %w", err)
		}
		var sets []string
		var args []any
		if u.Name != nil {
			sets, args = append(sets, "name = ?"), append(args, *u.Name)
		}
		if u.AutoRule != nil {
			sets, args = append(sets, "auto_rule = ?"), append(args, *u.AutoRule)
		}
		if u.Parent != nil {
			if to := *u.Parent; to != "" {
				if err := folderIn(ctx, c, p, to, cur.WorkspaceID); err != nil {
					return err
				}
				// Walk up from the new parent: meeting the folder itself means
				// the move would make it its own ancestor.
				var n int
				err := c.queryRow(ctx, `WITH RECURSIVE up(id, parent_id, depth) AS (
						SELECT id, parent_id, 0 FROM folders WHERE id = ?
						UNION ALL
						SELECT f.id, f.parent_id, up.depth + 1 FROM folders f JOIN up ON f.id = up.parent_id WHERE up.depth < 10000
					) SELECT COUNT(*) FROM up WHERE id = ?`, to, id).Scan(&n)
				if err != nil {
					return fmt.Errorf("store: folder ancestry: %w", err)
				}
				if n > 0 {
					return fmt.Errorf("%w: moving folder %q into %q would make a cycle", tenancy.ErrInvalid, cur.Name, to)
				}
			}
			sets, args = append(sets, "parent_id = ?"), append(args, nullString(*u.Parent))
		}
		if len(sets) > 0 {
			_, err := c.exec(ctx, `UPDATE folders SET `+strings.Join(sets, ", ")+` WHERE id = ?`, append(args, id)...)
			if isUnique(err) {
				name := cur.Name
				if u.Name != nil {
					name = *u.Name
				}
				return folderConflict(name)
			}
			if err != nil {
				return fmt.Errorf("store: update folder: %w", err)
			}
		}
		out, err = scanFolder(c.queryRow(ctx, `SELECT `+folderCols+` FROM folders f WHERE f.id = ?`, id))
		return err
	})
	return out, err
}

// DeleteFolder implements files.Store; subfolders go with it and their files
// stay, in no folder (the schema's ON DELETE rules).
func (db *DB) DeleteFolder(ctx context.Context, p tenancy.Principal, id string) error {
	return db.tx(ctx, func(c conn) error {
		if err := authorize(ctx, c, p, "folders", "", id); err != nil {
			return err
		}
		_, err := c.exec(ctx, `DELETE FROM folders WHERE id = ?`, id)
		return err
	})
}
