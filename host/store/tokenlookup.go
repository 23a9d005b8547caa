package store

import (
	"context"
	"database/sql"
	"fmt"
	"sync"
	"time"

	"github.com/agenthost/agenthost/host/tenancy"
)

// tokenLookups batches the token lookups of requests that arrive together.
// When a thousand clients (re)connect at once, each with its API token, the
// lookups that arrive while one query runs wait for it and then go as one
// query (WHERE hash IN …) instead of queueing for the pool one by one. A
// lookup that finds none running starts at once, so a lone request waits
// for nothing. Auth is not weakened: every result comes from a query that
// began after its request arrived, and nothing is remembered after it.
type tokenLookups struct {
	db *DB

	mu      sync.Mutex
	running bool
	waiting map[string][]chan<- tokenRow // by hash
}

// tokenRow is what a token's lookup found; found is false for an unknown
// token.
type tokenRow struct {
	p                             tenancy.Principal
	expires, revoked, deactivated sql.NullInt64
	found                         bool
	err                           error
}

// tokenBatch bounds one query's IN list.
const tokenBatch = 500

func (l *tokenLookups) lookup(ctx context.Context, hash []byte) (tokenRow, error) {
	ch := make(chan tokenRow, 1)
	l.mu.Lock()
	if l.waiting == nil {
		l.waiting = map[string][]chan<- tokenRow{}
	}
	l.waiting[string(hash)] = append(l.waiting[string(hash)], ch)
	if !l.running {
		l.running = true
		go l.drain()
	}
	l.mu.Unlock()
	select {
	case r := <-ch:
		return r, r.err
	case <-ctx.Done():
		// The drain still answers ch (buffered), nobody reads it.
		return tokenRow{}, fmt.Errorf("store: authenticate: %w", ctx.Err())
	}
}

// drain runs the queued lookups, one query per batch, until none wait.
func (l *tokenLookups) drain() {
	for {
		l.mu.Lock()
		if len(l.waiting) == 0 {
			l.running = false
			l.mu.Unlock()
			return
		}
		batch := make(map[string][]chan<- tokenRow, min(len(l.waiting), tokenBatch))
		for h, chs := range l.waiting {
			if len(batch) == tokenBatch {
				break
			}
			batch[h] = chs
			delete(l.waiting, h)
		}
		l.mu.Unlock()
		rows, err := l.query(batch)
		for h, chs := range batch {
			r := rows[h]
			r.err = err
			for _, ch := range chs {
				ch <- r
			}
		}
	}
}

// query looks the batch's hashes up. It runs for several requests, so it
// has a deadline of its own rather than any one request's context.
func (l *tokenLookups) query(batch map[string][]chan<- tokenRow) (map[string]tokenRow, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	args := make([]any, 0, len(batch))
	for h := range batch {
		args = append(args, []byte(h))
	}
	rows, err := l.db.conn().query(ctx, `SELECT t.hash, u.tenant_id, u.id, u.admin, t.expires_at, t.revoked_at, u.deactivated_at
		FROM api_tokens t JOIN users u ON u.id = t.user_id WHERE t.hash IN (`+placeholders(len(args))+`)`, args...)
	if err != nil {
		return nil, fmt.Errorf("store: authenticate: %w", err)
	}
	defer rows.Close()
	out := make(map[string]tokenRow, len(batch))
	for rows.Next() {
		var hash []byte
		r := tokenRow{found: true}
		if err := rows.Scan(&hash, &r.p.TenantID, &r.p.UserID, &r.p.Admin, &r.expires, &r.revoked, &r.deactivated); err != nil {
			return nil, fmt.Errorf("store: authenticate: %w", err)
		}
		out[string(hash)] = r
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: authenticate: %w", err)
	}
	return out, nil
}
