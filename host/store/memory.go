package store

import (
	"context"
	"fmt"

	"github.com/agenthost/agenthost/host/knowledge/kindex"
	"github.com/agenthost/agenthost/host/tenancy"
)

// maxMemoryList bounds one listing of a workflow's memory.
const maxMemoryList = 1000

// MaxToolMemories is how many tool-result entries (source "tool") a
// workflow's memory keeps: a long workflow calls hundreds of tools, and
// only the recent results are worth a place in a round's context, so older
// ones are pruned when a new one is written. Entries of other sources
// (extracted entities, notes, summaries) are not bounded here.
const MaxToolMemories = 50

// UpsertMemory implements memory.Store: the workflow's row is
// taken first (its owner only, as for every child row of a workflow), then
// the entry is inserted or its value and source replaced. Writing a tool
// result prunes the workflow's tool results beyond the newest
// MaxToolMemories in the same transaction, so the bound holds for every
// reader.
func (db *DB) UpsertMemory(ctx context.Context, p tenancy.Principal, m kindex.Memory) (out kindex.Memory, err error) {
	if err := m.Validate(); err != nil {
		return kindex.Memory{}, err
	}
	err = db.tx(ctx, func(c conn) error {
		if err := touchWorkflow(ctx, c, p, m.WorkflowID); err != nil {
			return err
		}
		t := micros(now())
		var created, updated int64
		err := c.queryRow(ctx, `INSERT INTO workflow_memory (id, workflow_id, key, value, source, created_at, updated_at)
			VALUES (?, ?, ?, ?, ?, ?, ?)
			ON CONFLICT (workflow_id, key) DO UPDATE SET value = excluded.value, source = excluded.source, updated_at = excluded.updated_at
			RETURNING id, created_at, updated_at`, newID(), m.WorkflowID, m.Key, m.Value, string(m.Source), t, t).
			Scan(&m.ID, &created, &updated)
		if err != nil {
			return fmt.Errorf("store: memory: %w", err)
		}
		m.CreatedAt, m.UpdatedAt = fromMicros(created), fromMicros(updated)
		if m.Source == kindex.MemoryTool {
			// The same order as Memories: newest update first, the
			// time-ordered id breaking ties within a microsecond.
			if _, err := c.exec(ctx, `DELETE FROM workflow_memory WHERE workflow_id = ? AND source = 'tool' AND id NOT IN (
				SELECT id FROM workflow_memory WHERE workflow_id = ? AND source = 'tool' ORDER BY updated_at DESC, id DESC LIMIT ?)`,
				m.WorkflowID, m.WorkflowID, MaxToolMemories); err != nil {
				return fmt.Errorf("store: pruning tool memories: %w", err)
			}
		}
		out = m
		return nil
	})
	return out, err
}

// Memories implements memory.Store.
func (db *DB) Memories(ctx context.Context, p tenancy.Principal, workflowID string, source kindex.MemorySource, limit int) ([]kindex.Memory, error) {
	if limit <= 0 || limit > maxMemoryList {
		return nil, fmt.Errorf("%w: memory limit %d (1..%d)", tenancy.ErrInvalid, limit, maxMemoryList)
	}
	if source != "" && !source.Valid() {
		return nil, fmt.Errorf("%w: memory source %q (extraction, tool, conversation, summary)", tenancy.ErrInvalid, source)
	}
	c := db.conn()
	if err := workflowReadable(ctx, c, p, workflowID); err != nil {
		return nil, err
	}
	q := `SELECT id, workflow_id, key, value, source, created_at, updated_at FROM workflow_memory WHERE workflow_id = ?`
	args := []any{workflowID}
	if source != "" {
		q += ` AND source = ?`
		args = append(args, string(source))
	}
	// Ids are time-ordered: among entries written in one microsecond the
	// newer insert comes first.
	rows, err := c.query(ctx, q+` ORDER BY updated_at DESC, id DESC LIMIT ?`, append(args, limit)...)
	if err != nil {
		return nil, fmt.Errorf("store: memories: %w", err)
	}
	defer rows.Close()
	out := []kindex.Memory{}
	for rows.Next() {
		var m kindex.Memory
		var src string
		var created, updated int64
		if err := rows.Scan(&m.ID, &m.WorkflowID, &m.Key, &m.Value, &src, &created, &updated); err != nil {
			return nil, fmt.Errorf("store: memories: %w", err)
		}
		m.Source, m.CreatedAt, m.UpdatedAt = kindex.MemorySource(src), fromMicros(created), fromMicros(updated)
		out = append(out, m)
	}
	return out, rows.Err()
}

// DeleteMemory implements memory.Store.
func (db *DB) DeleteMemory(ctx context.Context, p tenancy.Principal, workflowID, key string) error {
	return db.tx(ctx, func(c conn) error {
		if err := touchWorkflow(ctx, c, p, workflowID); err != nil {
			return err
		}
		res, err := c.exec(ctx, `DELETE FROM workflow_memory WHERE workflow_id = ? AND key = ?`, workflowID, key)
		if err != nil {
			return fmt.Errorf("store: delete memory: %w", err)
		}
		if n, err := res.RowsAffected(); err != nil || n == 0 {
			return fmt.Errorf("%w: memory key %q", tenancy.ErrNotFound, key)
		}
		return nil
	})
}
