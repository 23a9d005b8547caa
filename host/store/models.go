package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/agenthost/agenthost/host/tenancy"
)

// WorkspaceModels returns the agent models a workspace allows, as
// provider/model ids (none: every configured one). Any member (and the
// tenant's admin) may read them.
func (db *DB) WorkspaceModels(ctx context.Context, p tenancy.Principal, workspaceID string) ([]string, error) {
	if _, _, err := db.Levels(ctx, p, workspaceID); err != nil {
		return nil, err
	}
	var s string
	if err := db.conn().queryRow(ctx, `SELECT models FROM workspaces WHERE id = ?`, workspaceID).Scan(&s); err != nil {
		return nil, fmt.Errorf("store: workspace models: %w", err)
	}
	if s == "" {
		return nil, nil
	}
	return strings.Split(s, ","), nil
}

// SetWorkspaceModels sets the agent models a workspace allows (none: every
// configured one). Whether an id is configured is the caller's to check (the
// store does not know the host's models); an id with a comma, empty or
// without provider/ is refused. It takes a manager of the workspace or the
// tenant's admin.
func (db *DB) SetWorkspaceModels(ctx context.Context, p tenancy.Principal, workspaceID string, ids []string) error {
	var keep []string
	for _, id := range ids {
		prov, name, ok := strings.Cut(id, "/")
		if !ok || prov == "" || name == "" || strings.ContainsAny(id, ",\n") {
			return fmt.Errorf("%w: model %q is not a provider/model id", tenancy.ErrInvalid, id)
		}
		if !slices.Contains(keep, id) {
			keep = append(keep, id)
		}
	}
	return db.tx(ctx, func(c conn) error {
		_, write, err := workspaceLevels(ctx, c, p, workspaceID)
		if err != nil {
			return err
		}
		if write != tenancy.Group && write != tenancy.All {
			return fmt.Errorf("%w: only a manager of the workspace or the tenant's admin changes its models", tenancy.ErrForbidden)
		}
		if _, err := c.exec(ctx, `UPDATE workspaces SET models = ? WHERE id = ?`, strings.Join(keep, ","), workspaceID); err != nil {
			return fmt.Errorf("store: workspace models: %w", err)
		}
		return nil
	})
}

// WorkflowModel returns the model a workflow (conversation) chose, "" for
// none. Whoever may read the workflow may read it.
func (db *DB) WorkflowModel(ctx context.Context, p tenancy.Principal, workflowID string) (string, error) {
	q, args := ownerScope(p, false, "w")
	var m string
	err := db.conn().queryRow(ctx, `SELECT w.model FROM workflows w WHERE w.id = ? AND `+q, append([]any{workflowID}, args...)...).Scan(&m)
	if errors.Is(err, sql.ErrNoRows) {
		return "", fmt.Errorf("%w: workflow %q", tenancy.ErrNotFound, workflowID)
	}
	if err != nil {
		return "", fmt.Errorf("store: workflow model: %w", err)
	}
	return m, nil
}

// SetWorkflowModel keeps the model a workflow chose ("" : back to the
// default). Only its owner changes it, as with its name; whether the model
// is allowed is the caller's to check.
func (db *DB) SetWorkflowModel(ctx context.Context, p tenancy.Principal, workflowID, model string) error {
	if strings.ContainsAny(model, ",\n") || (model != "" && !strings.Contains(model, "/")) {
		return fmt.Errorf("%w: model %q is not a provider/model id", tenancy.ErrInvalid, model)
	}
	q, args := ownerScope(p, true, "workflows")
	c := db.conn()
	res, err := c.exec(ctx, `UPDATE workflows SET model = ? WHERE workflows.id = ? AND `+q, append([]any{model, workflowID}, args...)...)
	if err != nil {
		return fmt.Errorf("store: workflow model: %w", err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return fmt.Errorf("store: workflow model: %w", err)
	} else if n == 0 {
		return workflowDenied(ctx, c, p, workflowID)
	}
	return nil
}
