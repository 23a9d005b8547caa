package store

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/agenthost/agenthost/host/tenancy"
	"github.com/agenthost/agenthost/host/workflows"
)

// Workflow events: one row per event, numbered per workflow by the
// workflow row's event_seq counter. Bumping the counter with UPDATE …
// RETURNING locks the workflow row until the event's transaction commits, so
// concurrent appenders (goroutines or hosts) queue on it: numbers are
// gap-free and unique, and commit in order, so a reader that sees event n+1
// also sees n. Only the workflow's owner appends.

// AppendEvent implements workflows.Store. It is on the path of every
// streamed token, so it is one short transaction: on PostgreSQL a single
// statement (the counter bump and the insert in one CTE, one round trip), on
// SQLite two statements in one immediate transaction (in-process, no round
// trips to save).
func (db *DB) AppendEvent(ctx context.Context, p tenancy.Principal, workflowID string, typ workflows.EventType, data json.RawMessage) (workflows.Event, error) {
	q, args := ownerScope(p, true, "workflows")
	t := now()
	if db.dialect == Postgres {
		c := db.conn()
		var seq int64
		err := c.queryRow(ctx, `WITH s AS (
				UPDATE workflows SET event_seq = event_seq + 1, last_activity = ? WHERE workflows.id = ? AND `+q+` RETURNING id, event_seq)
			INSERT INTO events (workflow_id, seq, type, data, created_at) SELECT s.id, s.event_seq, ?::text, ?::text, ?::bigint FROM s RETURNING seq`,
			append(append([]any{micros(t), workflowID}, args...), string(typ), string(data), micros(t))...).Scan(&seq)
		if errors.Is(err, sql.ErrNoRows) {
			return workflows.Event{}, workflowDenied(ctx, c, p, workflowID)
		}
		if err != nil {
			return workflows.Event{}, fmt.Errorf("store: append event: %w", err)
		}
		return workflows.Event{WorkflowID: workflowID, Seq: seq, Type: typ, Data: data, Time: t}, nil
	}
	var ev workflows.Event
	err := db.tx(ctx, func(c conn) error {
		var seq int64
		err := c.queryRow(ctx, `UPDATE workflows SET event_seq = event_seq + 1, last_activity = ? WHERE workflows.id = ? AND `+q+` RETURNING event_seq`,
			append([]any{micros(t), workflowID}, args...)...).Scan(&seq)
		if errors.Is(err, sql.ErrNoRows) {
			return workflowDenied(ctx, c, p, workflowID)
		}
		if err != nil {
			return fmt.Errorf("store: append event: %w", err)
		}
		ev = workflows.Event{WorkflowID: workflowID, Seq: seq, Type: typ, Data: data, Time: t}
		return insertEvent(ctx, c, ev)
	})
	if err != nil {
		return workflows.Event{}, err
	}
	return ev, nil
}

// appendEventTx appends an event inside a transaction that has already
// checked the principal's right to change the workflow and moved its last
// activity (so the workflow it returns stays true).
func appendEventTx(ctx context.Context, c conn, workflowID string, typ workflows.EventType, data json.RawMessage) (workflows.Event, error) {
	t := now()
	var seq int64
	err := c.queryRow(ctx, `UPDATE workflows SET event_seq = event_seq + 1 WHERE id = ? RETURNING event_seq`, workflowID).Scan(&seq)
	if err != nil {
		return workflows.Event{}, fmt.Errorf("store: append event: %w", err)
	}
	ev := workflows.Event{WorkflowID: workflowID, Seq: seq, Type: typ, Data: data, Time: t}
	return ev, insertEvent(ctx, c, ev)
}

func insertEvent(ctx context.Context, c conn, ev workflows.Event) error {
	_, err := c.exec(ctx, `INSERT INTO events (workflow_id, seq, type, data, created_at) VALUES (?, ?, ?, ?, ?)`,
		ev.WorkflowID, ev.Seq, string(ev.Type), string(ev.Data), micros(ev.Time))
	if err != nil {
		return fmt.Errorf("store: insert event: %w", err)
	}
	return nil
}

// Events implements workflows.Store (and workflows.EventSource). Every live
// subscriber runs it, so the access check and the read are one query: a
// sentinel row (seq 0) that exists only when p may read the workflow, and
// the events after afterSeq straight off the (workflow_id, seq) key, guarded
// by the same check evaluated once. (A join of the two would make
// PostgreSQL read and sort every later event before applying the limit.)
func (db *DB) Events(ctx context.Context, p tenancy.Principal, workflowID string, afterSeq int64, limit int) ([]workflows.Event, error) {
	if limit <= 0 {
		limit = workflows.MaxEventsPage
	}
	q, args := ownerScope(p, false, "w")
	all := []any{workflowID}
	all = append(all, args...)
	all = append(all, workflowID, afterSeq, workflowID)
	all = append(all, args...)
	all = append(all, limit)
	rows, err := db.conn().query(ctx, `SELECT 0, '', '', 0 FROM workflows w WHERE w.id = ? AND `+q+`
		UNION ALL
		SELECT seq, type, data, created_at FROM (
			SELECT e.seq, e.type, e.data, e.created_at FROM events e
			WHERE e.workflow_id = ? AND e.seq > ? AND EXISTS (SELECT 1 FROM workflows w WHERE w.id = ? AND `+q+`)
			ORDER BY e.seq LIMIT ?) x`, all...)
	if err != nil {
		return nil, fmt.Errorf("store: events: %w", err)
	}
	defer rows.Close()
	out := []workflows.Event{}
	found := false
	for rows.Next() {
		var seq, at int64
		var typ, data string
		if err := rows.Scan(&seq, &typ, &data, &at); err != nil {
			return nil, fmt.Errorf("store: events: %w", err)
		}
		if seq == 0 {
			found = true
			continue
		}
		out = append(out, workflows.Event{WorkflowID: workflowID, Seq: seq, Type: workflows.EventType(typ),
			Data: json.RawMessage(data), Time: fromMicros(at)})
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: events: %w", err)
	}
	if !found {
		return nil, fmt.Errorf("%w: workflow %q", tenancy.ErrNotFound, workflowID)
	}
	// UNION ALL keeps its branches' order in both databases, but SQL does
	// not promise it.
	slices.SortFunc(out, func(a, b workflows.Event) int { return cmp.Compare(a.Seq, b.Seq) })
	return out, nil
}

// EventHeads implements workflows.EventSource: the last event number of each
// listed workflow, in one query. It applies no access scope; it serves the
// broker, which only learns that a workflow moved and then reads the events
// with the subscriber's principal.
func (db *DB) EventHeads(ctx context.Context, workflowIDs []string) (map[string]int64, error) {
	out := make(map[string]int64, len(workflowIDs))
	if len(workflowIDs) == 0 {
		return out, nil
	}
	args := make([]any, len(workflowIDs))
	for i, id := range workflowIDs {
		args[i] = id
	}
	rows, err := db.conn().query(ctx, `SELECT id, event_seq FROM workflows WHERE id IN (`+placeholders(len(args))+`)`, args...)
	if err != nil {
		return nil, fmt.Errorf("store: event heads: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var id string
		var seq int64
		if err := rows.Scan(&id, &seq); err != nil {
			return nil, fmt.Errorf("store: event heads: %w", err)
		}
		out[id] = seq
	}
	return out, rows.Err()
}

// The store is the workflows package's store and event source.
var (
	_ workflows.Store       = (*DB)(nil)
	_ workflows.EventSource = (*DB)(nil)
)
