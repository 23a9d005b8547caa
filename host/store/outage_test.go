package store_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"testing"
	"time"

	"github.com/agenthost/agenthost/host/dbwait"
	"github.com/agenthost/agenthost/host/store"
	"github.com/agenthost/agenthost/host/tenancy"
	"github.com/agenthost/agenthost/host/testenv"
	"github.com/agenthost/agenthost/host/workflows"
)

// TestRoundWritesWaitOutAnOutage (issue 32 item 3): PostgreSQL goes away
// (a proxy in front of it is cut: a fair model of a restart, as the client
// sees one) while a round appends events. The appends under
// workflows.WithRetries wait and go in, in order, once it is back, with
// consecutive sequence numbers; an API write (no mark) fails at once with
// an error IsUnavailable recognises; a waiting write whose context ends
// gives up with the database's error.
func TestRoundWritesWaitOutAnOutage(t *testing.T) {
	ctx := context.Background()
	proxied, _, proxy := testenv.PostgresBehindProxy(t)
	db, err := store.Open(ctx, store.Config{URL: proxied})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if err := db.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	ten, err := db.CreateTenant(ctx, "Acme")
	if err != nil {
		t.Fatal(err)
	}
	u, err := db.CreateUser(ctx, tenancy.User{TenantID: ten.ID, Email: "ada@acme.example", Admin: true})
	if err != nil {
		t.Fatal(err)
	}
	ws, err := db.CreateWorkspace(ctx, tenancy.Workspace{TenantID: ten.ID, Name: "A"})
	if err != nil {
		t.Fatal(err)
	}
	p := tenancy.Principal{TenantID: ten.ID, UserID: u.ID, Admin: true}
	svc := workflows.NewService(db, nil, nil).WithRetry(store.IsUnavailable)
	w, err := svc.Start(ctx, p, workflows.NewWorkflow{WorkspaceID: ws.ID})
	if err != nil {
		t.Fatal(err)
	}

	proxy.Cut()
	// An API request is told at once.
	if _, err := svc.Append(ctx, p, w.ID, workflows.EventChunk, workflows.ChunkData{Text: "api"}); !store.IsUnavailable(err) {
		t.Fatalf("an unmarked append while the database is away: %v, want an unavailable error", err)
	}
	// A waiting write whose context ends gives up.
	short, cancel := context.WithTimeout(dbwait.WithRetries(ctx, nil), 300*time.Millisecond)
	_, err = svc.Append(short, p, w.ID, workflows.EventChunk, workflows.ChunkData{Text: "late"})
	cancel()
	if !store.IsUnavailable(err) {
		t.Fatalf("a retried append whose context ended: %v", err)
	}
	// The round's appends wait, in order, and go in once it is back.
	round := dbwait.WithRetries(ctx, nil)
	const n = 20
	done := make(chan error, 1)
	go func() {
		for i := range n {
			if _, err := svc.Append(round, p, w.ID, workflows.EventChunk, workflows.ChunkData{MessageID: "m", Text: fmt.Sprint(i)}); err != nil {
				done <- err
				return
			}
		}
		done <- nil
	}()
	time.Sleep(time.Second)
	select {
	case err := <-done:
		t.Fatalf("the appends ended while the database was away: %v", err)
	default:
	}
	proxy.Restore()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	evs, err := svc.Events(ctx, p, w.ID, 0, 100)
	if err != nil {
		t.Fatal(err)
	}
	// The first event is the workflow's `status` running.
	if len(evs) != n+1 {
		t.Fatalf("%d events, want %d", len(evs), n+1)
	}
	for i, ev := range evs {
		if ev.Seq != int64(i+1) {
			t.Fatalf("event %d has seq %d", i, ev.Seq)
		}
		if i == 0 {
			continue
		}
		var c workflows.ChunkData
		json.Unmarshal(ev.Data, &c)
		if c.Text != fmt.Sprint(i-1) {
			t.Fatalf("event %d is chunk %q, want %d: out of order", ev.Seq, c.Text, i-1)
		}
	}
}

// TestIsUnavailable: the errors of a database that cannot be reached are
// told from the others.
func TestIsUnavailable(t *testing.T) {
	ctx := context.Background()
	// A port nothing listens on: a real failure to connect.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	_, connErr := store.Open(ctx, store.Config{URL: "postgres://postgres@" + addr + "/x?connect_timeout=2"})
	for _, tc := range []struct {
		name string
		err  error
		want bool
	}{
		{"failed to connect", connErr, true},
		{"wrapped", fmt.Errorf("store: append event: %w", connErr), true},
		{"not found", tenancy.ErrNotFound, false},
		{"conflict", &workflows.TransitionError{}, false},
		{"cancelled", context.Canceled, false},
		{"nil", nil, false},
	} {
		if got := store.IsUnavailable(tc.err); got != tc.want {
			t.Errorf("%s (%v): %v, want %v", tc.name, tc.err, got, tc.want)
		}
	}
}
