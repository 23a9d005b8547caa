package server

import (
	"context"
	"log/slog"
	"time"

	"github.com/agenthost/agenthost/host/jobs"
	"github.com/agenthost/agenthost/host/rounds"
	"github.com/agenthost/agenthost/host/store"
)

// roundHosts joins what the workspace needs to share rounds among hosts:
// the job queue's host id and heartbeats, and the store's round stamps.
type roundHosts struct {
	*store.DB
	queue *jobs.Queue
}

func (h roundHosts) HostID() string { return h.queue.HostID() }

func (h roundHosts) LiveHosts(ctx context.Context) (map[string]bool, error) {
	return h.queue.LiveHosts(ctx)
}

// takeOverRounds looks, at once, every interval and whenever released
// says another host released rounds, until ctx ends, for rounds whose host
// stopped beating or gave them up, and resumes them here.
func takeOverRounds(ctx context.Context, runner *rounds.Service, interval time.Duration, released <-chan struct{}, logger *slog.Logger) {
	every(ctx, interval, released, runner.TakeOver, func(n int, err error) {
		switch {
		case err != nil:
			logger.Error("taking over rounds of stopped hosts", "err", err)
		case n > 0:
			logger.Warn("took over rounds of a stopped host", "count", n)
		}
	})
}

// expireApprovals expires, at once and every interval until ctx ends, the approvals
// nobody decided in time, and resumes their rounds (any host may: each
// approval expires once).
func expireApprovals(ctx context.Context, runner *rounds.Service, interval time.Duration, logger *slog.Logger) {
	every(ctx, interval, nil, runner.ExpireApprovals, func(n int, err error) {
		switch {
		case err != nil:
			logger.Error("expiring approvals", "err", err)
		case n > 0:
			logger.Info("approvals expired", "count", n)
		}
	})
}

// every runs sweep at once, then each interval and whenever wake says so
// (nil: never), until ctx ends, and reports what it did; an error from ctx
// ending is not reported.
func every(ctx context.Context, interval time.Duration, wake <-chan struct{}, sweep func(context.Context) (int, error), report func(int, error)) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		n, err := sweep(ctx)
		if err != nil && ctx.Err() != nil {
			return
		}
		report(n, err)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-wake:
		}
	}
}
