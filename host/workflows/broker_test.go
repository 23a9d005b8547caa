package workflows_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"github.com/agenthost/agenthost/host/store"
	"github.com/agenthost/agenthost/host/tenancy"
	"github.com/agenthost/agenthost/host/testenv"
	"github.com/agenthost/agenthost/host/workflows"
)

// interval is the brokers' fallback interval in these tests.
const interval = 100 * time.Millisecond

// host is one agenthost process: its own store handle, broker and service.
type host struct {
	db     *store.DB
	broker *workflows.Broker
	svc    *workflows.Service
}

// cluster is two hosts on one database, and a workspace with two users.
type cluster struct {
	a, b         host
	alice, bob   tenancy.Principal
	workspaceID  string
	countingSrcA *countingSource
}

// countingSource counts the broker's reads.
type countingSource struct {
	workflows.EventSource
	events, heads atomic.Int64
}

func (c *countingSource) Events(ctx context.Context, p tenancy.Principal, id string, after int64, limit int) ([]workflows.Event, error) {
	c.events.Add(1)
	return c.EventSource.Events(ctx, p, id, after, limit)
}

func (c *countingSource) EventHeads(ctx context.Context, ids []string) (map[string]int64, error) {
	c.heads.Add(1)
	return c.EventSource.EventHeads(ctx, ids)
}

func newHost(db *store.DB, src workflows.EventSource) host { return newHostEvery(db, src, interval) }

// newHostEvery is a host whose broker falls back to a read every interval.
func newHostEvery(db *store.DB, src workflows.EventSource, every time.Duration) host {
	b := workflows.NewBroker(src, workflows.BrokerConfig{Interval: every})
	return host{db: db, broker: b, svc: workflows.NewService(db, b, nil)}
}

// dialects runs fn against a cluster on SQLite (two handles on one file)
// and on PostgreSQL (two pools on one database).
func dialects(t *testing.T, fn func(t *testing.T, c *cluster)) {
	t.Run("sqlite", func(t *testing.T) {
		dir := t.TempDir()
		fn(t, newCluster(t, func(tb testing.TB) *store.DB { return open(tb, store.Config{Dir: dir}) }))
	})
	t.Run("postgres", func(t *testing.T) {
		url := testenv.Postgres(t)
		fn(t, newCluster(t, func(tb testing.TB) *store.DB { return open(tb, store.Config{URL: url}) }))
	})
}

func open(t testing.TB, cfg store.Config) *store.DB {
	t.Helper()
	db, err := store.Open(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func newCluster(t testing.TB, reopen func(testing.TB) *store.DB) *cluster {
	t.Helper()
	ctx := context.Background()
	dbA := reopen(t)
	if err := dbA.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	tn, err := dbA.CreateTenant(ctx, "Acme")
	if err != nil {
		t.Fatal(err)
	}
	ws, err := dbA.CreateWorkspace(ctx, tenancy.Workspace{TenantID: tn.ID, Name: "chat"})
	if err != nil {
		t.Fatal(err)
	}
	user := func(email string) tenancy.Principal {
		u, err := dbA.CreateUser(ctx, tenancy.User{TenantID: tn.ID, Email: email, Name: email})
		if err != nil {
			t.Fatal(err)
		}
		if err := dbA.SetMembership(ctx, tenancy.Membership{WorkspaceID: ws.ID, UserID: u.ID, Role: tenancy.RoleMember}); err != nil {
			t.Fatal(err)
		}
		return tenancy.Principal{TenantID: tn.ID, UserID: u.ID}
	}
	src := &countingSource{EventSource: dbA}
	dbB := reopen(t)
	return &cluster{a: newHost(dbA, src), b: newHost(dbB, dbB), alice: user("alice@acme"), bob: user("bob@acme"),
		workspaceID: ws.ID, countingSrcA: src}
}

func (c *cluster) start(t testing.TB) workflows.Workflow {
	t.Helper()
	wf, err := c.a.svc.Start(context.Background(), c.alice, workflows.NewWorkflow{WorkspaceID: c.workspaceID, Name: "w"})
	if err != nil {
		t.Fatal(err)
	}
	return wf
}

// appendN appends n chunk events through svc from g goroutines at once.
func appendN(t *testing.T, svc *workflows.Service, p tenancy.Principal, id string, g, n int) {
	t.Helper()
	var wg sync.WaitGroup
	for i := range g {
		wg.Go(func() {
			for j := range n {
				if _, err := svc.Append(context.Background(), p, id, workflows.EventChunk, workflows.ChunkData{Text: fmt.Sprintf("%d.%d", i, j)}); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
}

// expect reads exactly the events from..to from ch, in order, then checks
// that nothing more arrives for a moment.
func expect(t *testing.T, ch <-chan workflows.Event, from, to int64) {
	t.Helper()
	deadline := time.After(15 * time.Second)
	for want := from; want <= to; want++ {
		select {
		case ev, ok := <-ch:
			if !ok {
				t.Fatalf("channel closed before seq %d", want)
			}
			if ev.Seq != want {
				t.Fatalf("got seq %d, want %d", ev.Seq, want)
			}
		case <-deadline:
			t.Fatalf("timed out waiting for seq %d", want)
		}
	}
	select {
	case ev, ok := <-ch:
		if ok {
			t.Fatalf("unexpected event %d after %d", ev.Seq, to)
		}
	case <-time.After(2 * interval):
	}
}

// next waits up to 5 s for one event, which must have the given sequence
// number and type.
func next(t *testing.T, ch <-chan workflows.Event, seq int64, typ workflows.EventType, what string) {
	t.Helper()
	select {
	case ev := <-ch:
		if ev.Seq != seq || ev.Type != typ {
			t.Fatalf("%s: got %+v, want seq %d of type %s", what, ev, seq, typ)
		}
	case <-time.After(5 * time.Second):
		t.Fatalf("%s: not delivered", what)
	}
}

func closed(t *testing.T, ch <-chan workflows.Event, within time.Duration) {
	t.Helper()
	deadline := time.After(within)
	for {
		select {
		case _, ok := <-ch:
			if !ok {
				return
			}
		case <-deadline:
			t.Fatalf("channel not closed within %v", within)
		}
	}
}

func TestSubscribeWhileAppending(t *testing.T) {
	dialects(t, func(t *testing.T, c *cluster) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		wf := c.start(t) // event 1
		const g, n = 5, 40
		done := make(chan struct{})
		go func() {
			defer close(done)
			appendN(t, c.a.svc, c.alice, wf.ID, g, n)
		}()
		// Subscribe from the start while the appenders run: the stored part
		// and the live part must join without a gap or a repeat.
		time.Sleep(5 * time.Millisecond)
		ch, err := c.a.svc.Subscribe(ctx, c.alice, wf.ID, 0)
		if err != nil {
			t.Fatal(err)
		}
		expect(t, ch, 1, 1+g*n)
		<-done
	})
}

func TestSubscribeFromLastEventID(t *testing.T) {
	dialects(t, func(t *testing.T, c *cluster) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		wf := c.start(t)
		appendN(t, c.a.svc, c.alice, wf.ID, 1, 30) // events 2..31
		ch, err := c.a.svc.Subscribe(ctx, c.alice, wf.ID, 17)
		if err != nil {
			t.Fatal(err)
		}
		go appendN(t, c.a.svc, c.alice, wf.ID, 3, 10) // events 32..61, live
		expect(t, ch, 18, 61)

		// A reconnect past the end gets only what comes next.
		ch2, err := c.a.svc.Subscribe(ctx, c.alice, wf.ID, 61)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.a.svc.Stop(ctx, c.alice, wf.ID, "user"); err != nil {
			t.Fatal(err)
		}
		next(t, ch2, 62, workflows.EventStopped, "the stopped event after a reconnect")
	})
}

func TestCancelClosesTheChannel(t *testing.T) {
	dialects(t, func(t *testing.T, c *cluster) {
		wf := c.start(t)
		ctx, cancel := context.WithCancel(context.Background())
		ch, err := c.a.svc.Subscribe(ctx, c.alice, wf.ID, 0)
		if err != nil {
			t.Fatal(err)
		}
		expect(t, ch, 1, 1)
		if c.a.broker.Followed() != 1 || !c.a.broker.Polling() {
			t.Fatalf("followed %d, polling %v", c.a.broker.Followed(), c.a.broker.Polling())
		}
		cancel()
		closed(t, ch, time.Second)
		// The broker forgets the workflow, and its ticker stops with the last
		// subscriber.
		deadline := time.Now().Add(5 * interval)
		for c.a.broker.Followed() != 0 || c.a.broker.Polling() {
			if time.Now().After(deadline) {
				t.Fatalf("followed %d, polling %v after the last subscriber left", c.a.broker.Followed(), c.a.broker.Polling())
			}
			time.Sleep(interval / 10)
		}
		// A subscriber that never reads is released by its context too.
		ctx2, cancel2 := context.WithCancel(context.Background())
		ch2, err := c.a.svc.Subscribe(ctx2, c.alice, wf.ID, 0)
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(interval)
		cancel2()
		closed(t, ch2, time.Second)
	})
}

func TestEventsFromAnotherHost(t *testing.T) {
	dialects(t, func(t *testing.T, c *cluster) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		wf := c.start(t)
		ch, err := c.a.svc.Subscribe(ctx, c.alice, wf.ID, 0)
		if err != nil {
			t.Fatal(err)
		}
		expect(t, ch, 1, 1)
		// Host B appends; host A's broker hears nothing in-process and must
		// find the events by its fallback re-read.
		start := time.Now()
		go appendN(t, c.b.svc, c.alice, wf.ID, 2, 10)
		expect(t, ch, 2, 21)
		if took := time.Since(start); took > 20*interval {
			t.Errorf("events from another host took %v with a %v interval", took, interval)
		}
		if _, err := c.b.svc.Complete(ctx, c.alice, wf.ID, "done"); err != nil {
			t.Fatal(err)
		}
		next(t, ch, 22, workflows.EventComplete, "the complete event from host B")
		// Deleting on host B closes host A's subscribers within the interval.
		if err := c.b.svc.Delete(ctx, c.alice, wf.ID); err != nil {
			t.Fatal(err)
		}
		closed(t, ch, 10*interval)
	})
}

func TestDeleteClosesSubscribers(t *testing.T) {
	dialects(t, func(t *testing.T, c *cluster) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		wf := c.start(t)
		// A broker that reads once an hour: a close within the wait below
		// comes from the delete on this host, not from a tick. (The wait
		// bounds how long a failure takes; no speed is asked of the machine.)
		h := newHostEvery(c.a.db, c.a.db, time.Hour)
		ch, err := h.svc.Subscribe(ctx, c.alice, wf.ID, 0)
		if err != nil {
			t.Fatal(err)
		}
		expect(t, ch, 1, 1)
		if err := h.svc.Delete(ctx, c.alice, wf.ID); err != nil {
			t.Fatal(err)
		}
		closed(t, ch, time.Minute)
	})
}

func TestSubscribeAccess(t *testing.T) {
	dialects(t, func(t *testing.T, c *cluster) {
		wf := c.start(t)
		for _, id := range []string{wf.ID, "nope"} {
			if _, err := c.a.svc.Subscribe(context.Background(), c.bob, id, 0); !errors.Is(err, tenancy.ErrNotFound) {
				t.Errorf("bob subscribing to %s: %v", id, err)
			}
		}
		if n := c.a.broker.Followed(); n != 0 {
			t.Errorf("refused subscriptions left %d topics", n)
		}
	})
}

// TestIdleSubscribersCostLittle: 1,000 subscribers of 100 workflows read
// the database once each when they subscribe; after that, while idle, the
// broker reads only the heads, once per interval for all of them; and a live
// event appended in this process reaches its subscribers from memory.
func TestIdleSubscribersCostLittle(t *testing.T) {
	dialects(t, func(t *testing.T, c *cluster) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		const workflowsN, per = 100, 10
		var wfs []workflows.Workflow
		for range workflowsN {
			wfs = append(wfs, c.start(t))
		}
		chans := make([][]<-chan workflows.Event, workflowsN)
		for i, wf := range wfs {
			for range per {
				ch, err := c.a.svc.Subscribe(ctx, c.alice, wf.ID, 1)
				if err != nil {
					t.Fatal(err)
				}
				chans[i] = append(chans[i], ch)
			}
		}
		src := c.countingSrcA
		events0, heads0 := src.events.Load(), src.heads.Load()
		if events0 != workflowsN*per {
			t.Errorf("%d event reads to subscribe, want one each (%d)", events0, workflowsN*per)
		}
		time.Sleep(5 * interval)
		events1, heads1 := src.events.Load(), src.heads.Load()
		if events1 != events0 {
			t.Errorf("idle subscribers read events %d times", events1-events0)
		}
		if h := heads1 - heads0; h < 3 || h > 7 {
			t.Errorf("%d head reads in 5 intervals, want about one per interval", h)
		}

		// One live event for one workflow: its ten subscribers get it from
		// memory, the others hear nothing.
		if _, err := c.a.svc.Append(ctx, c.alice, wfs[7].ID, workflows.EventStatus, workflows.StatusData{Label: "hi"}); err != nil {
			t.Fatal(err)
		}
		for _, ch := range chans[7] {
			select {
			case ev := <-ch:
				if ev.Seq != 2 {
					t.Fatalf("got seq %d", ev.Seq)
				}
			case <-time.After(5 * time.Second):
				t.Fatal("live event not delivered")
			}
		}
		if n := src.events.Load() - events1; n != 0 {
			t.Errorf("a live in-process event cost %d reads, want 0", n)
		}
		for i, cs := range chans {
			if i == 7 {
				continue
			}
			select {
			case ev := <-cs[0]:
				t.Fatalf("workflow %d's subscriber got %+v", i, ev)
			default:
			}
		}
		cancel()
		for _, cs := range chans {
			for _, ch := range cs {
				closed(t, ch, 5*time.Second)
			}
		}
	})
}

// TestSubscribeOwnsTheID: an id handed to Subscribe may live in a buffer
// its caller reuses (an HTTP server's request bytes are reused for the next
// request): the broker keeps a copy, so a reused buffer changes nothing.
// Without the copy the topic's map key changed under it and the stream
// stopped receiving, which the load test found.
func TestSubscribeOwnsTheID(t *testing.T) {
	dialects(t, func(t *testing.T, c *cluster) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		wf := c.start(t) // event 1
		buf := []byte(wf.ID)
		shared := unsafe.String(&buf[0], len(buf))
		ch, err := c.a.svc.Subscribe(ctx, c.alice, shared, 0)
		if err != nil {
			t.Fatal(err)
		}
		copy(buf, strings.Repeat("x", len(buf))) // the caller's next request
		appendN(t, c.a.svc, c.alice, wf.ID, 1, 5)
		expect(t, ch, 1, 6)
	})
}
