package store

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
)

// eventsChannel is the channel on which the hosts announce committed
// events: payload "<workflow id> <seq>", the highest of that workflow.
const eventsChannel = "agenthost_events"

// roundsChannel is the channel on which a stopping host says it released
// rounds (handed them off): the others take them over at once rather than
// at their next sweep.
const roundsChannel = "agenthost_rounds"

// AnnounceReleased tells the hosts listening (ListenEvents with Released)
// that this host released rounds for another to take over. On SQLite (one
// host) it does nothing: the host takes its own back at its next start.
func (db *DB) AnnounceReleased(ctx context.Context) error {
	if db.dialect != Postgres {
		return nil
	}
	if _, err := db.pool.Exec(ctx, `SELECT pg_notify($1, '')`, roundsChannel); err != nil {
		return fmt.Errorf("store: announce released rounds: %w", err)
	}
	return nil
}

// Announce implements workflows.Announcer: it tells the hosts listening
// (ListenEvents) that the workflows' events up to the given numbers are
// committed, in one statement (one NOTIFY each, delivered when it commits).
// On SQLite (one host) it does nothing.
func (db *DB) Announce(ctx context.Context, heads map[string]int64) error {
	if db.dialect != Postgres || len(heads) == 0 {
		return nil
	}
	payloads := make([]string, 0, len(heads))
	for id, seq := range heads {
		payloads = append(payloads, id+" "+strconv.FormatInt(seq, 10))
	}
	if _, err := db.pool.Exec(ctx, `SELECT pg_notify($1, p) FROM unnest($2::text[]) AS p`, eventsChannel, payloads); err != nil {
		return fmt.Errorf("store: announce events: %w", err)
	}
	return nil
}

// ListenConfig says where ListenEvents hands what it hears.
type ListenConfig struct {
	// Advance receives each event announced by another host: the workflow
	// and the event's sequence number (workflows.Broker.Advance).
	Advance func(workflowID string, seq int64)
	// Resync is called whenever announcements may have been missed: when
	// the listener starts listening, and when its connection drops
	// (workflows.Broker.Resync reads every followed head at once).
	Resync func()
	// Released, when set, is called each time another host announces
	// released rounds (AnnounceReleased). Announcements lost while the
	// connection is down are made up for by the hosts' periodic sweep.
	Released func()
	// Check is how long the connection may stay silent before the listener
	// pings it, so that a connection that died without a word (a network
	// partition) is noticed. Default 30 s.
	Check time.Duration
	// PingTimeout is how long that ping may take before the connection
	// counts as lost. Apart from Check so that a short Check (a test's)
	// does not turn a slow answer on a busy machine into a reconnect.
	// Default 10 s.
	PingTimeout time.Duration
	// RetryPause is the first pause before reconnecting; it doubles on each
	// failed attempt up to 5 s (or RetryPause when larger). Default 250 ms.
	RetryPause time.Duration
}

// ListenEvents listens, on a connection of its own, for the events committed
// by other hosts sharing this PostgreSQL database (their Announce), until
// ctx ends. A lost
// connection is reconnected with a doubling pause; meanwhile (and whenever
// an announcement is lost) the broker's periodic read of the heads delivers
// the events, later but complete. Announcements of events appended through
// this DB's own pool are skipped: they reach the broker in-process. On
// SQLite (one host) it returns at once.
func (db *DB) ListenEvents(ctx context.Context, cfg ListenConfig) error {
	if db.dialect != Postgres {
		return nil
	}
	if cfg.Check <= 0 {
		cfg.Check = 30 * time.Second
	}
	if cfg.PingTimeout <= 0 {
		cfg.PingTimeout = 10 * time.Second
	}
	if cfg.RetryPause <= 0 {
		cfg.RetryPause = 250 * time.Millisecond
	}
	if cfg.Advance == nil || cfg.Resync == nil {
		return errors.New("store: ListenEvents needs Advance and Resync")
	}
	pause := cfg.RetryPause
	for {
		err := db.listenOnce(ctx, cfg, func() { pause = cfg.RetryPause })
		if ctx.Err() != nil {
			return nil
		}
		// Whatever was announced while the connection was going down is
		// lost: read the heads now rather than at the next tick.
		cfg.Resync()
		db.logger.Warn("workflow events: the listening connection was lost; reconnecting (events arrive by the periodic read meanwhile)",
			"retryIn", pause, "err", err)
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(pause):
		}
		pause = min(2*pause, max(5*time.Second, cfg.RetryPause))
	}
}

// listenOnce connects, listens and hands over announcements until the
// connection fails or ctx ends; listening calls it once LISTEN succeeded.
func (db *DB) listenOnce(ctx context.Context, cfg ListenConfig, listening func()) error {
	cc := db.pool.Config().ConnConfig.Copy()
	cc.RuntimeParams["application_name"] = ListenerApplicationName
	conn, err := pgx.ConnectConfig(ctx, cc)
	if err != nil {
		return fmt.Errorf("store: listen: connect: %w", err)
	}
	defer func() {
		cctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		conn.Close(cctx)
	}()
	if _, err := conn.Exec(ctx, "LISTEN "+eventsChannel); err != nil {
		return fmt.Errorf("store: listen: %w", err)
	}
	if cfg.Released != nil {
		if _, err := conn.Exec(ctx, "LISTEN "+roundsChannel); err != nil {
			return fmt.Errorf("store: listen: %w", err)
		}
	}
	listening()
	// Events committed before LISTEN took effect were not announced here.
	cfg.Resync()
	for {
		wctx, cancel := context.WithTimeout(ctx, cfg.Check)
		n, err := conn.WaitForNotification(wctx)
		cancel()
		switch {
		case ctx.Err() != nil:
			return nil
		case errors.Is(err, context.DeadlineExceeded) && !conn.IsClosed():
			pctx, cancel := context.WithTimeout(ctx, cfg.PingTimeout)
			err = conn.Ping(pctx)
			cancel()
			if err != nil {
				return fmt.Errorf("store: listen: ping: %w", err)
			}
			continue
		case err != nil:
			return fmt.Errorf("store: listen: %w", err)
		}
		if db.own.has(n.PID) {
			continue
		}
		if n.Channel == roundsChannel {
			if cfg.Released != nil {
				cfg.Released()
			}
			continue
		}
		id, seq, ok := parseAnnouncement(n.Payload)
		if !ok {
			db.logger.Warn("workflow events: malformed announcement ignored", "channel", n.Channel, "payload", n.Payload)
			continue
		}
		cfg.Advance(id, seq)
	}
}

// ListenerApplicationName is the application_name of ListenEvents'
// connection (pg_stat_activity shows it).
const ListenerApplicationName = "agenthost events listener"

func parseAnnouncement(payload string) (string, int64, bool) {
	i := strings.LastIndexByte(payload, ' ')
	if i <= 0 {
		return "", 0, false
	}
	seq, err := strconv.ParseInt(payload[i+1:], 10, 64)
	if err != nil || seq <= 0 {
		return "", 0, false
	}
	return payload[:i], seq, true
}

// pidSet holds the backend process ids of the pool's connections, so that
// the listener can tell this process's announcements from other hosts'.
type pidSet struct {
	mu   sync.Mutex
	pids map[uint32]struct{}
}

func (s *pidSet) add(pid uint32) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.pids == nil {
		s.pids = map[uint32]struct{}{}
	}
	s.pids[pid] = struct{}{}
}

func (s *pidSet) remove(pid uint32) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.pids, pid)
}

func (s *pidSet) has(pid uint32) bool {
	if s == nil {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.pids[pid]
	return ok
}
