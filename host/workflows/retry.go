package workflows

import (
	"context"
	"log/slog"
	"time"
)

// A round's writes (its events, messages, logs and its end) must not be
// lost while the database is away for a moment (a restart, a failover): an
// event dropped then leaves a gap no client can see, since sequence numbers
// are assigned at append, and an end not recorded leaves the workflow
// running for ever. Writes made under a context marked by [WithRetries] on
// a service given a Transient test therefore wait and try again, in the
// caller's goroutine: the round pauses, so its events stay in order and
// take their numbers when the database is back. Other callers (API
// requests) get the error at once.

type retriesKey struct{}

// retrying is what WithRetries puts in a context.
type retrying struct {
	guard func(context.Context) error
}

// WithRetries marks ctx: the service's writes under it wait out a database
// that is unavailable, until ctx ends. guard, when set, is asked before
// each new try whether the write still may go in (the round may have been
// taken over by another host while this one could not reach the
// database): an error that does not say the database is unavailable ends
// the write with that error.
func WithRetries(ctx context.Context, guard func(context.Context) error) context.Context {
	return context.WithValue(ctx, retriesKey{}, retrying{guard: guard})
}

func retries(ctx context.Context) (retrying, bool) {
	v, ok := ctx.Value(retriesKey{}).(retrying)
	return v, ok
}

// Backoff between tries of a write that waits for the database.
const (
	retryFirst = 50 * time.Millisecond
	retryMax   = 2 * time.Second
)

// WithRetry sets which store errors say the database is unavailable
// (store.IsUnavailable); without it nothing is retried.
func (s *Service) WithRetry(transient func(error) bool) *Service {
	s.transient = transient
	return s
}

// retry runs f until it succeeds, fails otherwise than by an unavailable
// database, or ctx ends; only under a context marked by WithRetries.
func retry[T any](ctx context.Context, s *Service, what, workflowID string, f func() (T, error)) (T, error) {
	v, err := f()
	r, marked := retries(ctx)
	if err == nil || s.transient == nil || !marked || !s.transient(err) {
		return v, err
	}
	start, wait := time.Now(), retryFirst
	s.logger.WarnContext(ctx, "workflows: database unavailable; the round waits and retries", "op", what, "workflow", workflowID, "err", err)
	for tries := 2; ; tries++ {
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return v, err
		case <-t.C:
		}
		wait = min(2*wait, retryMax)
		if r.guard != nil {
			if gerr := r.guard(ctx); gerr != nil {
				if s.transient(gerr) {
					continue
				}
				s.logger.WarnContext(ctx, "workflows: a write waiting for the database is dropped", "op", what, "workflow", workflowID, "why", gerr)
				return v, gerr
			}
		}
		if v, err = f(); err == nil || !s.transient(err) {
			lvl := slog.LevelInfo
			if err != nil {
				lvl = slog.LevelWarn
			}
			s.logger.Log(ctx, lvl, "workflows: database back", "op", what, "workflow", workflowID, "tries", tries,
				"waited", time.Since(start).Round(time.Millisecond), "err", err)
			return v, err
		}
	}
}
