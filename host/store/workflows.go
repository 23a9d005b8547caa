package store

import (
	"time"

	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/agenthost/agenthost/host/tenancy"
	"github.com/agenthost/agenthost/host/workflows"
)

// ownerScope is scope's sibling for rows private to the user who made them
// (workflows: column user_id). The owner reads and writes them while a
// member of the row's workspace, in any role; a tenant admin reads every row
// of the tenant and writes its own; a conversation its owner shares is read
// (never written) by every member of its workspace. Membership is read at
// query time, as in scope, so leaving a workspace hides one's workflows in
// it at once. Child rows (messages, documents, logs, events) are reached
// only through their workflow's row and this clause.
func ownerScope(p tenancy.Principal, write bool, alias string) (string, []any) {
	q, args := ownScope(p, write, alias)
	if write || p.Admin {
		return q, args
	}
	col := func(c string) string { return alias + "." + c }
	return "(" + q + " OR (" + col("shared") + " = ? AND " + col("tenant_id") + " = ? AND " + col("workspace_id") +
			" IN (SELECT workspace_id FROM memberships WHERE user_id = ?)))",
		append(args, true, p.TenantID, p.UserID)
}

// ownScope is ownerScope without what others share: the rows a person's
// own lists show.
func ownScope(p tenancy.Principal, write bool, alias string) (string, []any) {
	col := func(c string) string { return alias + "." + c }
	if p.Admin {
		if write {
			return col("tenant_id") + " = ? AND " + col("user_id") + " = ?", []any{p.TenantID, p.UserID}
		}
		return col("tenant_id") + " = ?", []any{p.TenantID}
	}
	return col("tenant_id") + " = ? AND " + col("user_id") + " = ? AND " + col("workspace_id") +
			" IN (SELECT workspace_id FROM memberships WHERE user_id = ?)",
		[]any{p.TenantID, p.UserID, p.UserID}
}

// workflowCols lists a workflow's columns, unqualified: RETURNING on SQLite
// wants them so, and the SELECTs read one table.
const workflowCols = `id, tenant_id, workspace_id, user_id, name, status, current_round, exec_task, exec_action, summary,
	bytes_sent, bytes_received, tokens_used, processing_time, cost_chf, started_at, last_activity, outcome, round_trace, pinned, archived_at, branch_message_id, shared`

func scanWorkflow(row interface{ Scan(...any) error }) (workflows.Workflow, error) {
	var w workflows.Workflow
	var status string
	var started, last, archived int64
	err := row.Scan(&w.ID, &w.TenantID, &w.WorkspaceID, &w.UserID, &w.Name, &status, &w.CurrentRound, &w.Exec.Task,
		&w.Exec.Action, &w.Summary, &w.Stats.BytesSent, &w.Stats.BytesReceived, &w.Stats.TokensUsed,
		&w.Stats.ProcessingTime, chfColumn{&w.Stats.CostCHF}, &started, &last, &w.Outcome, &w.RoundTrace, &w.Pinned, &archived, &w.Branch, &w.Shared)
	w.Archived = archived != 0
	w.Status, w.Exec.Round = workflows.Status(status), w.CurrentRound
	w.StartedAt, w.LastActivity = fromMicros(started), fromMicros(last)
	return w, err
}

// workflowDenied explains why a write to workflow id matched no row:
// ErrNotFound when p cannot read it, ErrForbidden when it can (a tenant
// admin and another user's workflow).
func workflowDenied(ctx context.Context, c conn, p tenancy.Principal, id string) error {
	q, args := ownerScope(p, false, "w")
	var one int
	err := c.queryRow(ctx, `SELECT 1 FROM workflows w WHERE w.id = ? AND `+q, append([]any{id}, args...)...).Scan(&one)
	switch {
	case err == nil:
		return fmt.Errorf("%w: only its owner changes workflow %q", tenancy.ErrForbidden, id)
	case errors.Is(err, sql.ErrNoRows):
		return fmt.Errorf("%w: workflow %q", tenancy.ErrNotFound, id)
	}
	return fmt.Errorf("store: workflow: %w", err)
}

// workflowReadable checks that p may read workflow id.
func workflowReadable(ctx context.Context, c conn, p tenancy.Principal, id string) error {
	q, args := ownerScope(p, false, "w")
	var one int
	err := c.queryRow(ctx, `SELECT 1 FROM workflows w WHERE w.id = ? AND `+q, append([]any{id}, args...)...).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("%w: workflow %q", tenancy.ErrNotFound, id)
	}
	if err != nil {
		return fmt.Errorf("store: workflow: %w", err)
	}
	return nil
}

// touchWorkflow locks workflow id for a change of its children (every
// writer of a workflow's rows takes its row first, so they queue in one
// order) and moves its last activity; it reports why when p may not.
func touchWorkflow(ctx context.Context, c conn, p tenancy.Principal, id string) error {
	q, args := ownerScope(p, true, "workflows")
	var got string
	err := c.queryRow(ctx, `UPDATE workflows SET last_activity = ? WHERE workflows.id = ? AND `+q+` RETURNING id`,
		append([]any{micros(now()), id}, args...)...).Scan(&got)
	if errors.Is(err, sql.ErrNoRows) {
		return workflowDenied(ctx, c, p, id)
	}
	if err != nil {
		return fmt.Errorf("store: workflow: %w", err)
	}
	return nil
}

// canStart checks that p may start a workflow in a workspace: a member in
// any role, or a tenant admin. Anything else is ErrNotFound.
func canStart(ctx context.Context, c conn, p tenancy.Principal, workspaceID string) error {
	_, _, err := workspaceLevels(ctx, c, p, workspaceID)
	return err
}

// emitEvent appends the event emit makes for w, inside a transaction that
// already changed w's row.
func emitEvent(ctx context.Context, c conn, w workflows.Workflow, emit workflows.Emit) (workflows.Event, error) {
	if emit == nil {
		return workflows.Event{}, nil
	}
	typ, payload := emit(w)
	data, err := json.Marshal(payload)
	if err != nil {
		return workflows.Event{}, fmt.Errorf("store: %s event: %w", typ, err)
	}
	return appendEventTx(ctx, c, w.ID, typ, data)
}

// CreateWorkflow implements workflows.Store.
func (db *DB) CreateWorkflow(ctx context.Context, p tenancy.Principal, w workflows.Workflow, emit workflows.Emit) (out workflows.Workflow, ev workflows.Event, err error) {
	err = db.tx(ctx, func(c conn) error {
		if err := canStart(ctx, c, p, w.WorkspaceID); err != nil {
			return err
		}
		t := now()
		w = workflows.Workflow{ID: newID(), TenantID: p.TenantID, WorkspaceID: w.WorkspaceID, UserID: p.UserID, Name: w.Name,
			Status: workflows.StatusRunning, CurrentRound: 1, Exec: workflows.Exec{Round: 1}, StartedAt: t, LastActivity: t,
			RoundTrace: w.RoundTrace}
		_, err := c.exec(ctx, `INSERT INTO workflows (id, tenant_id, workspace_id, user_id, name, status, current_round,
			started_at, last_activity, round_trace) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			w.ID, w.TenantID, w.WorkspaceID, w.UserID, w.Name, string(w.Status), w.CurrentRound, micros(t), micros(t), w.RoundTrace)
		if err != nil {
			return fmt.Errorf("store: insert workflow: %w", err)
		}
		out = w
		ev, err = emitEvent(ctx, c, w, emit)
		return err
	})
	return out, ev, err
}

// Workflow implements workflows.Store.
func (db *DB) Workflow(ctx context.Context, p tenancy.Principal, id string) (workflows.Workflow, error) {
	q, args := ownerScope(p, false, "w")
	w, err := scanWorkflow(db.conn().queryRow(ctx, `SELECT `+workflowCols+` FROM workflows w WHERE w.id = ? AND `+q, append([]any{id}, args...)...))
	if errors.Is(err, sql.ErrNoRows) {
		return workflows.Workflow{}, fmt.Errorf("%w: workflow %q", tenancy.ErrNotFound, id)
	}
	if err != nil {
		return workflows.Workflow{}, fmt.Errorf("store: workflow: %w", err)
	}
	return w, nil
}

// Workflows implements workflows.Store.
func (db *DB) Workflows(ctx context.Context, p tenancy.Principal, f workflows.Filter) ([]workflows.Workflow, error) {
	q, args := ownScope(p, false, "w")
	if f.Shared {
		// Conversations other members share in the person's workspaces.
		q, args = "w.shared = ? AND w.tenant_id = ? AND w.user_id <> ? AND w.workspace_id IN (SELECT workspace_id FROM memberships WHERE user_id = ?)",
			[]any{true, p.TenantID, p.UserID, p.UserID}
	}
	where := []string{q}
	if f.WorkspaceID != "" {
		where, args = append(where, "w.workspace_id = ?"), append(args, f.WorkspaceID)
	}
	if f.Status != "" {
		where, args = append(where, "w.status = ?"), append(args, string(f.Status))
	}
	if f.Archived {
		where = append(where, "w.archived_at <> 0")
	} else {
		where = append(where, "w.archived_at = 0")
	}
	if f.Query != "" {
		// LIKE's wildcards in the query are matched as themselves.
		like := "%" + likeEscape(strings.ToLower(f.Query)) + "%"
		where = append(where, `(LOWER(w.name) LIKE ? ESCAPE '\' OR EXISTS (SELECT 1 FROM workflow_messages m
			WHERE m.workflow_id = w.id AND m.role IN ('user', 'assistant') AND LOWER(m.content) LIKE ? ESCAPE '\'))`)
		args = append(args, like, like)
	}
	limit := f.Limit
	if limit <= 0 {
		limit = 50
	}
	rows, err := db.conn().query(ctx, `SELECT `+workflowCols+` FROM workflows w WHERE `+strings.Join(where, " AND ")+
		` ORDER BY w.pinned DESC, w.last_activity DESC, w.id DESC LIMIT ?`, append(args, limit)...)
	if err != nil {
		return nil, fmt.Errorf("store: workflows: %w", err)
	}
	defer rows.Close()
	out := []workflows.Workflow{}
	for rows.Next() {
		w, err := scanWorkflow(rows)
		if err != nil {
			return nil, fmt.Errorf("store: workflows: %w", err)
		}
		out = append(out, w)
	}
	return out, rows.Err()
}

// Transition implements workflows.Store: one conditional UPDATE, so of two
// concurrent changes of a workflow only the first to commit matches.
func (db *DB) Transition(ctx context.Context, p tenancy.Principal, t workflows.Transition) (out workflows.Workflow, ev workflows.Event, err error) {
	if len(t.From) == 0 || !t.To.Valid() {
		return out, ev, fmt.Errorf("%w: transition to %q from %v", tenancy.ErrInvalid, t.To, t.From)
	}
	sets := "status = ?, last_activity = ?, outcome = ?"
	var trace []any
	if t.NewRound {
		sets += ", current_round = current_round + 1, exec_task = 0, exec_action = 0, round_trace = ?"
		trace = []any{t.RoundTrace}
	}
	from := make([]any, len(t.From))
	for i, s := range t.From {
		from[i] = string(s)
	}
	err = db.tx(ctx, func(c conn) error {
		// The retry covers a state that changed between the UPDATE and the
		// SELECT that explains its miss (to one the change is legal from);
		// on SQLite, whose transactions are serial, it never happens.
		for attempt := 0; ; attempt++ {
			q, args := ownerScope(p, true, "workflows")
			args = append(append(append(append([]any{string(t.To), micros(now()), t.Outcome}, trace...), t.ID), from...), args...)
			w, err := scanWorkflow(c.queryRow(ctx, `UPDATE workflows SET `+sets+` WHERE workflows.id = ? AND workflows.status IN (`+
				placeholders(len(from))+`) AND `+q+` RETURNING `+workflowCols, args...))
			if err == nil {
				out = w
				break
			}
			if !errors.Is(err, sql.ErrNoRows) {
				return fmt.Errorf("store: workflow transition: %w", err)
			}
			rq, rargs := ownerScope(p, false, "w")
			var status, owner string
			err = c.queryRow(ctx, `SELECT w.status, w.user_id FROM workflows w WHERE w.id = ? AND `+rq, append([]any{t.ID}, rargs...)...).Scan(&status, &owner)
			switch {
			case errors.Is(err, sql.ErrNoRows):
				return fmt.Errorf("%w: workflow %q", tenancy.ErrNotFound, t.ID)
			case err != nil:
				return fmt.Errorf("store: workflow transition: %w", err)
			case owner != p.UserID:
				return fmt.Errorf("%w: only its owner changes workflow %q", tenancy.ErrForbidden, t.ID)
			case slices.Contains(t.From, workflows.Status(status)) && attempt < 3:
				continue
			}
			return &workflows.TransitionError{WorkflowID: t.ID, From: workflows.Status(status), To: t.To}
		}
		var err error
		ev, err = emitEvent(ctx, c, out, t.Emit)
		return err
	})
	if err != nil {
		return workflows.Workflow{}, workflows.Event{}, err
	}
	return out, ev, nil
}

// UpdateWorkflow implements workflows.Store; statistics are added in SQL, so
// concurrent additions all count.
func (db *DB) UpdateWorkflow(ctx context.Context, p tenancy.Principal, id string, u workflows.Update) (workflows.Workflow, error) {
	sets := []string{"last_activity = ?", "bytes_sent = bytes_sent + ?", "bytes_received = bytes_received + ?",
		"tokens_used = tokens_used + ?", "processing_time = processing_time + ?", "cost_chf = cost_chf + ?"}
	args := []any{micros(now()), u.Stats.BytesSent, u.Stats.BytesReceived, u.Stats.TokensUsed, u.Stats.ProcessingTime, u.Stats.CostCHF.CHF()}
	switch {
	case u.Name != nil && u.NameWas != nil:
		sets, args = append(sets, "name = CASE WHEN name = ? THEN ? ELSE name END"), append(args, *u.NameWas, *u.Name)
	case u.Name != nil:
		sets, args = append(sets, "name = ?"), append(args, *u.Name)
	}
	if u.Summary != nil {
		sets, args = append(sets, "summary = ?"), append(args, *u.Summary)
	}
	if u.Pinned != nil {
		sets, args = append(sets, "pinned = ?"), append(args, *u.Pinned)
	}
	if u.Shared != nil {
		sets, args = append(sets, "shared = ?"), append(args, *u.Shared)
	}
	if u.Branch != nil {
		sets, args = append(sets, "branch_message_id = ?"), append(args, *u.Branch)
	}
	if u.Archived != nil {
		var at int64
		if *u.Archived {
			at = micros(now())
		}
		sets, args = append(sets, "archived_at = ?"), append(args, at)
	}
	q, sargs := ownerScope(p, true, "workflows")
	c := db.conn()
	w, err := scanWorkflow(c.queryRow(ctx, `UPDATE workflows SET `+strings.Join(sets, ", ")+` WHERE workflows.id = ? AND `+q+
		` RETURNING `+workflowCols, append(append(args, id), sargs...)...))
	if errors.Is(err, sql.ErrNoRows) {
		return workflows.Workflow{}, workflowDenied(ctx, c, p, id)
	}
	if err != nil {
		return workflows.Workflow{}, fmt.Errorf("store: update workflow: %w", err)
	}
	return w, nil
}

// AdvanceExec implements workflows.Store.
func (db *DB) AdvanceExec(ctx context.Context, p tenancy.Principal, id string, step workflows.ExecStep) (workflows.Exec, error) {
	var sets string
	switch step {
	case workflows.StepTask:
		sets = "exec_task = exec_task + 1, exec_action = 0"
	case workflows.StepAction:
		sets = "exec_action = exec_action + 1"
	default:
		return workflows.Exec{}, fmt.Errorf("%w: execution step %d", tenancy.ErrInvalid, step)
	}
	q, args := ownerScope(p, true, "workflows")
	c := db.conn()
	var e workflows.Exec
	err := c.queryRow(ctx, `UPDATE workflows SET `+sets+`, last_activity = ? WHERE workflows.id = ? AND `+q+
		` RETURNING current_round, exec_task, exec_action`, append([]any{micros(now()), id}, args...)...).Scan(&e.Round, &e.Task, &e.Action)
	if errors.Is(err, sql.ErrNoRows) {
		return workflows.Exec{}, workflowDenied(ctx, c, p, id)
	}
	if err != nil {
		return workflows.Exec{}, fmt.Errorf("store: workflow execution state: %w", err)
	}
	return e, nil
}

// DeleteWorkflow implements workflows.Store; the schema's cascades take the
// messages, documents, logs and events.
func (db *DB) DeleteWorkflow(ctx context.Context, p tenancy.Principal, id string) error {
	q, args := ownerScope(p, true, "workflows")
	c := db.conn()
	res, err := c.exec(ctx, `DELETE FROM workflows WHERE workflows.id = ? AND `+q, append([]any{id}, args...)...)
	if err != nil {
		return fmt.Errorf("store: delete workflow: %w", err)
	}
	if n, err := res.RowsAffected(); err != nil || n == 0 {
		return workflowDenied(ctx, c, p, id)
	}
	return nil
}

const messageCols = `m.id, m.workflow_id, m.parent_id, m.seq, m.round, m.status, m.role, m.content, m.agent_name,
	m.started_at, m.finished_at, m.bytes_sent, m.bytes_received, m.tokens_used, m.processing_time, m.cost_chf,
	m.feedback_rating, m.feedback_note, m.feedback_at, m.root`

func scanMessage(row interface{ Scan(...any) error }) (workflows.Message, error) {
	var m workflows.Message
	var parent sql.NullString
	var status, role string
	var started int64
	var finished sql.NullInt64
	var fb workflows.Feedback
	var fbAt int64
	err := row.Scan(&m.ID, &m.WorkflowID, &parent, &m.Seq, &m.Round, &status, &role, &m.Content, &m.AgentName,
		&started, &finished, &m.Stats.BytesSent, &m.Stats.BytesReceived, &m.Stats.TokensUsed, &m.Stats.ProcessingTime, chfColumn{&m.Stats.CostCHF},
		&fb.Rating, &fb.Note, &fbAt, &m.Root)
	if fb.Rating != "" {
		fb.At = fromMicros(fbAt)
		m.Feedback = &fb
	}
	m.ParentID, m.Status, m.Role = parent.String, workflows.MessageStatus(status), workflows.Role(role)
	m.StartedAt, m.FinishedAt = fromMicros(started), fromNullMicros(finished)
	m.Documents = []workflows.Document{}
	return m, err
}

const documentCols = `d.id, d.message_id, d.file_id, d.name, d.mime_type, d.size, d.label`

func scanDocument(row interface{ Scan(...any) error }) (workflows.Document, error) {
	var d workflows.Document
	err := row.Scan(&d.ID, &d.MessageID, &d.FileID, &d.Name, &d.MIMEType, &d.Size, &d.Label)
	return d, err
}

// AddMessage implements workflows.Store: the message, its documents and its
// `message` event in one transaction, so a reader never sees a message
// without its documents.
func (db *DB) AddMessage(ctx context.Context, p tenancy.Principal, m workflows.Message) (out workflows.Message, ev workflows.Event, err error) {
	err = db.tx(ctx, func(c conn) error {
		q, args := ownerScope(p, true, "workflows")
		t := now()
		var round int
		err := c.queryRow(ctx, `UPDATE workflows SET message_seq = message_seq + 1, last_activity = ? WHERE workflows.id = ? AND `+q+
			` RETURNING message_seq, current_round`, append([]any{micros(t), m.WorkflowID}, args...)...).Scan(&m.Seq, &round)
		if errors.Is(err, sql.ErrNoRows) {
			return workflowDenied(ctx, c, p, m.WorkflowID)
		}
		if err != nil {
			return fmt.Errorf("store: message: %w", err)
		}
		switch {
		case m.Round == 0:
			m.Round = round
		case m.Round > round:
			return fmt.Errorf("%w: message round %d is after the workflow's current round %d", tenancy.ErrInvalid, m.Round, round)
		}
		if m.ParentID != "" {
			var one int
			err := c.queryRow(ctx, `SELECT 1 FROM workflow_messages WHERE id = ? AND workflow_id = ?`, m.ParentID, m.WorkflowID).Scan(&one)
			if errors.Is(err, sql.ErrNoRows) {
				return fmt.Errorf("%w: parent message %q is not in workflow %q", tenancy.ErrNotFound, m.ParentID, m.WorkflowID)
			}
			if err != nil {
				return fmt.Errorf("store: parent message: %w", err)
			}
		}
		if m.ID == "" {
			m.ID = newID()
		}
		if m.StartedAt.IsZero() {
			m.StartedAt = t
		}
		m.StartedAt = fromMicros(micros(m.StartedAt))
		if m.FinishedAt != nil {
			f := fromMicros(micros(*m.FinishedAt))
			m.FinishedAt = &f
		}
		_, err = c.exec(ctx, `INSERT INTO workflow_messages (id, workflow_id, parent_id, seq, round, status, role, content, agent_name,
			started_at, finished_at, bytes_sent, bytes_received, tokens_used, processing_time, cost_chf, root)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			m.ID, m.WorkflowID, nullString(m.ParentID), m.Seq, m.Round, string(m.Status), string(m.Role), m.Content, m.AgentName,
			micros(m.StartedAt), nullMicros(m.FinishedAt), m.Stats.BytesSent, m.Stats.BytesReceived, m.Stats.TokensUsed,
			m.Stats.ProcessingTime, m.Stats.CostCHF.CHF(), m.Root)
		if isUnique(err) {
			return fmt.Errorf("%w: a message with id %q exists", tenancy.ErrConflict, m.ID)
		}
		if err != nil {
			return fmt.Errorf("store: insert message: %w", err)
		}
		docs := make([]workflows.Document, 0, len(m.Documents))
		fq, fargs := scope(p, false, "f", "shared")
		for i, d := range m.Documents {
			// The bridge binds only files the principal can read: a document
			// is a way to reach a file's content, never around its scope.
			var name, mimeType string
			var size int64
			err := c.queryRow(ctx, `SELECT f.name, f.mime_type, f.size FROM files f WHERE f.id = ? AND `+fq,
				append([]any{d.FileID}, fargs...)...).Scan(&name, &mimeType, &size)
			if errors.Is(err, sql.ErrNoRows) {
				return fmt.Errorf("%w: file %q", tenancy.ErrNotFound, d.FileID)
			}
			if err != nil {
				return fmt.Errorf("store: document file: %w", err)
			}
			d.ID, d.MessageID = newID(), m.ID
			if d.Name == "" {
				d.Name = name
			}
			if d.MIMEType == "" {
				d.MIMEType = mimeType
			}
			if d.Size == 0 {
				d.Size = size
			}
			_, err = c.exec(ctx, `INSERT INTO workflow_documents (id, message_id, workflow_id, file_id, position, name, mime_type, size, label)
				VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`, d.ID, d.MessageID, m.WorkflowID, d.FileID, i, d.Name, d.MIMEType, d.Size, d.Label)
			if err != nil {
				return fmt.Errorf("store: insert document: %w", err)
			}
			docs = append(docs, d)
		}
		m.Documents = docs
		data, err := json.Marshal(m)
		if err != nil {
			return fmt.Errorf("store: message event: %w", err)
		}
		ev, err = appendEventTx(ctx, c, m.WorkflowID, workflows.EventMessage, data)
		out = m
		return err
	})
	if err != nil {
		return workflows.Message{}, workflows.Event{}, err
	}
	return out, ev, nil
}

// afterSeq checks that p may read the workflow and turns a listing position
// into a sequence number, in one query: an After.ID must name a row of table
// in the workflow.
func afterSeq(ctx context.Context, c conn, p tenancy.Principal, table, what, workflowID string, after workflows.After) (int64, error) {
	q, args := ownerScope(p, false, "w")
	var seq sql.NullInt64
	err := c.queryRow(ctx, `SELECT (SELECT x.seq FROM `+table+` x WHERE x.workflow_id = w.id AND x.id = ?) FROM workflows w WHERE w.id = ? AND `+q,
		append([]any{after.ID, workflowID}, args...)...).Scan(&seq)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return 0, fmt.Errorf("%w: workflow %q", tenancy.ErrNotFound, workflowID)
	case err != nil:
		return 0, fmt.Errorf("store: %s listing: %w", what, err)
	case after.ID == "":
		return max(after.Seq, 0), nil
	case !seq.Valid:
		return 0, fmt.Errorf("%w: %s %q is not in workflow %q", tenancy.ErrNotFound, what, after.ID, workflowID)
	}
	return seq.Int64, nil
}

// Messages implements workflows.Store.
func (db *DB) Messages(ctx context.Context, p tenancy.Principal, workflowID string, after workflows.After, limit int) ([]workflows.Message, error) {
	c := db.conn()
	from, err := afterSeq(ctx, c, p, "workflow_messages", "message", workflowID, after)
	if err != nil {
		return nil, err
	}
	rows, err := c.query(ctx, `SELECT `+messageCols+` FROM workflow_messages m WHERE m.workflow_id = ? AND m.seq > ? ORDER BY m.seq LIMIT ?`,
		workflowID, from, limit)
	if err != nil {
		return nil, fmt.Errorf("store: messages: %w", err)
	}
	defer rows.Close()
	out := []workflows.Message{}
	idx := map[string]int{}
	for rows.Next() {
		m, err := scanMessage(rows)
		if err != nil {
			return nil, fmt.Errorf("store: messages: %w", err)
		}
		idx[m.ID] = len(out)
		out = append(out, m)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: messages: %w", err)
	}
	rows.Close()
	if len(out) == 0 {
		return out, nil
	}
	// One query for every listed message's documents: their seqs are a
	// contiguous range of the workflow.
	drows, err := c.query(ctx, `SELECT `+documentCols+` FROM workflow_documents d JOIN workflow_messages m ON m.id = d.message_id
		WHERE d.workflow_id = ? AND m.seq BETWEEN ? AND ? ORDER BY m.seq, d.position`, workflowID, out[0].Seq, out[len(out)-1].Seq)
	if err != nil {
		return nil, fmt.Errorf("store: documents: %w", err)
	}
	defer drows.Close()
	for drows.Next() {
		d, err := scanDocument(drows)
		if err != nil {
			return nil, fmt.Errorf("store: documents: %w", err)
		}
		if i, ok := idx[d.MessageID]; ok {
			out[i].Documents = append(out[i].Documents, d)
		}
	}
	return out, drows.Err()
}

// DeleteMessage implements workflows.Store.
func (db *DB) DeleteMessage(ctx context.Context, p tenancy.Principal, workflowID, messageID string) error {
	return db.tx(ctx, func(c conn) error {
		if err := touchWorkflow(ctx, c, p, workflowID); err != nil {
			return err
		}
		res, err := c.exec(ctx, `DELETE FROM workflow_messages WHERE id = ? AND workflow_id = ?`, messageID, workflowID)
		if err != nil {
			return fmt.Errorf("store: delete message: %w", err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return fmt.Errorf("%w: message %q in workflow %q", tenancy.ErrNotFound, messageID, workflowID)
		}
		return nil
	})
}

// SetMessageFeedback implements workflows.Store. The returned message has
// no documents.
func (db *DB) SetMessageFeedback(ctx context.Context, p tenancy.Principal, workflowID, messageID string, f workflows.Feedback) (out workflows.Message, err error) {
	err = db.tx(ctx, func(c conn) error {
		if err := touchWorkflow(ctx, c, p, workflowID); err != nil {
			return err
		}
		var at int64
		if f.Rating != "" {
			at = micros(f.At)
		}
		res, err := c.exec(ctx, `UPDATE workflow_messages SET feedback_rating = ?, feedback_note = ?, feedback_at = ?
			WHERE id = ? AND workflow_id = ? AND role = 'assistant' AND status = 'last'`, f.Rating, f.Note, at, messageID, workflowID)
		if err != nil {
			return fmt.Errorf("store: message feedback: %w", err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return fmt.Errorf("%w: answer %q in workflow %q", tenancy.ErrNotFound, messageID, workflowID)
		}
		out, err = scanMessage(c.queryRow(ctx, `SELECT `+messageCols+` FROM workflow_messages m WHERE m.id = ?`, messageID))
		if err != nil {
			return fmt.Errorf("store: message feedback: %w", err)
		}
		return nil
	})
	return out, err
}

// RemoveMessageFile implements workflows.Store. fileID names the stored file
// or, equally, the document (the HTTP route's {fileId} may carry either).
func (db *DB) RemoveMessageFile(ctx context.Context, p tenancy.Principal, workflowID, messageID, fileID string) error {
	return db.tx(ctx, func(c conn) error {
		if err := touchWorkflow(ctx, c, p, workflowID); err != nil {
			return err
		}
		res, err := c.exec(ctx, `DELETE FROM workflow_documents WHERE workflow_id = ? AND message_id = ? AND (file_id = ? OR id = ?)`,
			workflowID, messageID, fileID, fileID)
		if err != nil {
			return fmt.Errorf("store: remove file from message: %w", err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return fmt.Errorf("%w: file %q in message %q of workflow %q", tenancy.ErrNotFound, fileID, messageID, workflowID)
		}
		return nil
	})
}

// Documents implements workflows.Store.
func (db *DB) Documents(ctx context.Context, p tenancy.Principal, workflowID string, ids, labels []string) ([]workflows.Document, error) {
	c := db.conn()
	if err := workflowReadable(ctx, c, p, workflowID); err != nil {
		return nil, err
	}
	out := []workflows.Document{}
	var ors []string
	args := []any{workflowID}
	if len(ids) > 0 {
		ors = append(ors, "d.id IN ("+placeholders(len(ids))+")")
		for _, id := range ids {
			args = append(args, id)
		}
	}
	if len(labels) > 0 {
		ors = append(ors, "d.label IN ("+placeholders(len(labels))+")")
		for _, l := range labels {
			args = append(args, l)
		}
	}
	if len(ors) == 0 {
		return out, nil
	}
	rows, err := c.query(ctx, `SELECT `+documentCols+` FROM workflow_documents d JOIN workflow_messages m ON m.id = d.message_id
		WHERE d.workflow_id = ? AND (`+strings.Join(ors, " OR ")+`) ORDER BY m.seq, d.position`, args...)
	if err != nil {
		return nil, fmt.Errorf("store: documents: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		d, err := scanDocument(rows)
		if err != nil {
			return nil, fmt.Errorf("store: documents: %w", err)
		}
		out = append(out, d)
	}
	return out, rows.Err()
}

const logCols = `l.id, l.workflow_id, l.seq, l.message, l.type, l.created_at, l.agent_name, l.status, l.progress`

func scanLog(row interface{ Scan(...any) error }) (workflows.Log, error) {
	var l workflows.Log
	var typ, status string
	var at int64
	err := row.Scan(&l.ID, &l.WorkflowID, &l.Seq, &l.Message, &typ, &at, &l.AgentName, &status, &l.Progress)
	l.Type, l.Status, l.Timestamp = workflows.LogType(typ), workflows.Status(status), fromMicros(at)
	return l, err
}

// AddLog implements workflows.Store.
func (db *DB) AddLog(ctx context.Context, p tenancy.Principal, l workflows.Log) (out workflows.Log, err error) {
	err = db.tx(ctx, func(c conn) error {
		q, args := ownerScope(p, true, "workflows")
		t := now()
		var status string
		err := c.queryRow(ctx, `UPDATE workflows SET log_seq = log_seq + 1, last_activity = ? WHERE workflows.id = ? AND `+q+
			` RETURNING log_seq, status`, append([]any{micros(t), l.WorkflowID}, args...)...).Scan(&l.Seq, &status)
		if errors.Is(err, sql.ErrNoRows) {
			return workflowDenied(ctx, c, p, l.WorkflowID)
		}
		if err != nil {
			return fmt.Errorf("store: log: %w", err)
		}
		if l.Status == "" {
			l.Status = workflows.Status(status)
		}
		l.ID, l.Timestamp = newID(), t
		_, err = c.exec(ctx, `INSERT INTO workflow_logs (id, workflow_id, seq, message, type, created_at, agent_name, status, progress)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`, l.ID, l.WorkflowID, l.Seq, l.Message, string(l.Type), micros(t), l.AgentName, string(l.Status), l.Progress)
		if err != nil {
			return fmt.Errorf("store: insert log: %w", err)
		}
		out = l
		return nil
	})
	return out, err
}

// Logs implements workflows.Store.
func (db *DB) Logs(ctx context.Context, p tenancy.Principal, workflowID string, after workflows.After, limit int) ([]workflows.Log, error) {
	c := db.conn()
	from, err := afterSeq(ctx, c, p, "workflow_logs", "log entry", workflowID, after)
	if err != nil {
		return nil, err
	}
	rows, err := c.query(ctx, `SELECT `+logCols+` FROM workflow_logs l WHERE l.workflow_id = ? AND l.seq > ? ORDER BY l.seq LIMIT ?`,
		workflowID, from, limit)
	if err != nil {
		return nil, fmt.Errorf("store: logs: %w", err)
	}
	defer rows.Close()
	out := []workflows.Log{}
	for rows.Next() {
		l, err := scanLog(rows)
		if err != nil {
			return nil, fmt.Errorf("store: logs: %w", err)
		}
		out = append(out, l)
	}
	return out, rows.Err()
}

// RunningWorkflowsBefore lists workflows still marked running whose last
// activity is older than before: after a crash, rounds nobody runs any more
// (administrative: no principal; the caller acts as each owner). A round
// that waits for approval runs nowhere by design and is not listed.
func (db *DB) RunningWorkflowsBefore(ctx context.Context, before time.Time) ([]workflows.Workflow, error) {
	rows, err := db.conn().query(ctx, `SELECT `+workflowCols+` FROM workflows WHERE status = 'running' AND outcome <> ? AND last_activity < ? ORDER BY last_activity LIMIT 1000`,
		workflows.OutcomeWaitingForApproval, micros(before))
	if err != nil {
		return nil, fmt.Errorf("store: running workflows: %w", err)
	}
	defer rows.Close()
	var out []workflows.Workflow
	for rows.Next() {
		w, err := scanWorkflow(rows)
		if err != nil {
			return nil, fmt.Errorf("store: running workflows: %w", err)
		}
		out = append(out, w)
	}
	return out, rows.Err()
}

// SetRoundHost records which host runs the workflow's current round
// (administrative: the caller started the round).
func (db *DB) SetRoundHost(ctx context.Context, workflowID, hostID string) error {
	if _, err := db.conn().exec(ctx, `UPDATE workflows SET host_id = ? WHERE id = ?`, hostID, workflowID); err != nil {
		return fmt.Errorf("store: round host: %w", err)
	}
	return nil
}

// HostedRounds lists running rounds that name a host, for the hosts that
// look for rounds whose host died (administrative: no principal).
func (db *DB) HostedRounds(ctx context.Context) ([]workflows.HostedRound, error) {
	rows, err := db.conn().query(ctx, `SELECT `+workflowCols+`, host_id FROM workflows WHERE status = 'running' AND host_id <> '' ORDER BY last_activity LIMIT 1000`)
	if err != nil {
		return nil, fmt.Errorf("store: hosted rounds: %w", err)
	}
	defer rows.Close()
	var out []workflows.HostedRound
	for rows.Next() {
		var h workflows.HostedRound
		w, err := scanWorkflow(hostScanner{rows, &h.HostID})
		if err != nil {
			return nil, fmt.Errorf("store: hosted rounds: %w", err)
		}
		h.Workflow = w
		out = append(out, h)
	}
	return out, rows.Err()
}

// ClaimRound moves a running round from one host to another, if it is
// still running on the first: of several hosts claiming the same orphan,
// exactly one succeeds.
func (db *DB) ClaimRound(ctx context.Context, workflowID, from, to string) (bool, error) {
	res, err := db.conn().exec(ctx, `UPDATE workflows SET host_id = ? WHERE id = ? AND host_id = ? AND status = 'running'`, to, workflowID, from)
	if err != nil {
		return false, fmt.Errorf("store: claiming a round: %w", err)
	}
	n, err := res.RowsAffected()
	return n == 1, err
}

// RoundHost returns the host stamped on the workflow's round ("" when
// none), for a host to check that a round it runs is still its own
// (administrative).
func (db *DB) RoundHost(ctx context.Context, workflowID string) (string, error) {
	var host string
	if err := db.conn().queryRow(ctx, `SELECT host_id FROM workflows WHERE id = ?`, workflowID).Scan(&host); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return "", fmt.Errorf("store: round host: %w", tenancy.ErrNotFound)
		}
		return "", fmt.Errorf("store: round host: %w", err)
	}
	return host, nil
}

// hostScanner scans a workflow row followed by its host id.
type hostScanner struct {
	row  interface{ Scan(...any) error }
	host *string
}

func (h hostScanner) Scan(dest ...any) error { return h.row.Scan(append(dest, h.host)...) }
