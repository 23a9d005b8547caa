package dbwait_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/agenthost/agenthost/host/dbwait"
)

var (
	errDown  = errors.New("failed to connect")
	errOther = errors.New("constraint violated")
	errTaken = errors.New("taken over")
)

func transient(err error) bool { return errors.Is(err, errDown) }

// TestDo: which writes wait for the database and when they stop waiting.
// The real database's failures are in host/store's TestRoundWritesWaitOutAnOutage.
func TestDo(t *testing.T) {
	for _, tc := range []struct {
		name string
		// fails is how many tries fail with errDown before one succeeds.
		fails  int
		marked bool
		// first is the first try's error when not errDown.
		first   error
		guard   func(context.Context) error
		timeout time.Duration
		want    error
		tries   int
	}{
		{name: "unmarked: an API request is told at once", fails: 3, want: errDown, tries: 1},
		{name: "marked: waits until the database is back", fails: 3, marked: true, tries: 4},
		{name: "another error is final", marked: true, first: errOther, want: errOther, tries: 1},
		{name: "the guard refuses: the write is dropped", fails: 3, marked: true,
			guard: func(context.Context) error { return errTaken }, want: errTaken, tries: 1},
		{name: "a guard that cannot reach the database waits too", fails: 2, marked: true,
			guard: func() func(context.Context) error {
				n := 0
				return func(context.Context) error {
					if n++; n < 3 {
						return errDown
					}
					return nil
				}
			}(), tries: 3},
		{name: "the context ends: the last error", fails: 1000, marked: true, timeout: 200 * time.Millisecond, want: errDown},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			if tc.marked {
				ctx = dbwait.WithRetries(ctx, tc.guard)
			}
			if tc.timeout > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, tc.timeout)
				defer cancel()
			}
			tries := 0
			v, err := dbwait.Do(ctx, transient, nil, "test", "w", func() (int, error) {
				tries++
				if tries == 1 && tc.first != nil {
					return 0, tc.first
				}
				if tries <= tc.fails {
					return 0, errDown
				}
				return 42, nil
			})
			if !errors.Is(err, tc.want) || (tc.want == nil && v != 42) {
				t.Fatalf("Do: %d, %v; want %v", v, err, tc.want)
			}
			if tc.tries > 0 && tries != tc.tries {
				t.Fatalf("%d tries, want %d", tries, tc.tries)
			}
		})
	}
	// No test of transience: nothing is retried.
	tries := 0
	_, err := dbwait.Do(dbwait.WithRetries(context.Background(), nil), nil, nil, "test", "w", func() (int, error) { tries++; return 0, errDown })
	if !errors.Is(err, errDown) || tries != 1 {
		t.Fatalf("without a transience test: %v after %d tries", err, tries)
	}
}
