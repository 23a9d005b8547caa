package server

import (
	"context"
	"fmt"
	"io"
	"sync"
	"time"
)

// shutdown bounds how long a stop (SIGINT, SIGTERM) may take. When ctx ends,
// a timer starts; if the process still runs when it fires, a message says so
// and the process exits, whatever still runs: a plugin call that does not
// stop, a connection that never completes, a compile. The steps of a
// graceful stop take their deadlines from it (At), so that it normally ends
// well before the timer.
type shutdown struct {
	timeout time.Duration
	stderr  io.Writer
	exit    func(code int)

	mu        sync.Mutex
	start     time.Time // when ctx ended; zero before
	timer     *time.Timer
	done      bool // disarmed or abandoned
	stopWatch func() bool
}

// watchShutdown arms the timer for when ctx ends; exit ends the process.
func watchShutdown(ctx context.Context, timeout time.Duration, stderr io.Writer, exit func(int)) *shutdown {
	s := &shutdown{timeout: timeout, stderr: stderr, exit: exit}
	s.stopWatch = context.AfterFunc(ctx, func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.done {
			return
		}
		s.begin()
		s.timer = time.AfterFunc(timeout, func() {
			s.Abandon(fmt.Sprintf("the shutdown did not finish within %v", timeout))
		})
	})
	return s
}

// begin records the start of the shutdown once; s.mu is held.
func (s *shutdown) begin() {
	if s.start.IsZero() {
		s.start = time.Now()
	}
}

// At returns a context that ends at fraction f (0..1) of the shutdown's time,
// counted from when it began (from now if it has not yet).
func (s *shutdown) At(f float64) (context.Context, context.CancelFunc) {
	s.mu.Lock()
	s.begin()
	start := s.start
	s.mu.Unlock()
	return context.WithDeadline(context.Background(), start.Add(time.Duration(f*float64(s.timeout))))
}

// Abandon ends the process now, saying why: a step of the shutdown found
// work it cannot stop, and closing what that work uses under it would only
// turn a stop into a crash.
func (s *shutdown) Abandon(reason string) {
	s.mu.Lock()
	if s.done {
		s.mu.Unlock()
		return
	}
	s.done = true
	s.mu.Unlock()
	fmt.Fprintf(s.stderr, "agenthost: %s; exiting with work still running\n", reason)
	s.exit(1)
}

// Disarm stops the timer: the shutdown finished.
func (s *shutdown) Disarm() {
	s.stopWatch()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.done = true
	if s.timer != nil {
		s.timer.Stop()
	}
}
