package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/agenthost/agenthost/host/files/filemeta"
	"github.com/agenthost/agenthost/host/tenancy"
)

// setContent makes c the file's next version inside a transaction the
// caller has authorised. The files row is changed only while it is still on
// the version the change was made on, so of two concurrent changes on one
// version exactly one wins and the other is a conflict.
func setContent(ctx context.Context, c conn, p tenancy.Principal, cur filemeta.Item, ct filemeta.Content) (filemeta.Item, filemeta.Version, error) {
	if ct.BaseVersion != 0 && ct.BaseVersion != cur.Version {
		return filemeta.Item{}, filemeta.Version{}, fmt.Errorf("%w: file %q is at version %d, and the change was made on version %d: read it again and redo the change",
			tenancy.ErrConflict, cur.Name, cur.Version, ct.BaseVersion)
	}
	if err := referBlob(ctx, c, ct.SHA256, ct.Size); err != nil {
		return filemeta.Item{}, filemeta.Version{}, err
	}
	v := filemeta.Version{FileID: cur.ID, Version: cur.Version + 1, SHA256: ct.SHA256, Size: ct.Size, CreatedBy: p.UserID,
		CreatedAt: now(), Note: ct.Note}
	res, err := c.exec(ctx, `UPDATE files SET sha256 = ?, size = ?, version = ?, updated_at = ?, password_given = ? WHERE id = ? AND version = ?`,
		// A password given opened the old bytes only (password_locks.go).
		v.SHA256, v.Size, v.Version, micros(v.CreatedAt), false, cur.ID, cur.Version)
	if err != nil {
		return filemeta.Item{}, filemeta.Version{}, fmt.Errorf("store: new content: %w", err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return filemeta.Item{}, filemeta.Version{}, err
	} else if n != 1 {
		return filemeta.Item{}, filemeta.Version{}, fmt.Errorf("%w: file %q changed while this change was written: read it again and redo the change", tenancy.ErrConflict, cur.Name)
	}
	if _, err := c.exec(ctx, `INSERT INTO file_versions (file_id, version, sha256, size, created_by, created_at, note) VALUES (?, ?, ?, ?, ?, ?, ?)`,
		v.FileID, v.Version, v.SHA256, v.Size, v.CreatedBy, micros(v.CreatedAt), v.Note); err != nil {
		if isUnique(err) {
			return filemeta.Item{}, filemeta.Version{}, fmt.Errorf("%w: file %q changed while this change was written: read it again and redo the change", tenancy.ErrConflict, cur.Name)
		}
		return filemeta.Item{}, filemeta.Version{}, fmt.Errorf("store: version row: %w", err)
	}
	out, err := fileByID(ctx, c, cur.ID)
	return out, v, err
}

// SetContent implements files.Store.
func (db *DB) SetContent(ctx context.Context, p tenancy.Principal, id string, ct filemeta.Content) (out filemeta.Item, v filemeta.Version, err error) {
	err = db.tx(ctx, func(c conn) error {
		if err := authorize(ctx, c, p, "files", "shared", id); err != nil {
			return err
		}
		cur, err := fileByID(ctx, c, id)
		if err != nil {
			return err
		}
		out, v, err = setContent(ctx, c, p, cur, ct)
		return err
	})
	return out, v, err
}

const versionCols = `v.file_id, v.version, v.sha256, v.size, v.created_by, v.created_at, v.note`

func scanVersion(row interface{ Scan(...any) error }) (filemeta.Version, error) {
	var v filemeta.Version
	var at int64
	err := row.Scan(&v.FileID, &v.Version, &v.SHA256, &v.Size, &v.CreatedBy, &at, &v.Note)
	v.CreatedAt = fromMicros(at)
	return v, err
}

// FileVersions implements files.Store: the versions of a file p can read,
// newest first.
func (db *DB) FileVersions(ctx context.Context, p tenancy.Principal, id string) ([]filemeta.Version, error) {
	if _, err := db.File(ctx, p, id); err != nil {
		return nil, err
	}
	return queryAll(ctx, db.conn(), "versions", scanVersion, `SELECT `+versionCols+` FROM file_versions v WHERE v.file_id = ? ORDER BY v.version DESC`, id)
}

// FileVersion implements files.Store.
func (db *DB) FileVersion(ctx context.Context, p tenancy.Principal, id string, version int) (filemeta.Version, error) {
	if _, err := db.File(ctx, p, id); err != nil {
		return filemeta.Version{}, err
	}
	v, err := scanVersion(db.conn().queryRow(ctx, `SELECT `+versionCols+` FROM file_versions v WHERE v.file_id = ? AND v.version = ?`, id, version))
	if errors.Is(err, sql.ErrNoRows) {
		return filemeta.Version{}, fmt.Errorf("%w: file %q has no version %d", tenancy.ErrNotFound, id, version)
	}
	if err != nil {
		return filemeta.Version{}, fmt.Errorf("store: version: %w", err)
	}
	return v, nil
}

const proposalCols = `x.id, x.tenant_id, x.workspace_id, x.file_id, x.workflow_id, x.created_by, x.base_version, x.sha256, x.size,
	x.diff, x.description, x.status, x.decided_by, x.decided_at, x.version, x.created_at`

func scanProposal(row interface{ Scan(...any) error }) (filemeta.Proposal, error) {
	var x filemeta.Proposal
	var status string
	var decided sql.NullInt64
	var created int64
	err := row.Scan(&x.ID, &x.TenantID, &x.WorkspaceID, &x.FileID, &x.WorkflowID, &x.CreatedBy, &x.BaseVersion, &x.SHA256, &x.Size,
		&x.Diff, &x.Description, &status, &x.DecidedBy, &decided, &x.Version, &created)
	x.Status, x.DecidedAt, x.CreatedAt = filemeta.ProposalStatus(status), fromNullMicros(decided), fromMicros(created)
	return x, err
}

// InsertProposal implements files.Store.
func (db *DB) InsertProposal(ctx context.Context, p tenancy.Principal, x filemeta.Proposal) (out filemeta.Proposal, err error) {
	err = db.tx(ctx, func(c conn) error {
		if err := authorize(ctx, c, p, "files", "shared", x.FileID); err != nil {
			return err
		}
		cur, err := fileByID(ctx, c, x.FileID)
		if err != nil {
			return err
		}
		if x.BaseVersion != cur.Version {
			return fmt.Errorf("%w: file %q is at version %d, and the edit was made on version %d: read it again and propose again",
				tenancy.ErrConflict, cur.Name, cur.Version, x.BaseVersion)
		}
		if err := referBlob(ctx, c, x.SHA256, x.Size); err != nil {
			return err
		}
		x.ID, x.TenantID, x.WorkspaceID, x.CreatedBy, x.CreatedAt = newID(), cur.TenantID, cur.WorkspaceID, p.UserID, now()
		x.Status, x.DecidedBy, x.DecidedAt, x.Version = filemeta.ProposalPending, "", nil, 0
		if _, err := c.exec(ctx, `INSERT INTO file_proposals (id, tenant_id, workspace_id, file_id, workflow_id, created_by, base_version,
			sha256, size, diff, description, status, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			x.ID, x.TenantID, x.WorkspaceID, x.FileID, x.WorkflowID, x.CreatedBy, x.BaseVersion, x.SHA256, x.Size, x.Diff, x.Description,
			string(x.Status), micros(x.CreatedAt)); err != nil {
			return fmt.Errorf("store: insert proposal: %w", err)
		}
		out = x
		return nil
	})
	return out, err
}

// proposal loads a proposal whose file p can read.
func proposal(ctx context.Context, c conn, p tenancy.Principal, id string) (filemeta.Proposal, error) {
	q, args := scope(p, false, "f", "shared")
	x, err := scanProposal(c.queryRow(ctx, `SELECT `+proposalCols+` FROM file_proposals x JOIN files f ON f.id = x.file_id
		WHERE x.id = ? AND `+q, append([]any{id}, args...)...))
	if errors.Is(err, sql.ErrNoRows) {
		return filemeta.Proposal{}, fmt.Errorf("%w: proposal %q", tenancy.ErrNotFound, id)
	}
	if err != nil {
		return filemeta.Proposal{}, fmt.Errorf("store: proposal: %w", err)
	}
	return x, nil
}

// Proposal implements files.Store: a proposal is readable by whoever can
// read its file.
func (db *DB) Proposal(ctx context.Context, p tenancy.Principal, id string) (filemeta.Proposal, error) {
	return proposal(ctx, db.conn(), p, id)
}

// Proposals implements files.Store: a file's proposals, newest first.
func (db *DB) Proposals(ctx context.Context, p tenancy.Principal, fileID string) ([]filemeta.Proposal, error) {
	if _, err := db.File(ctx, p, fileID); err != nil {
		return nil, err
	}
	return queryAll(ctx, db.conn(), "proposals", scanProposal, `SELECT `+proposalCols+` FROM file_proposals x WHERE x.file_id = ? ORDER BY x.created_at DESC, x.id DESC`, fileID)
}

// DecideProposal implements files.Store. Accepting writes the new version
// and marks the proposal in one transaction; a proposal is decided once.
func (db *DB) DecideProposal(ctx context.Context, p tenancy.Principal, id string, d filemeta.Decision) (out filemeta.Proposal, item filemeta.Item, err error) {
	err = db.tx(ctx, func(c conn) error {
		x, err := proposal(ctx, c, p, id)
		if err != nil {
			return err
		}
		if err := authorize(ctx, c, p, "files", "shared", x.FileID); err != nil {
			return err
		}
		if x.Status != filemeta.ProposalPending {
			return fmt.Errorf("%w: proposal %q is already %s", tenancy.ErrConflict, id, x.Status)
		}
		cur, err := fileByID(ctx, c, x.FileID)
		if err != nil {
			return err
		}
		t := now()
		x.DecidedBy, x.DecidedAt = p.UserID, &t
		if !d.Accept {
			x.Status = filemeta.ProposalRejected
			item = cur
		} else {
			ct := filemeta.Content{SHA256: x.SHA256, Size: x.Size, BaseVersion: x.BaseVersion, Note: "proposal " + x.ID}
			if d.Content != nil {
				ct = *d.Content
				ct.Note = fmt.Sprintf("proposal %s (rebased from version %d)", x.ID, x.BaseVersion)
			}
			var v filemeta.Version
			if item, v, err = setContent(ctx, c, p, cur, ct); err != nil {
				return err
			}
			x.Status, x.Version = filemeta.ProposalAccepted, v.Version
		}
		res, err := c.exec(ctx, `UPDATE file_proposals SET status = ?, decided_by = ?, decided_at = ?, version = ? WHERE id = ? AND status = 'pending'`,
			string(x.Status), x.DecidedBy, micros(t), x.Version, x.ID)
		if err != nil {
			return fmt.Errorf("store: decide proposal: %w", err)
		}
		if n, err := res.RowsAffected(); err != nil {
			return err
		} else if n != 1 {
			return fmt.Errorf("%w: proposal %q was decided meanwhile", tenancy.ErrConflict, id)
		}
		out = x
		return nil
	})
	return out, item, err
}
