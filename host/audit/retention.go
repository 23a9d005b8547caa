package audit

import (
	"context"
	"fmt"
	"time"
)

// DefaultRetention is how long entries are kept unless configured.
const DefaultRetention = 400 * 24 * time.Hour

// Purger deletes entries older than a time (the store.DB). It is the only
// way entries leave the log.
type Purger interface {
	PurgeAudit(ctx context.Context, before time.Time) (int64, error)
}

// Sweep deletes the entries older than retention at now; retention <= 0
// keeps every entry.
func Sweep(ctx context.Context, p Purger, retention time.Duration, now time.Time) (int64, error) {
	if retention <= 0 {
		return 0, nil
	}
	n, err := p.PurgeAudit(ctx, now.Add(-retention))
	if err != nil {
		return n, fmt.Errorf("audit: retention: %w", err)
	}
	return n, nil
}
