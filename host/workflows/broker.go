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
	// Announcer, when set, tells the other hosts sharing the database of
	// every event Notify hears (PostgreSQL's NOTIFY), so that they need not
	// wait for their periodic read.
	Announcer Announcer
	// Logger receives read failures; nil discards them.
	Logger *slog.Logger
}

// Announcer tells the other hosts that workflows' events up to the given
// sequence numbers exist (store.DB.Announce).
type Announcer interface {
	Announce(ctx context.Context, heads map[string]int64) error
}

// Broker lets any number of subscribers follow workflows' event streams
// without polling the database in a loop.
//
// Events appended in this process reach it through Notify (the Service calls
// it after every append) and are handed to subscribers from memory. Events
// appended by another host sharing the database are announced by Advance
// (fed from PostgreSQL's LISTEN/NOTIFY, within milliseconds of their
// commit); one subscriber of the workflow then reads them and shares them
// with the others through the same memory. Announcements can be missed (the
// listening connection drops), so one shared ticker also reads the last
// sequence number of every followed workflow with a single query per
// interval, and wakes the subscribers of those that moved. An idle
// subscriber therefore costs no goroutine of the broker's (see
// Subscription) and no queries; an idle broker no goroutine at all (the
// ticker runs only while someone subscribes).
type Broker struct {
	src      EventSource
	interval time.Duration
	recent   int
	logger   *slog.Logger

	announcer Announcer

	mu      sync.Mutex
	topics  map[string]*topic
	polling bool

	// The events to announce, by workflow the highest sequence number;
	// one goroutine announces them while there are some, in batches that
	// gather while the previous one is sent.
	amu        sync.Mutex
	announce   map[string]int64
	announcing bool
	// resync asks the ticker for a read of the heads now (buffered: one
	// pending request is enough).
	resync chan struct{}
}

// topic is the broker's state of one followed workflow.
type topic struct {
	// head is the highest sequence number known to exist.
	head int64
	// gone: the workflow was deleted (or its heads row vanished).
	gone bool
	// changed is closed, and replaced, whenever head, gone or recent
	// changes: one close wakes every waiting subscriber.
	changed chan struct{}
	// recent holds the latest events (between Recent and twice as many),
	// with consecutive sequence numbers: appended in this process, or read
	// from the database by one of the subscribers.
	recent []Event
	// reading: a subscriber is reading the database after readFrom for
	// everyone; the others that are at least as far wait for its events
	// instead of reading too.
	reading  bool
	readFrom int64
	subs     int
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

// keep adds consecutive events to the window, which stays consecutive and
// between keep and twice as many events long.
func (t *topic) keep(evs []Event, keep int) {
	for _, ev := range evs {
		switch n := len(t.recent); {
		case n == 0 || ev.Seq == t.recent[n-1].Seq+1:
			// Trim in halves, so the copy is paid once per keep events.
			if n >= 2*keep {
				t.recent = append(t.recent[:0], t.recent[n-keep:]...)
			}
			t.recent = append(t.recent, ev)
		case ev.Seq > t.recent[n-1].Seq+1:
			t.recent = append(t.recent[:0], ev)
		}
	}
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
	return &Broker{src: src, interval: cfg.Interval, recent: cfg.Recent, logger: cfg.Logger, topics: map[string]*topic{},
		resync: make(chan struct{}, 1), announcer: cfg.Announcer}
}

// Notify tells the broker an event was committed. Events of workflows nobody
// here follows are dropped at once. A nil broker ignores it.
func (b *Broker) Notify(ev Event) {
	if b == nil || ev.Seq <= 0 {
		return
	}
	b.queueAnnouncement(ev)
	b.mu.Lock()
	defer b.mu.Unlock()
	t := b.topics[ev.WorkflowID]
	if t == nil {
		return
	}
	// Appends commit in sequence order, but their goroutines may report out
	// of order: keep the window consecutive and let a subscriber that finds
	// a hole read the database.
	t.keep([]Event{ev}, b.recent)
	if ev.Seq > t.head {
		t.head = ev.Seq
		t.wake()
	}
}

// queueAnnouncement queues ev for the other hosts. The announcement is
// sent after the event's commit, outside the append's transaction (a NOTIFY
// inside it would make every append wait for PostgreSQL's notification
// queue lock at commit), and one statement carries many: the other hosts
// need only the highest number of each workflow. One lost (this process
// dies between the commit and the announcement) is found by their periodic
// read.
func (b *Broker) queueAnnouncement(ev Event) {
	if b.announcer == nil {
		return
	}
	b.amu.Lock()
	defer b.amu.Unlock()
	if b.announce == nil {
		b.announce = map[string]int64{}
	}
	if ev.Seq > b.announce[ev.WorkflowID] {
		b.announce[ev.WorkflowID] = ev.Seq
	}
	if !b.announcing {
		b.announcing = true
		go b.announceLoop()
	}
}

func (b *Broker) announceLoop() {
	for {
		b.amu.Lock()
		batch := b.announce
		if len(batch) == 0 {
			b.announcing = false
			b.amu.Unlock()
			return
		}
		b.announce = nil
		b.amu.Unlock()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		if err := b.announcer.Announce(ctx, batch); err != nil {
			b.logger.Warn("workflow events: announcing to the other hosts failed; they find the events by their periodic read",
				"workflows", len(batch), "err", err)
		}
		cancel()
	}
}

// Advance tells the broker that a workflow's events up to seq exist,
// appended on another host (the database announced them): its subscribers
// read them. Announcements of workflows nobody here follows, and of events
// already known, cost nothing. A nil broker ignores it.
func (b *Broker) Advance(workflowID string, seq int64) {
	if b == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if t := b.topics[workflowID]; t != nil && seq > t.head {
		t.head = seq
		t.wake()
	}
}

// Resync asks for a read of every followed workflow's head now, rather than
// at the next tick: announcements may have been missed (the listener
// reconnected). It does not wait for the read. A nil broker ignores it.
func (b *Broker) Resync() {
	if b == nil {
		return
	}
	select {
	case b.resync <- struct{}{}:
	default:
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
// on another host: in sequence order, with no gaps and no duplicates. It is
// closed when ctx ends or when the workflow is deleted or no longer readable
// by p. A slow reader holds up only its own channel. It costs a goroutine
// for the subscription's life; a caller that can wait itself uses Open.
//
// Access is checked as Open checks it.
func (b *Broker) Subscribe(ctx context.Context, p tenancy.Principal, workflowID string, afterSeq int64) (<-chan Event, error) {
	sub, err := b.Open(ctx, p, workflowID, afterSeq)
	if err != nil {
		return nil, err
	}
	out := make(chan Event)
	go func() {
		defer close(out)
		defer sub.Close()
		for {
			evs, wait, err := sub.Next(ctx)
			if err != nil {
				return
			}
			for _, ev := range evs {
				select {
				case out <- ev:
				case <-ctx.Done():
					return
				}
			}
			if wait != nil {
				select {
				case <-wait:
				case <-ctx.Done():
					return
				}
			}
		}
	}()
	return out, nil
}

// Subscription is one follower of a workflow's events, read by one
// goroutine at a time (Next is not safe for concurrent use). It holds no
// goroutine of its own: an idle stream costs its reader's goroutine only.
type Subscription struct {
	b          *Broker
	p          tenancy.Principal
	workflowID string
	t          *topic
	last       int64
	pending    []Event
	closed     bool
}

// ErrEnded is Next's error once a subscription's workflow was deleted or is
// no longer readable by its principal.
var ErrEnded = errors.New("workflows: the event stream ended")

// Open follows a workflow's events after afterSeq, like Subscribe, for a
// caller that reads them with Next in its own goroutine. Close it when done.
//
// Access is checked with p by the first read, whose error (ErrNotFound) is
// returned here, and by every later database read; events handed over from
// memory (appended in this process, or read by another subscriber of the
// workflow) are not re-checked, so a revoked membership ends a live stream
// at its next database read rather than at once.
func (b *Broker) Open(ctx context.Context, p tenancy.Principal, workflowID string, afterSeq int64) (*Subscription, error) {
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
	return &Subscription{b: b, p: p, workflowID: workflowID, t: t, last: last, pending: first}, nil
}

// Close ends the subscription; Next then returns ErrEnded. It is safe to
// call more than once.
func (s *Subscription) Close() {
	if s.closed {
		return
	}
	s.closed = true
	s.b.leave(s.workflowID, s.t)
}

// Next returns the events after the last one returned, in order, at most
// readBatch of them (the first from the stored history, then live ones).
// When there are none yet it returns a channel that is closed when there may
// be: wait on it (beside the caller's own timers) and call Next again. It
// returns ErrEnded once the workflow is deleted or no longer readable, and
// ctx's error when ctx ends during a read.
func (s *Subscription) Next(ctx context.Context) ([]Event, <-chan struct{}, error) {
	if s.closed {
		return nil, nil, ErrEnded
	}
	if evs := s.take(s.pending); len(evs) > 0 {
		s.pending = nil
		return evs, nil, nil
	}
	s.pending = nil
	b, t := s.b, s.t
	b.mu.Lock()
	head, gone, changed := t.head, t.gone, t.changed
	if evs := t.after(s.last); len(evs) > 0 {
		b.mu.Unlock()
		return s.take(evs), nil, nil
	}
	// Nothing new, or someone else is reading what this subscriber lacks:
	// wait for it.
	if !gone && (head <= s.last || t.reading && t.readFrom <= s.last) {
		b.mu.Unlock()
		return nil, changed, nil
	}
	t.reading, t.readFrom = true, s.last
	b.mu.Unlock()

	evs, err := b.src.Events(ctx, s.p, s.workflowID, s.last, readBatch)
	b.mu.Lock()
	t.reading = false
	if err == nil {
		// Shared with the other subscribers, who would read the same.
		t.keep(evs, b.recent)
		if n := len(evs); n > 0 && evs[n-1].Seq > t.head {
			t.head = evs[n-1].Seq
		}
	}
	t.wake()
	changed = t.changed
	b.mu.Unlock()
	switch {
	case ctx.Err() != nil:
		return nil, nil, ctx.Err()
	case errors.Is(err, tenancy.ErrNotFound):
		return nil, nil, ErrEnded
	case err != nil:
		b.logger.WarnContext(ctx, "workflow events: read failed; retrying", "workflow", s.workflowID, "after", s.last, "err", err)
		retry := make(chan struct{})
		time.AfterFunc(b.interval, func() { close(retry) })
		return nil, retry, nil
	case len(evs) > 0:
		return s.take(evs), nil, nil
	case gone:
		// Nothing more to read of a deleted workflow.
		return nil, nil, ErrEnded
	}
	return nil, changed, nil
}

// take drops the events already returned and remembers the last.
func (s *Subscription) take(evs []Event) []Event {
	i := 0
	for i < len(evs) && evs[i].Seq <= s.last {
		i++
	}
	evs = evs[i:]
	if len(evs) > 0 {
		s.last = evs[len(evs)-1].Seq
	}
	return evs
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

// poll is the shared fallback ticker: it runs while anyone subscribes.
func (b *Broker) poll() {
	tick := time.NewTicker(b.interval)
	defer tick.Stop()
	for {
		select {
		case <-tick.C:
		case <-b.resync:
		}
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
