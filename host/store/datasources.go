package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/agenthost/agenthost/host/datasources/dsrecord"
	"github.com/agenthost/agenthost/host/tenancy"
)

// CreateDataSource stores a new data source of p: the connection must be
// p's own and the workspace one p may write to (ErrNotFound, ErrForbidden
// otherwise); a revoked connection is refused. An auto-syncing source is
// due at d.NextSync, or at once.
func (db *DB) CreateDataSource(ctx context.Context, p tenancy.Principal, d dsrecord.DataSource) (dsrecord.DataSource, error) {
	if p.UserID == "" || p.TenantID == "" {
		return dsrecord.DataSource{}, fmt.Errorf("%w: a data source needs a signed-in user", tenancy.ErrForbidden)
	}
	d.Label = strings.TrimSpace(d.Label)
	switch {
	case d.Label == "" || d.ConnectionID == "" || strings.TrimSpace(d.Service) == "" || d.WorkspaceID == "":
		return dsrecord.DataSource{}, fmt.Errorf("%w: a data source needs a workspace, a connection, a service and a label", tenancy.ErrInvalid)
	case d.AutoSync && d.Interval < dsrecord.MinSyncInterval:
		return dsrecord.DataSource{}, fmt.Errorf("%w: the sync interval must be at least %s", tenancy.ErrInvalid, dsrecord.MinSyncInterval)
	case d.Interval < 0:
		return dsrecord.DataSource{}, fmt.Errorf("%w: negative sync interval", tenancy.ErrInvalid)
	}
	if _, write, err := db.Levels(ctx, p, d.WorkspaceID); err != nil {
		return dsrecord.DataSource{}, err
	} else if write == tenancy.None {
		return dsrecord.DataSource{}, fmt.Errorf("%w: no write access to workspace %q", tenancy.ErrForbidden, d.WorkspaceID)
	}
	c, err := db.Connection(ctx, p, d.ConnectionID)
	if err != nil {
		return dsrecord.DataSource{}, err
	}
	if c.Revoked() {
		return dsrecord.DataSource{}, fmt.Errorf("%w: connection %q was revoked; connect again", tenancy.ErrInvalid, c.Label)
	}
	d.ID = newID()
	d.TenantID, d.UserID = p.TenantID, p.UserID
	d.State, d.Seq, d.FolderID, d.QueueJobID = dsrecord.SyncIdle, 0, "", 0
	d.CreatedAt = now()
	d.UpdatedAt, d.StateAt = d.CreatedAt, d.CreatedAt
	d.LastSynced, d.LastError, d.LastSummary = nil, "", ""
	switch {
	case !d.AutoSync:
		d.NextSync = nil
	case d.NextSync == nil || d.NextSync.IsZero():
		t := d.CreatedAt
		d.NextSync = &t
	}
	_, err = db.conn().exec(ctx, `INSERT INTO data_sources (id, tenant_id, user_id, workspace_id, connection_id, service, path, label, source_type,
		auto_sync, interval_seconds, sync_state, sync_seq, state_at, next_sync_at, created_at, updated_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 0, ?, ?, ?, ?)`,
		d.ID, d.TenantID, d.UserID, d.WorkspaceID, d.ConnectionID, d.Service, d.Path, d.Label, d.SourceType,
		boolInt(d.AutoSync), int64(d.Interval/time.Second), string(d.State), micros(d.StateAt), optTime(d.NextSync), micros(d.CreatedAt), micros(d.UpdatedAt))
	if isUnique(err) {
		return dsrecord.DataSource{}, fmt.Errorf("%w: you already have a data source labelled %q in this workspace", tenancy.ErrConflict, d.Label)
	}
	if err != nil {
		return dsrecord.DataSource{}, fmt.Errorf("store: create data source: %w", err)
	}
	d.Provider = c.Provider
	return d, nil
}

func boolInt(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

func optTime(t *time.Time) any {
	if t == nil || t.IsZero() {
		return nil
	}
	return micros(*t)
}

const dataSourceCols = `d.id, d.tenant_id, d.user_id, d.workspace_id, d.connection_id, d.service, d.path, d.label, d.source_type,
	d.auto_sync, d.interval_seconds, d.folder_id, d.sync_state, d.sync_seq, d.state_at, d.queue_job_id, d.last_synced_at,
	d.last_error, d.last_summary, d.next_sync_at, d.created_at, d.updated_at, c.revoked_at, c.provider, d.sync_resume`

const dataSourceFrom = ` FROM data_sources d JOIN connections c ON c.id = d.connection_id`

func scanDataSource(s interface{ Scan(...any) error }) (dsrecord.DataSource, error) {
	var d dsrecord.DataSource
	var auto, interval, seq, stateAt, created, updated int64
	var folder sql.NullString
	var job, synced, next, revoked sql.NullInt64
	var state string
	if err := s.Scan(&d.ID, &d.TenantID, &d.UserID, &d.WorkspaceID, &d.ConnectionID, &d.Service, &d.Path, &d.Label, &d.SourceType,
		&auto, &interval, &folder, &state, &seq, &stateAt, &job, &synced, &d.LastError, &d.LastSummary, &next, &created, &updated,
		&revoked, &d.Provider, &d.Resume); err != nil {
		return dsrecord.DataSource{}, err
	}
	d.AutoSync, d.Interval, d.FolderID = auto != 0, time.Duration(interval)*time.Second, folder.String
	d.State, d.Seq, d.StateAt, d.QueueJobID = dsrecord.SyncState(state), seq, fromMicros(stateAt), job.Int64
	if synced.Valid {
		t := fromMicros(synced.Int64)
		d.LastSynced = &t
	}
	if next.Valid {
		t := fromMicros(next.Int64)
		d.NextSync = &t
	}
	d.ConnectionRevoked = revoked.Valid
	d.CreatedAt, d.UpdatedAt = fromMicros(created), fromMicros(updated)
	return d, nil
}

// DataSource returns p's data source id. A data source is its owner's
// alone (it reads through the owner's connection): anyone else, the
// tenant's admin included, gets ErrNotFound.
func (db *DB) DataSource(ctx context.Context, p tenancy.Principal, id string) (dsrecord.DataSource, error) {
	d, err := scanDataSource(db.conn().queryRow(ctx, `SELECT `+dataSourceCols+dataSourceFrom+` WHERE d.id = ? AND d.tenant_id = ? AND d.user_id = ?`,
		id, p.TenantID, p.UserID))
	if errors.Is(err, sql.ErrNoRows) {
		return dsrecord.DataSource{}, fmt.Errorf("%w: data source %q", tenancy.ErrNotFound, id)
	}
	if err != nil {
		return dsrecord.DataSource{}, fmt.Errorf("store: data source: %w", err)
	}
	return d, nil
}

// DataSources lists p's data sources, of one workspace when workspaceID is
// set, oldest first.
func (db *DB) DataSources(ctx context.Context, p tenancy.Principal, workspaceID string) ([]dsrecord.DataSource, error) {
	q := `SELECT ` + dataSourceCols + dataSourceFrom + ` WHERE d.tenant_id = ? AND d.user_id = ?`
	args := []any{p.TenantID, p.UserID}
	if workspaceID != "" {
		q += ` AND d.workspace_id = ?`
		args = append(args, workspaceID)
	}
	return db.dataSources(ctx, q+` ORDER BY d.created_at, d.id`, args...)
}

func (db *DB) dataSources(ctx context.Context, q string, args ...any) ([]dsrecord.DataSource, error) {
	return queryAll(ctx, db.conn(), "data sources", scanDataSource, q, args...)
}

// DeleteDataSource deletes p's data source and its sync records; the files
// it stored stay in the workspace.
func (db *DB) DeleteDataSource(ctx context.Context, p tenancy.Principal, id string) error {
	res, err := db.conn().exec(ctx, `DELETE FROM data_sources WHERE id = ? AND tenant_id = ? AND user_id = ?`, id, p.TenantID, p.UserID)
	if err != nil {
		return fmt.Errorf("store: delete data source: %w", err)
	}
	if n, _ := res.RowsAffected(); n != 1 {
		return fmt.Errorf("%w: data source %q", tenancy.ErrNotFound, id)
	}
	return nil
}

// DataSourceByID reads a data source for the sync job and the scheduler
// (no scope: they act for its owner, whom the row names).
func (db *DB) DataSourceByID(ctx context.Context, id string) (dsrecord.DataSource, error) {
	d, err := scanDataSource(db.conn().queryRow(ctx, `SELECT `+dataSourceCols+dataSourceFrom+` WHERE d.id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return dsrecord.DataSource{}, fmt.Errorf("%w: data source %q", tenancy.ErrNotFound, id)
	}
	if err != nil {
		return dsrecord.DataSource{}, fmt.Errorf("store: data source: %w", err)
	}
	return d, nil
}

// DueDataSources lists auto-syncing data sources due at at (next sync at or
// before it) whose connection is not revoked and which hold no claim, or
// whose claim is older than stale (a host that claimed and died), at most
// limit, the longest due first.
func (db *DB) DueDataSources(ctx context.Context, at time.Time, stale time.Duration, limit int) ([]dsrecord.DataSource, error) {
	if limit <= 0 {
		limit = 100
	}
	return db.dataSources(ctx, `SELECT `+dataSourceCols+dataSourceFrom+` WHERE d.auto_sync = 1 AND c.revoked_at IS NULL
		AND d.next_sync_at IS NOT NULL AND d.next_sync_at <= ?
		AND (d.sync_state IN ('idle', 'failed') OR d.state_at <= ?)
		ORDER BY d.next_sync_at, d.id LIMIT ?`, micros(at), micros(at.Add(-stale)), limit)
}

// ClaimDataSourceSync takes the data source's one sync claim: it moves it
// to queued and returns the new seq, if it holds no claim (or its claim is
// older than stale). ok is false when another sync holds it, or, with
// onlyIfDue, when the source is not due at at (a scheduler that listed it
// due lost the race to another host that has synced it since).
func (db *DB) ClaimDataSourceSync(ctx context.Context, id string, at time.Time, stale time.Duration, onlyIfDue bool) (seq int64, ok bool, err error) {
	err = db.tx(ctx, func(c conn) error {
		var cur int64
		err := c.queryRow(ctx, `SELECT sync_seq FROM data_sources WHERE id = ?`, id).Scan(&cur)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("%w: data source %q", tenancy.ErrNotFound, id)
		}
		if err != nil {
			return fmt.Errorf("store: claim data source: %w", err)
		}
		q := `UPDATE data_sources SET sync_state = 'queued', sync_seq = ?, state_at = ?, queue_job_id = NULL, updated_at = ?
			WHERE id = ? AND sync_seq = ? AND (sync_state IN ('idle', 'failed') OR state_at <= ?)`
		args := []any{cur + 1, micros(at), micros(now()), id, cur, micros(at.Add(-stale))}
		if onlyIfDue {
			q += ` AND auto_sync = 1 AND next_sync_at IS NOT NULL AND next_sync_at <= ?`
			args = append(args, micros(at))
		}
		res, err := c.exec(ctx, q, args...)
		if err != nil {
			return fmt.Errorf("store: claim data source: %w", err)
		}
		if n, _ := res.RowsAffected(); n == 1 {
			seq, ok = cur+1, true
		}
		return nil
	})
	return seq, ok, err
}

// UpdateDataSourceSync applies u if the data source's claim is still seq;
// ok is false when a newer claim (or a delete) superseded it.
func (db *DB) UpdateDataSourceSync(ctx context.Context, id string, seq int64, at time.Time, u dsrecord.DataSourceSync) (ok bool, err error) {
	sets, args := []string{"updated_at = ?"}, []any{micros(now())}
	if u.State != "" {
		sets, args = append(sets, "sync_state = ?", "state_at = ?"), append(args, string(u.State), micros(at))
	}
	if u.QueueJobID != nil {
		sets, args = append(sets, "queue_job_id = ?"), append(args, *u.QueueJobID)
	}
	if u.FolderID != nil {
		sets, args = append(sets, "folder_id = ?"), append(args, nullString(*u.FolderID))
	}
	if u.LastSynced != nil {
		sets, args = append(sets, "last_synced_at = ?"), append(args, micros(*u.LastSynced))
	}
	if u.LastError != nil {
		sets, args = append(sets, "last_error = ?"), append(args, *u.LastError)
	}
	if u.LastSummary != nil {
		sets, args = append(sets, "last_summary = ?"), append(args, *u.LastSummary)
	}
	if u.NextSync != nil {
		sets, args = append(sets, "next_sync_at = ?"), append(args, optTime(u.NextSync))
	}
	if u.Resume != nil {
		sets, args = append(sets, "sync_resume = ?"), append(args, *u.Resume)
	}
	res, err := db.conn().exec(ctx, `UPDATE data_sources SET `+strings.Join(sets, ", ")+` WHERE id = ? AND sync_seq = ?`, append(args, id, seq)...)
	if err != nil {
		return false, fmt.Errorf("store: update data source sync: %w", err)
	}
	n, _ := res.RowsAffected()
	return n == 1, nil
}

// DataSourceItems returns what the data source's syncs stored, by entry id.
func (db *DB) DataSourceItems(ctx context.Context, id string) (map[string]dsrecord.DataSourceItem, error) {
	rows, err := db.conn().query(ctx, `SELECT entry_id, entry_path, name, size, modified, file_id, synced_at FROM data_source_items WHERE data_source_id = ?`, id)
	if err != nil {
		return nil, fmt.Errorf("store: data source items: %w", err)
	}
	defer rows.Close()
	out := map[string]dsrecord.DataSourceItem{}
	for rows.Next() {
		var it dsrecord.DataSourceItem
		var modified sql.NullInt64
		var synced int64
		if err := rows.Scan(&it.EntryID, &it.EntryPath, &it.Name, &it.Size, &modified, &it.FileID, &synced); err != nil {
			return nil, fmt.Errorf("store: data source items: %w", err)
		}
		if modified.Valid {
			it.Modified = fromMicros(modified.Int64)
		}
		it.SyncedAt = fromMicros(synced)
		out[it.EntryID] = it
	}
	return out, rows.Err()
}

// PutDataSourceItem records (or replaces) what a sync stored for an entry,
// if the data source's claim is still seq (ok false otherwise: a newer
// sync or a delete superseded this one).
func (db *DB) PutDataSourceItem(ctx context.Context, id string, seq int64, it dsrecord.DataSourceItem) (ok bool, err error) {
	if it.EntryID == "" || it.FileID == "" {
		return false, fmt.Errorf("%w: a synced item needs its entry and file", tenancy.ErrInvalid)
	}
	err = db.tx(ctx, func(c conn) error {
		var cur int64
		err := c.queryRow(ctx, `SELECT sync_seq FROM data_sources WHERE id = ?`, id).Scan(&cur)
		if errors.Is(err, sql.ErrNoRows) || (err == nil && cur != seq) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("store: put data source item: %w", err)
		}
		var modified any
		if !it.Modified.IsZero() {
			modified = micros(it.Modified)
		}
		if _, err := c.exec(ctx, `DELETE FROM data_source_items WHERE data_source_id = ? AND entry_id = ?`, id, it.EntryID); err != nil {
			return fmt.Errorf("store: put data source item: %w", err)
		}
		if _, err := c.exec(ctx, `INSERT INTO data_source_items (data_source_id, entry_id, entry_path, name, size, modified, file_id, synced_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?)`, id, it.EntryID, it.EntryPath, it.Name, it.Size, modified, it.FileID, micros(now())); err != nil {
			return fmt.Errorf("store: put data source item: %w", err)
		}
		ok = true
		return nil
	})
	return ok, err
}
