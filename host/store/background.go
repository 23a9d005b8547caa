package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/agenthost/agenthost/host/background/bgjob"
	"github.com/agenthost/agenthost/host/tenancy"
)

const backgroundCols = `id, tenant_id, workspace_id, user_id, origin_workflow_id, workflow_id, description, subtasks, max_cost_nchf,
	status, progress, result_summary, error, attempts, max_retries, queue_job_id, created_at, started_at, completed_at`

func scanBackground(row interface{ Scan(...any) error }) (bgjob.Job, error) {
	var j bgjob.Job
	var subtasks, status string
	var maxCost, started, completed sql.NullInt64
	var created int64
	err := row.Scan(&j.ID, &j.TenantID, &j.WorkspaceID, &j.UserID, &j.OriginWorkflowID, &j.WorkflowID, &j.Description, &subtasks,
		&maxCost, &status, &j.Progress, &j.ResultSummary, &j.Error, &j.Attempts, &j.MaxRetries, &j.QueueJobID, &created, &started, &completed)
	if errors.Is(err, sql.ErrNoRows) {
		return j, fmt.Errorf("%w: background job", tenancy.ErrNotFound)
	}
	if err != nil {
		return j, err
	}
	if err := json.Unmarshal([]byte(subtasks), &j.Subtasks); err != nil {
		return j, fmt.Errorf("store: background job %s: subtasks: %w", j.ID, err)
	}
	j.Status, j.MaxCost = bgjob.Status(status), amountOf(maxCost)
	j.CreatedAt, j.StartedAt, j.CompletedAt = fromMicros(created), fromNullMicros(started), fromNullMicros(completed)
	return j, nil
}

// CreateBackgroundJob implements background.Store: the principal must be
// able to write in the workspace.
func (db *DB) CreateBackgroundJob(ctx context.Context, p tenancy.Principal, j bgjob.Job) (bgjob.Job, error) {
	if _, write, err := db.Levels(ctx, p, j.WorkspaceID); err != nil {
		return bgjob.Job{}, err
	} else if write == tenancy.None {
		return bgjob.Job{}, fmt.Errorf("%w: a viewer cannot start background jobs in workspace %q", tenancy.ErrForbidden, j.WorkspaceID)
	}
	if j.Subtasks == nil {
		j.Subtasks = []string{}
	}
	subtasks, _ := json.Marshal(j.Subtasks)
	j.ID, j.TenantID, j.UserID, j.CreatedAt = newID(), p.TenantID, p.UserID, now()
	var maxCost any
	if j.MaxCost != nil {
		maxCost = int64(*j.MaxCost)
	}
	_, err := db.conn().exec(ctx, `INSERT INTO background_jobs (id, tenant_id, workspace_id, user_id, origin_workflow_id, description,
		subtasks, max_cost_nchf, status, max_retries, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		j.ID, j.TenantID, j.WorkspaceID, j.UserID, j.OriginWorkflowID, j.Description, string(subtasks), maxCost, string(j.Status),
		j.MaxRetries, micros(j.CreatedAt))
	if err != nil {
		return bgjob.Job{}, fmt.Errorf("store: background job: %w", err)
	}
	return j, nil
}

// BackgroundJob implements background.Store: a user's own job, or any of
// the tenant's for its admin.
func (db *DB) BackgroundJob(ctx context.Context, p tenancy.Principal, id string) (bgjob.Job, error) {
	j, err := scanBackground(db.conn().queryRow(ctx, `SELECT `+backgroundCols+` FROM background_jobs
		WHERE id = ? AND tenant_id = ? AND (? OR user_id = ?)`, id, p.TenantID, p.Admin, p.UserID))
	if err != nil && !errors.Is(err, tenancy.ErrNotFound) {
		err = fmt.Errorf("store: background job: %w", err)
	}
	return j, err
}

// BackgroundJobs implements background.Store, newest first.
func (db *DB) BackgroundJobs(ctx context.Context, p tenancy.Principal, limit int) ([]bgjob.Job, error) {
	if limit <= 0 || limit > 500 {
		limit = 100
	}
	return queryAll(ctx, db.conn(), "background jobs", scanBackground, `SELECT `+backgroundCols+` FROM background_jobs WHERE tenant_id = ? AND (? OR user_id = ?)
		ORDER BY created_at DESC, id DESC LIMIT ?`, p.TenantID, p.Admin, p.UserID, limit)
}

// BackgroundJobByID implements background.Store (administrative).
func (db *DB) BackgroundJobByID(ctx context.Context, id string) (bgjob.Job, error) {
	j, err := scanBackground(db.conn().queryRow(ctx, `SELECT `+backgroundCols+` FROM background_jobs WHERE id = ?`, id))
	if err != nil && !errors.Is(err, tenancy.ErrNotFound) {
		err = fmt.Errorf("store: background job: %w", err)
	}
	return j, err
}

// UpdateBackgroundJob implements background.Store: one conditional update.
func (db *DB) UpdateBackgroundJob(ctx context.Context, id string, from []bgjob.Status, u bgjob.Update) (bool, error) {
	var set []string
	var args []any
	add := func(expr string, v any) {
		set = append(set, expr)
		args = append(args, v)
	}
	if u.Status != nil {
		add("status = ?", string(*u.Status))
	}
	if u.Progress != nil {
		add("progress = ?", *u.Progress)
	}
	if u.ResultSummary != nil {
		add("result_summary = ?", *u.ResultSummary)
	}
	if u.Error != nil {
		add("error = ?", *u.Error)
	}
	if u.WorkflowID != nil {
		add("workflow_id = ?", *u.WorkflowID)
	}
	if u.QueueJobID != nil {
		add("queue_job_id = ?", *u.QueueJobID)
	}
	if u.CompletedAt != nil {
		add("completed_at = ?", micros(*u.CompletedAt))
	}
	if u.Attempt {
		set = append(set, "attempts = attempts + 1")
		add("started_at = COALESCE(started_at, ?)", micros(now()))
	}
	if len(set) == 0 {
		return false, nil
	}
	q := `UPDATE background_jobs SET ` + strings.Join(set, ", ") + ` WHERE id = ?`
	args = append(args, id)
	if len(from) > 0 {
		q += ` AND status IN (?` + strings.Repeat(", ?", len(from)-1) + `)`
		for _, s := range from {
			args = append(args, string(s))
		}
	}
	res, err := db.conn().exec(ctx, q, args...)
	if err != nil {
		return false, fmt.Errorf("store: background job: %w", err)
	}
	n, err := res.RowsAffected()
	return n == 1, err
}

// RunningBackgroundJobs implements background.Store.
func (db *DB) RunningBackgroundJobs(ctx context.Context, tenantID string) (int, error) {
	var n int
	if err := db.conn().queryRow(ctx, `SELECT COUNT(*) FROM background_jobs WHERE tenant_id = ? AND status = 'running'`, tenantID).Scan(&n); err != nil {
		return 0, fmt.Errorf("store: background jobs: %w", err)
	}
	return n, nil
}
