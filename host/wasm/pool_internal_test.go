package wasm

import (
	"context"
	"testing"
	"time"
)

// TestPoolLeavesNoClosedInstanceReachable: however instances leave the
// idle list (taken by their tenant, their slot given to another tenant,
// expired), no slot of the list's backing array past its length still
// points at one. Such a stale pointer keeps a closed instance's guest
// memory reachable, which the garbage collector then never frees: after
// an ingestion the server held the memory of every instance it had closed.
func TestPoolLeavesNoClosedInstanceReachable(t *testing.T) {
	ctx := context.Background()
	mk := func(_ context.Context, tenant string) (*instance, error) {
		return &instance{tenant: tenant, k: newKernel(1 << 20)}, nil
	}
	stale := func(p *pool) int {
		p.mu.Lock()
		defer p.mu.Unlock()
		n := 0
		for _, in := range p.idle[len(p.idle):cap(p.idle)] {
			if in != nil {
				n++
			}
		}
		return n
	}
	cases := []struct {
		name string
		// run leaves the pool with instances gone from its idle list.
		run func(t *testing.T, p *pool)
	}{
		{"taken back by its tenant", func(t *testing.T, p *pool) {
			a, _, _ := p.get(ctx, "t1")
			b, _, _ := p.get(ctx, "t1")
			p.put(a, true)
			p.put(b, true)
			in, reused, err := p.get(ctx, "t1") // b, the most recent: a's slot follows it
			if err != nil || !reused || in != b {
				t.Fatalf("get: %v, reused %v", err, reused)
			}
			in2, _, _ := p.get(ctx, "t1")
			if in2 != a {
				t.Fatal("the second get did not take the other idle instance")
			}
		}},
		{"slot given to another tenant", func(t *testing.T, p *pool) {
			a, _, _ := p.get(ctx, "t1")
			b, _, _ := p.get(ctx, "t1")
			p.put(a, true)
			p.put(b, true)
			if _, reused, err := p.get(ctx, "t2"); err != nil || reused {
				t.Fatalf("another tenant's get: %v, reused %v", err, reused)
			}
		}},
		{"expired", func(t *testing.T, p *pool) {
			a, _, _ := p.get(ctx, "t1")
			b, _, _ := p.get(ctx, "t1")
			p.put(a, true)
			p.put(b, true)
			if n := p.expire(time.Now().Add(2 * time.Hour)); n != 2 {
				t.Fatalf("expired %d, want 2", n)
			}
			if p.live != 0 {
				t.Fatalf("%d live after every instance expired", p.live)
			}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := newPool(2, mk, poolExpiry{after: time.Hour})
			defer p.close()
			tc.run(t, p)
			if n := stale(p); n != 0 {
				t.Fatalf("%d instances gone from the idle list still referenced by its backing array", n)
			}
		})
	}
}
