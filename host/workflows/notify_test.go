package workflows_test

import (
	"context"
	"testing"
	"time"

	"github.com/agenthost/agenthost/host/store"
	"github.com/agenthost/agenthost/host/testenv"
	"github.com/agenthost/agenthost/host/workflows"
)

// listener runs host db's events listener for broker b until the test ends;
// every call of its Resync is sent on the returned channel (the listener
// started listening, or lost its connection).
func listener(t *testing.T, db *store.DB, b *workflows.Broker, retry time.Duration) <-chan struct{} {
	return listenerChecking(t, db, b, retry, 0)
}

// listenerChecking is listener with the silence after which it pings its
// connection (0: the default).
func listenerChecking(t *testing.T, db *store.DB, b *workflows.Broker, retry, check time.Duration) <-chan struct{} {
	t.Helper()
	resyncs := make(chan struct{}, 100)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- db.ListenEvents(ctx, store.ListenConfig{Advance: b.Advance, RetryPause: retry, Check: check,
			Resync: func() { b.Resync(); resyncs <- struct{}{} }})
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	})
	return resyncs
}

func waitResync(t *testing.T, resyncs <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-resyncs:
	case <-time.After(30 * time.Second):
		t.Fatalf("the listener did not %s", what)
	}
}

// killListener ends the listener's connection from the server side, as a
// failover or an operator would.
func killListener(t *testing.T, db *store.DB) {
	t.Helper()
	var n int
	err := db.SQL().QueryRowContext(context.Background(), `SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
		WHERE application_name = $1 AND datname = current_database()`, store.ListenerApplicationName).Scan(&n)
	if err != nil || n != 1 {
		t.Fatalf("terminated %d listeners: %v", n, err)
	}
}

// TestEventsAcrossHostsByNotification: host B's broker never polls (its
// interval is an hour), so the events appended on host A reach B's
// subscriber only through LISTEN/NOTIFY: all of them, in order, before and
// after the listener's connection is killed and reconnects.
func TestEventsAcrossHostsByNotification(t *testing.T) {
	url := testenv.Postgres(t)
	c := newCluster(t, func(tb testing.TB) *store.DB { return open(tb, store.Config{URL: url}) })
	b := workflows.NewBroker(c.b.db, workflows.BrokerConfig{Interval: time.Hour})
	svcB := workflows.NewService(c.b.db, b, nil)
	resyncs := listener(t, c.b.db, b, 10*time.Millisecond)
	waitResync(t, resyncs, "start listening")

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	wf := c.start(t)
	ch, err := svcB.Subscribe(ctx, c.alice, wf.ID, 0)
	if err != nil {
		t.Fatal(err)
	}
	expect(t, ch, 1, 1)
	go appendN(t, c.a.svc, c.alice, wf.ID, 2, 10)
	expect(t, ch, 2, 21)

	killListener(t, c.b.db)
	waitResync(t, resyncs, "notice its lost connection")
	waitResync(t, resyncs, "listen again")
	go appendN(t, c.a.svc, c.alice, wf.ID, 2, 10)
	expect(t, ch, 22, 41)
}

// TestEventsAcrossHostsFallBackToThePoll: once host B's listener has lost
// its connection (and does not reconnect within the test), the events
// appended on host A still reach B's subscriber by the broker's periodic
// read: none lost, in order, including those appended while the connection
// was being killed.
func TestEventsAcrossHostsFallBackToThePoll(t *testing.T) {
	url := testenv.Postgres(t)
	c := newCluster(t, func(tb testing.TB) *store.DB { return open(tb, store.Config{URL: url}) })
	resyncs := listener(t, c.b.db, c.b.broker, time.Hour)
	waitResync(t, resyncs, "start listening")

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	wf := c.start(t)
	ch, err := c.b.svc.Subscribe(ctx, c.alice, wf.ID, 0)
	if err != nil {
		t.Fatal(err)
	}
	expect(t, ch, 1, 1)
	appended := make(chan struct{})
	go func() {
		defer close(appended)
		appendN(t, c.a.svc, c.alice, wf.ID, 2, 20)
	}()
	killListener(t, c.b.db)
	waitResync(t, resyncs, "notice its lost connection")
	<-appended
	appendN(t, c.a.svc, c.alice, wf.ID, 2, 10)
	expect(t, ch, 2, 61)
	select {
	case <-resyncs:
		t.Fatal("the listener reconnected; the test no longer shows the poll delivering")
	default:
	}
}

// TestListenerSurvivesSilence: a listener whose connection stays silent
// pings it and keeps it (no reconnect, so no resync), and still hears the
// next announcement.
func TestListenerSurvivesSilence(t *testing.T) {
	url := testenv.Postgres(t)
	c := newCluster(t, func(tb testing.TB) *store.DB { return open(tb, store.Config{URL: url}) })
	b := workflows.NewBroker(c.b.db, workflows.BrokerConfig{Interval: time.Hour})
	svcB := workflows.NewService(c.b.db, b, nil)
	resyncs := listenerChecking(t, c.b.db, b, 10*time.Millisecond, 20*time.Millisecond)
	waitResync(t, resyncs, "start listening")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	wf := c.start(t)
	ch, err := svcB.Subscribe(ctx, c.alice, wf.ID, 0)
	if err != nil {
		t.Fatal(err)
	}
	expect(t, ch, 1, 1)
	time.Sleep(300 * time.Millisecond) // fifteen silent checks
	select {
	case <-resyncs:
		t.Fatal("the listener reconnected after a silence")
	default:
	}
	appendN(t, c.a.svc, c.alice, wf.ID, 1, 3)
	expect(t, ch, 2, 4)
}

// TestReleasedRoundsAnnounced: a stopping host's word that it released
// rounds reaches the other host's listener (which wakes its take-over
// sweep), and not its own.
func TestReleasedRoundsAnnounced(t *testing.T) {
	url := testenv.Postgres(t)
	c := newCluster(t, func(tb testing.TB) *store.DB { return open(tb, store.Config{URL: url}) })
	listen := func(db *store.DB, b *workflows.Broker) (resyncs, released chan struct{}) {
		resyncs, released = make(chan struct{}, 100), make(chan struct{}, 100)
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() {
			done <- db.ListenEvents(ctx, store.ListenConfig{Advance: b.Advance,
				Resync:   func() { b.Resync(); resyncs <- struct{}{} },
				Released: func() { released <- struct{}{} }})
		}()
		t.Cleanup(func() {
			cancel()
			if err := <-done; err != nil {
				t.Error(err)
			}
		})
		return resyncs, released
	}
	resyncsA, releasedA := listen(c.a.db, c.a.broker)
	resyncsB, releasedB := listen(c.b.db, c.b.broker)
	waitResync(t, resyncsA, "start listening")
	waitResync(t, resyncsB, "start listening")

	if err := c.a.db.AnnounceReleased(context.Background()); err != nil {
		t.Fatal(err)
	}
	select {
	case <-releasedB:
	case <-time.After(30 * time.Second):
		t.Fatal("host B did not hear that host A released rounds")
	}
	// PostgreSQL delivers notifications in their commits' order: once A
	// heard B's word, sent after its own, it had read its own and skipped it.
	if err := c.b.db.AnnounceReleased(context.Background()); err != nil {
		t.Fatal(err)
	}
	select {
	case <-releasedA:
	case <-time.After(30 * time.Second):
		t.Fatal("host A did not hear that host B released rounds")
	}
	select {
	case <-releasedA:
		t.Fatal("host A heard its own release")
	case <-releasedB:
		t.Fatal("host B heard its own release")
	default:
	}
}
