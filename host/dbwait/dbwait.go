// Package dbwait lets the writes of a running round wait out a database
// that is away for a moment (a restart, a failover) instead of failing.
//
// A round's event dropped then leaves a gap no client can see, since
// sequence numbers are assigned at append; an end or a usage record not
// written leaves the workflow running for ever, or a model call unbilled.
// Writes made under a context marked by [WithRetries], by a service that
// knows which errors say the database is unavailable (store.IsUnavailable),
// therefore wait and try again, in the caller's goroutine: the round
// pauses, so its writes stay in order. Callers that did not mark their
// context (API requests) get the error at once.
package dbwait

import (
	"context"
	"log/slog"
	"time"
)

type key struct{}

type marked struct {
	guard func(context.Context) error
}

// WithRetries marks ctx: writes under it wait out an unavailable database
// until ctx ends. guard, when set, is asked before each new try whether the
// write still may go in (the round may have been taken over by another
// host while this one could not reach the database): an error from it that
// does not say the database is unavailable ends the write with that error.
func WithRetries(ctx context.Context, guard func(context.Context) error) context.Context {
	return context.WithValue(ctx, key{}, marked{guard: guard})
}

// Backoff between tries.
const (
	first = 50 * time.Millisecond
	most  = 2 * time.Second
)

// Do runs f; when ctx is marked and f fails by an unavailable database
// (transient says so), it tries again with backoff until f succeeds, fails
// otherwise, the guard refuses, or ctx ends (the last error is returned).
// what and workflowID name the write in the log. transient nil retries
// nothing.
func Do[T any](ctx context.Context, transient func(error) bool, log *slog.Logger, what, workflowID string, f func() (T, error)) (T, error) {
	v, err := f()
	m, ok := ctx.Value(key{}).(marked)
	if err == nil || transient == nil || !ok || !transient(err) {
		return v, err
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	start, wait := time.Now(), first
	log.WarnContext(ctx, "database unavailable; the round waits and retries", "op", what, "workflow", workflowID, "err", err)
	for tries := 2; ; tries++ {
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return v, err
		case <-t.C:
		}
		wait = min(2*wait, most)
		if m.guard != nil {
			if gerr := m.guard(ctx); gerr != nil {
				if transient(gerr) {
					continue
				}
				log.WarnContext(ctx, "a write waiting for the database is dropped", "op", what, "workflow", workflowID, "why", gerr)
				return v, gerr
			}
		}
		if v, err = f(); err == nil || !transient(err) {
			lvl := slog.LevelInfo
			if err != nil {
				lvl = slog.LevelWarn
			}
			log.Log(ctx, lvl, "database back", "op", what, "workflow", workflowID, "tries", tries,
				"waited", time.Since(start).Round(time.Millisecond), "err", err)
			return v, err
		}
	}
}
