package jobs

import (
	"context"
	"time"

	"github.com/riverqueue/river/rivertype"
)

// SweepProgress runs the progress sweep now (it is otherwise a periodic job).
func (q *Queue) SweepProgress(ctx context.Context) (int64, error) { return q.progress.sweep(ctx) }

// RetryDelay is the delay the retry policy picks after failures failed
// attempts.
func RetryDelay(base, retryCap time.Duration, failures int) time.Duration {
	job := &rivertype.JobRow{Errors: make([]rivertype.AttemptError, failures-1)}
	return time.Until(backoff{base: base, cap: retryCap}.NextRetry(job))
}
