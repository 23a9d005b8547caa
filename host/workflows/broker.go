package workflows

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/agenthost/agenthost/host/tenancy"
)

// EventSource is what the broker reads events from (the store).
type EventSource interface {
	// Events returns the workflow's events after afterSeq, in order, at most
	// limit; ErrNotFound when the principal cannot see the workflow.
	Events(ctx context.Context, p tenancy.Principal, workflowID string, afterSeq int64, limit int) ([]Event, error)
	// EventHeads returns the last event sequence number of each listed
	// workflow that exists (missing ones are deleted). It is the broker's
	// cheap fallback check for events appended by other hosts, one query for
	// every followed workflow, and applies no access scope: the numbers go to
	// the broker, never to a user.
	EventHeads(ctx context.Context, workflowIDs []string) (map[string]int64, error)
}

// BrokerConfig tunes a Broker; the zero value is usable.
type BrokerConfig struct {
	// Interval is how often the broker re-reads the heads of the followed
	// workflows, which is how events appended by another host sharing the
	// database arrive (at most this late). Default 1 s.
	Interval time.Duration
	// Recent is how many of the latest events of each followed workflow the
	// broker keeps in memory, so subscribers that keep up take live events
	// without reading the database. Default 256.
	Recent int
	// Logger receives read failures; nil discards them.
	Logger *slog.Logger
}

// Broker lets any number of subscribers follow workflows' event streams
// without polling the database in a loop.
//
// Events appended in this process reach it through Notify (the Service calls
// it after every append) and are handed to subscribers from memory. Events
// appended by another host sharing the database are found by one shared
// ticker that reads the last sequence number of every followed workflow with
// a single query per interval and wakes the subscribers of those that moved,
// which then read the new events. An idle subscriber therefore costs one
// blocked goroutine and no queries; an idle broker no goroutine at all (the
// ticker runs only while someone subscribes).
type Broker struct {
	src      EventSource
	interval time.Duration
	recent   int
	logger   *slog.Logger

	mu      sync.Mutex
	topics  map[string]*topic
	polling bool
}

// topic is the broker's state of one followed workflow.
type topic struct {
	// head is the highest sequence number known to exist.
	head int64
	// gone: the workflow was deleted (or its heads row vanished).
	gone bool
	// changed is closed, and replaced, whenever head or gone changes: one
	// close wakes every waiting subscriber.
	changed chan struct{}
	// recent holds the latest events appended in this process (between
	// Recent and twice as many), with consecutive sequence numbers.
	recent []Event
	subs   int
}

func (t *topic) wake() {
	close(t.changed)
	t.changed = make(chan struct{})
}

// after returns a copy of the recent events after seq when they continue it
// without a gap (the first is seq+1), else nil.
func (t *topic) after(seq int64) []Event {
	if len(t.recent) == 0 {
		return nil
	}
	first := t.recent[0].Seq
	if seq+1 < first || seq >= t.recent[len(t.recent)-1].Seq {
		return nil
	}
	return append([]Event(nil), t.recent[seq+1-first:]...)
}

// readBatch is how many events a subscriber reads from the database at once.
const readBatch = 500

// NewBroker returns a broker reading from src.
func NewBroker(src EventSource, cfg BrokerConfig) *Broker {
	if cfg.Interval <= 0 {
		cfg.Interval = time.Second
	}
	if cfg.Recent <= 0 {
		cfg.Recent = 256
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	return &Broker{src: src, interval: cfg.Interval, recent: cfg.Recent, logger: cfg.Logger, topics: map[string]*topic{}}
}

// Notify tells the broker an event was committed. Events of workflows nobody
// here follows are dropped at once. A nil broker ignores it.
func (b *Broker) Notify(ev Event) {
	if b == nil || ev.Seq <= 0 {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	t := b.topics[ev.WorkflowID]
	if t == nil {
		return
	}
	// Appends commit in sequence order, but their goroutines may report out
	// of order: keep the window consecutive and let a subscriber that finds
	// a hole read the database.
	switch n := len(t.recent); {
	case n == 0 || ev.Seq == t.recent[n-1].Seq+1:
		// Trim in halves, so the copy is paid once per b.recent events.
		if n >= 2*b.recent {
			t.recent = append(t.recent[:0], t.recent[n-b.recent:]...)
		}
		t.recent = append(t.recent, ev)
	case ev.Seq > t.recent[n-1].Seq+1:
		t.recent = append(t.recent[:0], ev)
	}
	if ev.Seq > t.head {
		t.head = ev.Seq
		t.wake()
	}
}

// Gone tells the broker a workflow was deleted: its subscribers' channels
// close. A nil broker ignores it.
func (b *Broker) Gone(workflowID string) {
	if b == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if t := b.topics[workflowID]; t != nil && !t.gone {
		t.gone = true
		t.wake()
	}
}

// Subscribe follows a workflow's events after afterSeq (0: from the first;
// the SSE handler passes Last-Event-ID). The channel first carries every
// stored event after afterSeq, then live ones as they are appended here or
// (within the broker's interval) on another host: in sequence order, with no
// gaps and no duplicates. It is closed when ctx ends or when the workflow is
// deleted or no longer readable by p. A slow reader holds up only its own
// channel.
//
// Access is checked with p by the first read, whose error (ErrNotFound) is
// returned here, and by every later database read; events handed over from
// memory are not re-checked, so a revoked membership ends a live stream at
// its next database read rather than at once.
func (b *Broker) Subscribe(ctx context.Context, p tenancy.Principal, workflowID string, afterSeq int64) (<-chan Event, error) {
	// The id becomes a key of the topics map and outlives the call: it must
	// not share memory with a buffer the caller reuses (an HTTP server's
	// request bytes), or the map would be corrupted under load.
	workflowID = strings.Clone(workflowID)
	last := max(afterSeq, 0)
	// Join the topic before the first read, so an event committed between
	// the read and the join cannot be missed: it moves the head either way.
	t := b.join(workflowID)
	first, err := b.src.Events(ctx, p, workflowID, last, readBatch)
	if err != nil {
		b.leave(workflowID, t)
		return nil, err
	}
	out := make(chan Event)
	go b.follow(ctx, p, workflowID, t, last, first, out)
	return out, nil
}

func (b *Broker) join(workflowID string) *topic {
	b.mu.Lock()
	defer b.mu.Unlock()
	t := b.topics[workflowID]
	if t == nil {
		t = &topic{changed: make(chan struct{})}
		b.topics[workflowID] = t
	}
	t.subs++
	if !b.polling {
		b.polling = true
		go b.poll()
	}
	return t
}

func (b *Broker) leave(workflowID string, t *topic) {
	b.mu.Lock()
	defer b.mu.Unlock()
	t.subs--
	if t.subs == 0 && b.topics[workflowID] == t {
		delete(b.topics, workflowID)
	}
}

// follow is one subscriber's goroutine.
func (b *Broker) follow(ctx context.Context, p tenancy.Principal, workflowID string, t *topic, last int64, pending []Event, out chan<- Event) {
	defer close(out)
	defer b.leave(workflowID, t)
	for {
		for _, ev := range pending {
			if ev.Seq <= last {
				continue
			}
			select {
			case out <- ev:
				last = ev.Seq
			case <-ctx.Done():
				return
			}
		}
		pending = nil

		b.mu.Lock()
		head, gone, changed := t.head, t.gone, t.changed
		pending = t.after(last)
		b.mu.Unlock()
		if len(pending) > 0 {
			continue
		}
		if head > last || gone {
			evs, err := b.src.Events(ctx, p, workflowID, last, readBatch)
			switch {
			case ctx.Err() != nil:
				return
			case errors.Is(err, tenancy.ErrNotFound):
				return
			case err != nil:
				b.logger.WarnContext(ctx, "workflow events: read failed; retrying", "workflow", workflowID, "after", last, "err", err)
				if !sleep(ctx, b.interval) {
					return
				}
				continue
			case len(evs) > 0:
				pending = evs
				continue
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-changed:
		}
	}
}

// poll is the shared fallback ticker: it runs while anyone subscribes.
func (b *Broker) poll() {
	tick := time.NewTicker(b.interval)
	defer tick.Stop()
	for range tick.C {
		b.mu.Lock()
		if len(b.topics) == 0 {
			b.polling = false
			b.mu.Unlock()
			return
		}
		ids := make([]string, 0, len(b.topics))
		for id := range b.topics {
			ids = append(ids, id)
		}
		b.mu.Unlock()

		heads, err := b.heads(ids)
		if err != nil {
			b.logger.Warn("workflow events: reading heads failed", "workflows", len(ids), "err", err)
			continue
		}
		b.mu.Lock()
		for _, id := range ids {
			t := b.topics[id]
			if t == nil {
				continue
			}
			h, ok := heads[id]
			switch {
			case !ok && !t.gone:
				t.gone = true
				t.wake()
			case ok && h > t.head:
				t.head = h
				t.wake()
			}
		}
		b.mu.Unlock()
	}
}

// heads reads the heads in slices that keep the query's parameter list
// short.
func (b *Broker) heads(ids []string) (map[string]int64, error) {
	ctx, cancel := context.WithTimeout(context.Background(), max(5*b.interval, 5*time.Second))
	defer cancel()
	const slice = 500
	all := make(map[string]int64, len(ids))
	for start := 0; start < len(ids); start += slice {
		part, err := b.src.EventHeads(ctx, ids[start:min(start+slice, len(ids))])
		if err != nil {
			return nil, err
		}
		for id, h := range part {
			all[id] = h
		}
	}
	return all, nil
}

// sleep waits d or until ctx ends; it reports whether ctx is still live.
func sleep(ctx context.Context, d time.Duration) bool {
	tm := time.NewTimer(d)
	defer tm.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-tm.C:
		return true
	}
}
