package workflows

import (
	"context"

	"github.com/agenthost/agenthost/host/dbwait"
)

// WithRetry sets which store errors say the database is unavailable
// (store.IsUnavailable): the service's writes under a context marked by
// dbwait.WithRetries (a round's) then wait for the database to come back.
// Without it nothing is retried.
func (s *Service) WithRetry(transient func(error) bool) *Service {
	s.transient = transient
	return s
}

func retry[T any](ctx context.Context, s *Service, what, workflowID string, f func() (T, error)) (T, error) {
	return dbwait.Do(ctx, s.transient, s.logger, "workflows: "+what, workflowID, f)
}
