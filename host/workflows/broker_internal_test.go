package workflows

import (
	"context"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/agenthost/agenthost/host/tenancy"
)

// memSource is an in-memory event source: the stored events of workflow
// "w", readable by anyone.
type memSource struct {
	mu     sync.Mutex
	events []Event
}

func (m *memSource) add(n int) []Event {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []Event
	for range n {
		ev := Event{WorkflowID: "w", Seq: int64(len(m.events) + 1), Type: EventChunk}
		m.events = append(m.events, ev)
		out = append(out, ev)
	}
	return out
}

func (m *memSource) Events(_ context.Context, _ tenancy.Principal, id string, after int64, limit int) ([]Event, error) {
	if id != "w" {
		return nil, tenancy.ErrNotFound
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if after >= int64(len(m.events)) {
		return []Event{}, nil
	}
	out := m.events[after:]
	return slices.Clone(out[:min(limit, len(out))]), nil
}

func (m *memSource) EventHeads(_ context.Context, ids []string) (map[string]int64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return map[string]int64{"w": int64(len(m.events))}, nil
}

func receive(t *testing.T, ch <-chan Event, from, to int64) {
	t.Helper()
	for want := from; want <= to; want++ {
		select {
		case ev := <-ch:
			if ev.Seq != want {
				t.Fatalf("got seq %d, want %d", ev.Seq, want)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("timed out waiting for %d", want)
		}
	}
}

// TestNotifyOutOfOrder: appends commit in sequence order but their
// goroutines may report them in any order, twice, or not at all; the
// subscribers still see every event once, in order, without waiting for the
// fallback (whose interval here is an hour).
func TestNotifyOutOfOrder(t *testing.T) {
	for _, c := range []struct {
		name   string
		mangle func([]Event) []Event
	}{
		{"in order", func(evs []Event) []Event { return evs }},
		{"shuffled", func(evs []Event) []Event {
			rand.Shuffle(len(evs), func(i, j int) { evs[i], evs[j] = evs[j], evs[i] })
			return evs
		}},
		{"reversed", func(evs []Event) []Event { slices.Reverse(evs); return evs }},
		{"twice", func(evs []Event) []Event { return append(evs, evs...) }},
		{"only the last", func(evs []Event) []Event { return evs[len(evs)-1:] }},
	} {
		t.Run(c.name, func(t *testing.T) {
			src := &memSource{}
			b := NewBroker(src, BrokerConfig{Interval: time.Hour, Recent: 8})
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			src.add(3)
			var subs []<-chan Event
			for _, after := range []int64{0, 2, 3} {
				ch, err := b.Subscribe(ctx, tenancy.Principal{}, "w", after)
				if err != nil {
					t.Fatal(err)
				}
				subs = append(subs, ch)
			}
			total := int64(3)
			for range 10 {
				batch := src.add(20) // more than the window keeps
				total += 20
				for _, ev := range c.mangle(batch) {
					b.Notify(ev)
				}
			}
			for i, after := range []int64{0, 2, 3} {
				receive(t, subs[i], after+1, total)
			}
		})
	}
}

func TestRecentWindow(t *testing.T) {
	tp := &topic{changed: make(chan struct{})}
	b := &Broker{recent: 4, topics: map[string]*topic{"w": tp}}
	for s := int64(1); s <= 20; s++ {
		b.Notify(Event{WorkflowID: "w", Seq: s})
		if n := len(tp.recent); n > 8 || tp.recent[n-1].Seq != s || tp.recent[0].Seq+int64(n)-1 != s {
			t.Fatalf("after %d: window %d..%d", s, tp.recent[0].Seq, tp.recent[n-1].Seq)
		}
	}
	first := tp.recent[0].Seq
	for _, c := range []struct {
		after int64
		want  int
	}{{first - 2, 0}, {first - 1, len(tp.recent)}, {first, len(tp.recent) - 1}, {19, 1}, {20, 0}, {25, 0}} {
		if got := tp.after(c.after); len(got) != c.want || (c.want > 0 && got[0].Seq != c.after+1) {
			t.Errorf("after %d: %d events, want %d", c.after, len(got), c.want)
		}
	}
	b.Notify(Event{WorkflowID: "w", Seq: 30}) // a hole: the window restarts
	if len(tp.recent) != 1 || tp.recent[0].Seq != 30 || tp.head != 30 {
		t.Fatalf("after a hole: %+v head %d", tp.recent, tp.head)
	}
	b.Notify(Event{WorkflowID: "w", Seq: 25}) // late: ignored
	if len(tp.recent) != 1 || tp.head != 30 {
		t.Fatalf("after a late event: %+v head %d", tp.recent, tp.head)
	}
}

// TestIdleSubscriberMemory reports what an idle subscriber costs: its
// goroutine's stack and the broker's bookkeeping.
func TestIdleSubscriberMemory(t *testing.T) {
	src := &memSource{}
	src.add(1)
	b := NewBroker(src, BrokerConfig{Interval: time.Hour})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	const n = 1000
	var m0, m1 runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&m0)
	var chans []<-chan Event
	for range n {
		ch, err := b.Subscribe(ctx, tenancy.Principal{}, "w", 1)
		if err != nil {
			t.Fatal(err)
		}
		chans = append(chans, ch)
	}
	time.Sleep(50 * time.Millisecond) // let every goroutine park
	runtime.GC()
	runtime.ReadMemStats(&m1)
	per := float64((m1.HeapAlloc+m1.StackInuse)-(m0.HeapAlloc+m0.StackInuse)) / n / 1024
	t.Logf("idle subscriber: %.1f KiB (heap and stack)", per)
	if per > 16 {
		t.Errorf("an idle subscriber costs %.1f KiB", per)
	}
	ev := src.add(1)[0]
	b.Notify(ev)
	for _, ch := range chans {
		receive(t, ch, 2, 2)
	}
}
