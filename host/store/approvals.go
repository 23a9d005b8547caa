package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/agenthost/agenthost/host/tenancy"
	"github.com/agenthost/agenthost/host/workflows"
)

// ToolPolicies returns a workspace's approval policies set by its admins,
// by tool name (tools without one follow the default). Any member (and the
// tenant's admin) may read them.
func (db *DB) ToolPolicies(ctx context.Context, p tenancy.Principal, workspaceID string) (map[string]string, error) {
	if _, _, err := db.Levels(ctx, p, workspaceID); err != nil {
		return nil, err
	}
	rows, err := db.conn().query(ctx, `SELECT tool, policy FROM workspace_tool_policies WHERE workspace_id = ?`, workspaceID)
	if err != nil {
		return nil, fmt.Errorf("store: tool policies: %w", err)
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var tool, policy string
		if err := rows.Scan(&tool, &policy); err != nil {
			return nil, fmt.Errorf("store: tool policies: %w", err)
		}
		out[tool] = policy
	}
	return out, rows.Err()
}

// SetToolPolicy sets the approval policy of a workspace's tool ("auto",
// "ask", "deny"; "" returns it to the default) and returns the one it
// replaced ("" for the default). It is the workspace's configuration: a
// manager of the workspace or the tenant's admin; other members get
// ErrForbidden, outsiders ErrNotFound.
func (db *DB) SetToolPolicy(ctx context.Context, p tenancy.Principal, workspaceID, tool, policy string) (string, error) {
	switch policy {
	case "", "auto", "ask", "deny":
	default:
		return "", fmt.Errorf("%w: policy %q is not auto, ask or deny", tenancy.ErrInvalid, policy)
	}
	if tool == "" || len(tool) > 200 {
		return "", fmt.Errorf("%w: tool name", tenancy.ErrInvalid)
	}
	var was string
	err := db.tx(ctx, func(c conn) error {
		_, write, err := workspaceLevels(ctx, c, p, workspaceID)
		if err != nil {
			return err
		}
		if write != tenancy.Group && write != tenancy.All {
			return fmt.Errorf("%w: only a manager of the workspace or the tenant's admin sets its approval policies", tenancy.ErrForbidden)
		}
		err = c.queryRow(ctx, `SELECT policy FROM workspace_tool_policies WHERE workspace_id = ? AND tool = ?`, workspaceID, tool).Scan(&was)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("store: tool policy: %w", err)
		}
		if _, err := c.exec(ctx, `DELETE FROM workspace_tool_policies WHERE workspace_id = ? AND tool = ?`, workspaceID, tool); err != nil {
			return fmt.Errorf("store: tool policy: %w", err)
		}
		if policy == "" {
			return nil
		}
		if _, err := c.exec(ctx, `INSERT INTO workspace_tool_policies (workspace_id, tool, policy, updated_by, updated_at) VALUES (?, ?, ?, ?, ?)`,
			workspaceID, tool, policy, p.UserID, micros(time.Now())); err != nil {
			return fmt.Errorf("store: tool policy: %w", err)
		}
		return nil
	})
	return was, err
}

const approvalCols = `id, tenant_id, workflow_id, pause_id, round, call_id, tool, external, arguments, reason, state,
	decided_arguments, decision_reason, decided_by, checkpoint, created_at, expires_at, decided_at`

func scanApproval(row interface{ Scan(...any) error }) (workflows.Approval, error) {
	var a workflows.Approval
	var args, decided, cp string
	var created, expires int64
	var decidedAt sql.NullInt64
	if err := row.Scan(&a.ID, &a.TenantID, &a.WorkflowID, &a.PauseID, &a.Round, &a.CallID, &a.Tool, &a.External, &args, &a.Reason, &a.State,
		&decided, &a.DecisionReason, &a.DecidedBy, &cp, &created, &expires, &decidedAt); err != nil {
		return a, err
	}
	a.Arguments, a.Checkpoint = []byte(args), []byte(cp)
	if decided != "" {
		a.DecidedArguments = []byte(decided)
	}
	a.CreatedAt, a.ExpiresAt = fromMicros(created), fromMicros(expires)
	if decidedAt.Valid {
		t := fromMicros(decidedAt.Int64)
		a.DecidedAt = &t
	}
	return a, nil
}

// PauseRound stores the approvals a paused round waits for (one pause:
// their PauseID is set here) and marks the workflow as waiting: its outcome
// becomes waitingForApproval and its round carries no host, so that no
// host takes it over while nobody runs it (administrative: the round's
// host calls it for the workflow's owner). The workflow must be running.
func (db *DB) PauseRound(ctx context.Context, workflowID string, as []workflows.Approval) ([]workflows.Approval, error) {
	pause := uuid.Must(uuid.NewV7()).String()
	now := time.Now()
	err := db.tx(ctx, func(c conn) error {
		var tenant string
		err := c.queryRow(ctx, `SELECT tenant_id FROM workflows WHERE id = ? AND status = 'running'`, workflowID).Scan(&tenant)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("store: pausing a round: %w: workflow %q is not running", tenancy.ErrConflict, workflowID)
		}
		if err != nil {
			return fmt.Errorf("store: pausing a round: %w", err)
		}
		for i := range as {
			a := &as[i]
			a.ID, a.TenantID, a.WorkflowID, a.PauseID, a.State, a.CreatedAt = uuid.Must(uuid.NewV7()).String(), tenant, workflowID, pause, workflows.ApprovalPending, now.UTC()
			if _, err := c.exec(ctx, `INSERT INTO tool_approvals (`+approvalCols+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, '', '', '', ?, ?, ?, NULL)`,
				a.ID, a.TenantID, a.WorkflowID, a.PauseID, a.Round, a.CallID, a.Tool, a.External, string(a.Arguments), a.Reason, a.State,
				string(a.Checkpoint), micros(now), micros(a.ExpiresAt)); err != nil {
				return fmt.Errorf("store: pausing a round: %w", err)
			}
		}
		if _, err := c.exec(ctx, `UPDATE workflows SET outcome = ?, host_id = '' WHERE id = ?`, workflows.OutcomeWaitingForApproval, workflowID); err != nil {
			return fmt.Errorf("store: pausing a round: %w", err)
		}
		return nil
	})
	return as, err
}

// Approvals lists a workflow's approvals, oldest first, for a principal
// who may read the workflow.
func (db *DB) Approvals(ctx context.Context, p tenancy.Principal, workflowID string) ([]workflows.Approval, error) {
	if _, err := db.Workflow(ctx, p, workflowID); err != nil {
		return nil, err
	}
	return queryAll(ctx, db.conn(), "approvals", scanApproval,
		`SELECT `+approvalCols+` FROM tool_approvals WHERE workflow_id = ? ORDER BY created_at, id LIMIT 1000`, workflowID)
}

// Approval returns one approval (administrative: the caller checked the
// workflow's access).
func (db *DB) Approval(ctx context.Context, id string) (workflows.Approval, error) {
	a, err := scanApproval(db.conn().queryRow(ctx, `SELECT `+approvalCols+` FROM tool_approvals WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return a, fmt.Errorf("store: approval: %w", tenancy.ErrNotFound)
	}
	if err != nil {
		return a, fmt.Errorf("store: approval: %w", err)
	}
	return a, nil
}

// PauseApprovals lists the approvals of one pause (administrative).
func (db *DB) PauseApprovals(ctx context.Context, pauseID string) ([]workflows.Approval, error) {
	return queryAll(ctx, db.conn(), "approvals", scanApproval,
		`SELECT `+approvalCols+` FROM tool_approvals WHERE pause_id = ? ORDER BY created_at, id`, pauseID)
}

// DecideApproval records a decision on a pending approval: of two
// decisions (two people, two hosts, a person and the expiry) exactly one
// is recorded; the other gets false (administrative: the caller checked
// the principal).
func (db *DB) DecideApproval(ctx context.Context, id string, state workflows.ApprovalState, args []byte, reason, by string) (bool, error) {
	res, err := db.conn().exec(ctx, `UPDATE tool_approvals SET state = ?, decided_arguments = ?, decision_reason = ?, decided_by = ?, decided_at = ?
		WHERE id = ? AND state = 'pending'`, state, string(args), reason, by, micros(time.Now()), id)
	if err != nil {
		return false, fmt.Errorf("store: deciding an approval: %w", err)
	}
	n, err := res.RowsAffected()
	return n == 1, err
}

// ClaimResume claims the resumption of a pause whose approvals are all
// decided, for the host that calls it (hostID is stamped on the round):
// of several hosts, exactly one gets true. The workflow's outcome is
// cleared (it runs again) in the same transaction, if it is still running.
func (db *DB) ClaimResume(ctx context.Context, pauseID, hostID string) (bool, error) {
	ok := false
	err := db.tx(ctx, func(c conn) error {
		res, err := c.exec(ctx, `UPDATE tool_approvals SET resumed = 1 WHERE pause_id = ? AND resumed = 0
			AND NOT EXISTS (SELECT 1 FROM tool_approvals p WHERE p.pause_id = ? AND p.state = 'pending')`, pauseID, pauseID)
		if err != nil {
			return fmt.Errorf("store: claiming a resumption: %w", err)
		}
		n, err := res.RowsAffected()
		if err != nil || n == 0 {
			return err
		}
		res, err = c.exec(ctx, `UPDATE workflows SET outcome = '', host_id = ? WHERE status = 'running' AND outcome = ?
			AND id = (SELECT workflow_id FROM tool_approvals WHERE pause_id = ? LIMIT 1)`, hostID, workflows.OutcomeWaitingForApproval, pauseID)
		if err != nil {
			return fmt.Errorf("store: claiming a resumption: %w", err)
		}
		n, err = res.RowsAffected()
		ok = n == 1
		return err
	})
	return ok, err
}

// ExpiredApprovals lists pending approvals whose time ran out before now
// (administrative: the hosts' periodic sweep).
func (db *DB) ExpiredApprovals(ctx context.Context, now time.Time) ([]workflows.Approval, error) {
	return queryAll(ctx, db.conn(), "expired approvals", scanApproval,
		`SELECT `+approvalCols+` FROM tool_approvals WHERE state = 'pending' AND expires_at < ? ORDER BY expires_at LIMIT 100`, micros(now))
}

// ApprovalWorkflow returns the workflow an approval belongs to
// (administrative: the expiry sweep acts as the workflow's owner).
func (db *DB) ApprovalWorkflow(ctx context.Context, approvalID string) (workflows.Workflow, error) {
	w, err := scanWorkflow(db.conn().queryRow(ctx, `SELECT `+workflowCols+` FROM workflows WHERE id = (SELECT workflow_id FROM tool_approvals WHERE id = ?)`, approvalID))
	if errors.Is(err, sql.ErrNoRows) {
		return w, fmt.Errorf("store: approval's workflow: %w", tenancy.ErrNotFound)
	}
	if err != nil {
		return w, fmt.Errorf("store: approval's workflow: %w", err)
	}
	return w, nil
}

// UnresumedPauses lists pauses whose approvals are all decided but which
// no host has resumed (the deciding host died between its decision and
// its claim, or had no model), for the hosts' periodic sweep
// (administrative).
func (db *DB) UnresumedPauses(ctx context.Context) ([]string, error) {
	return queryAll(ctx, db.conn(), "unresumed pauses", func(row interface{ Scan(...any) error }) (string, error) {
		var id string
		return id, row.Scan(&id)
	}, `SELECT pause_id FROM tool_approvals WHERE resumed = 0 GROUP BY pause_id
		HAVING SUM(CASE WHEN state = 'pending' THEN 1 ELSE 0 END) = 0 LIMIT 100`)
}
