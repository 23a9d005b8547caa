package store

import (
	"context"
	"fmt"
	"time"
)

// CountRequest counts one request of a tenant in the window (a minute)
// that starts at window, and returns the window's count so far, this one
// included. Every host shares the counter. The first request of a window
// also forgets windows older than an hour.
func (db *DB) CountRequest(ctx context.Context, tenantID string, window time.Time) (int64, error) {
	var n int64
	err := db.conn().queryRow(ctx, `INSERT INTO tenant_rate (tenant_id, window_start, count) VALUES (?, ?, 1)
		ON CONFLICT (tenant_id, window_start) DO UPDATE SET count = tenant_rate.count + 1 RETURNING count`,
		tenantID, window.Unix()).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("store: counting a request: %w", err)
	}
	if n == 1 {
		if _, err := db.conn().exec(ctx, `DELETE FROM tenant_rate WHERE window_start < ?`, window.Add(-time.Hour).Unix()); err != nil {
			return n, fmt.Errorf("store: forgetting old request counts: %w", err)
		}
	}
	return n, nil
}
