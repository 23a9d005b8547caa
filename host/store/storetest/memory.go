package storetest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/agenthost/agenthost/host/knowledge/kindex"
	"github.com/agenthost/agenthost/host/store"
	"github.com/agenthost/agenthost/host/tenancy"
	"github.com/agenthost/agenthost/host/workflows"
)

// testMemory: a workflow's memory (the knowledge store's workflow layer) is
// upserted by (workflow, key), listed newest first by source, reached only
// as its workflow is (owner writes, tenant admin reads, anyone else sees
// nothing), refuses bad input, and goes with its workflow.
func testMemory(t *testing.T, open Opener) {
	ctx := context.Background()
	w := newWorld(t, open)
	db := w.env.DB
	svc := wfService(w)
	wf := startWF(t, svc, w.alice, w.wsA.ID)
	other := startWF(t, svc, w.alice, w.wsA.ID)

	put := func(p tenancy.Principal, wfID, key, value string, src kindex.MemorySource) (kindex.Memory, error) {
		return db.UpsertMemory(ctx, p, kindex.Memory{WorkflowID: wfID, Key: key, Value: value, Source: src})
	}
	first, err := put(w.alice, wf.ID, "entity:company", "Acme AG", kindex.MemoryExtraction)
	if err != nil || first.ID == "" || first.CreatedAt.IsZero() || first.Value != "Acme AG" {
		t.Fatalf("insert: %+v %v", first, err)
	}
	for _, m := range []kindex.Memory{
		{Key: "tool:c1", Value: "search (ok): 3 hits", Source: kindex.MemoryTool},
		{Key: "tool:c2", Value: "read (ok): page 5", Source: kindex.MemoryTool},
		{Key: "entity:revenueQ4", Value: "12.5M CHF", Source: kindex.MemoryExtraction},
	} {
		if _, err := put(w.alice, wf.ID, m.Key, m.Value, m.Source); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := put(w.alice, other.ID, "entity:company", "Other GmbH", kindex.MemoryExtraction); err != nil {
		t.Fatal(err)
	}
	// The same key again replaces value and source, keeps the entry.
	again, err := put(w.alice, wf.ID, "entity:company", "Acme Holding AG", kindex.MemoryConversation)
	if err != nil || again.ID != first.ID || !again.CreatedAt.Equal(first.CreatedAt) || again.UpdatedAt.Before(first.UpdatedAt) {
		t.Fatalf("upsert: %+v (first %+v) %v", again, first, err)
	}

	keys := func(ms []kindex.Memory) string {
		var ks []string
		for _, m := range ms {
			ks = append(ks, m.Key+"="+m.Value)
		}
		return strings.Join(ks, ",")
	}
	cases := []struct {
		name   string
		p      tenancy.Principal
		source kindex.MemorySource
		limit  int
		want   string
	}{
		{"all, newest first", w.alice, "", 10, "entity:company=Acme Holding AG,entity:revenueQ4=12.5M CHF,tool:c2=read (ok): page 5,tool:c1=search (ok): 3 hits"},
		{"tool results", w.alice, kindex.MemoryTool, 10, "tool:c2=read (ok): page 5,tool:c1=search (ok): 3 hits"},
		{"the most recent tool result", w.alice, kindex.MemoryTool, 1, "tool:c2=read (ok): page 5"},
		{"extraction after the upsert moved company", w.alice, kindex.MemoryExtraction, 10, "entity:revenueQ4=12.5M CHF"},
		{"tenant admin reads", w.admin, kindex.MemoryConversation, 10, "entity:company=Acme Holding AG"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := db.Memories(ctx, c.p, wf.ID, c.source, c.limit)
			if err != nil || keys(got) != c.want {
				t.Fatalf("got %q %v, want %q", keys(got), err, c.want)
			}
			for _, m := range got {
				if m.WorkflowID != wf.ID {
					t.Fatalf("entry of workflow %s listed", m.WorkflowID)
				}
			}
		})
	}

	// Access is the workflow's.
	for _, p := range []tenancy.Principal{w.bob, w.victor, w.carol, w.dave, w.daveAdmin} {
		if _, err := db.Memories(ctx, p, wf.ID, "", 10); !errors.Is(err, tenancy.ErrNotFound) {
			t.Errorf("read by %s: %v, want ErrNotFound", p.UserID, err)
		}
		if _, err := put(p, wf.ID, "entity:x", "y", kindex.MemoryExtraction); !errors.Is(err, tenancy.ErrNotFound) {
			t.Errorf("write by %s: %v, want ErrNotFound", p.UserID, err)
		}
		if err := db.DeleteMemory(ctx, p, wf.ID, "tool:c1"); !errors.Is(err, tenancy.ErrNotFound) {
			t.Errorf("delete by %s: %v, want ErrNotFound", p.UserID, err)
		}
	}
	if _, err := put(w.admin, wf.ID, "entity:x", "y", kindex.MemoryExtraction); !errors.Is(err, tenancy.ErrForbidden) {
		t.Errorf("write by the tenant admin: %v, want ErrForbidden", err)
	}

	// Bad input is refused with a reason.
	bad := []struct {
		name string
		m    kindex.Memory
	}{
		{"empty key", kindex.Memory{WorkflowID: wf.ID, Key: " ", Value: "v", Source: kindex.MemoryTool}},
		{"long key", kindex.Memory{WorkflowID: wf.ID, Key: strings.Repeat("k", kindex.MaxMemoryKeyBytes+1), Source: kindex.MemoryTool}},
		{"long value", kindex.Memory{WorkflowID: wf.ID, Key: "k", Value: strings.Repeat("v", kindex.MaxMemoryValueBytes+1), Source: kindex.MemoryTool}},
		{"unknown source", kindex.Memory{WorkflowID: wf.ID, Key: "k", Value: "v", Source: "guess"}},
		{"invalid UTF-8", kindex.Memory{WorkflowID: wf.ID, Key: "k", Value: "\xff", Source: kindex.MemoryTool}},
		{"no workflow", kindex.Memory{Key: "k", Value: "v", Source: kindex.MemoryTool}},
	}
	for _, b := range bad {
		if _, err := db.UpsertMemory(ctx, w.alice, b.m); !errors.Is(err, tenancy.ErrInvalid) {
			t.Errorf("%s: %v, want ErrInvalid", b.name, err)
		}
	}
	if _, err := db.Memories(ctx, w.alice, wf.ID, "", 0); !errors.Is(err, tenancy.ErrInvalid) {
		t.Errorf("limit 0: %v", err)
	}
	if _, err := db.Memories(ctx, w.alice, wf.ID, "guess", 10); !errors.Is(err, tenancy.ErrInvalid) {
		t.Errorf("unknown source: %v", err)
	}
	if _, err := db.Memories(ctx, w.alice, "no-such-workflow", "", 10); !errors.Is(err, tenancy.ErrNotFound) {
		t.Errorf("unknown workflow: %v", err)
	}

	t.Run("tool results are bounded", func(t *testing.T) { testMemoryBound(t, db, svc, w) })

	// Delete one entry; a missing key says so.
	if err := db.DeleteMemory(ctx, w.alice, wf.ID, "tool:c1"); err != nil {
		t.Fatal(err)
	}
	if err := db.DeleteMemory(ctx, w.alice, wf.ID, "tool:c1"); !errors.Is(err, tenancy.ErrNotFound) {
		t.Fatalf("deleting twice: %v", err)
	}

	// The memory goes with its workflow, and only its.
	if err := svc.Delete(ctx, w.alice, wf.ID); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := db.SQL().QueryRowContext(ctx, "SELECT COUNT(*) FROM workflow_memory WHERE workflow_id = '"+wf.ID+"'").Scan(&n); err != nil || n != 0 {
		t.Fatalf("%d entries left after the workflow's deletion (%v)", n, err)
	}
	if got, err := db.Memories(ctx, w.alice, other.ID, "", 10); err != nil || keys(got) != "entity:company=Other GmbH" {
		t.Fatalf("the other workflow's memory: %q %v", keys(got), err)
	}
}

// testMemoryBound: writing a tool result keeps only the newest
// store.MaxToolMemories tool results of its workflow; entries of other
// sources and other workflows' tool results stay, and rewriting an old
// result's key makes it the newest again.
func testMemoryBound(t *testing.T, db *store.DB, svc *workflows.Service, w *world) {
	ctx := context.Background()
	wf := startWF(t, svc, w.alice, w.wsA.ID)
	other := startWF(t, svc, w.alice, w.wsA.ID)
	put := func(wfID, key string, src kindex.MemorySource) {
		t.Helper()
		if _, err := db.UpsertMemory(ctx, w.alice, kindex.Memory{WorkflowID: wfID, Key: key, Value: "v " + key, Source: src}); err != nil {
			t.Fatal(err)
		}
	}
	put(wf.ID, "entity:company", kindex.MemoryExtraction)
	put(other.ID, "tool:o1", kindex.MemoryTool)
	const extra = 7
	for i := range store.MaxToolMemories + extra {
		put(wf.ID, fmt.Sprintf("tool:c%03d", i), kindex.MemoryTool)
	}
	count := func(wfID string, src kindex.MemorySource) int {
		t.Helper()
		var n int
		if err := db.SQL().QueryRowContext(ctx, "SELECT COUNT(*) FROM workflow_memory WHERE workflow_id = '"+wfID+"' AND source = '"+string(src)+"'").Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if n := count(wf.ID, kindex.MemoryTool); n != store.MaxToolMemories {
		t.Fatalf("%d tool results kept, want %d", n, store.MaxToolMemories)
	}
	got, err := db.Memories(ctx, w.alice, wf.ID, kindex.MemoryTool, store.MaxToolMemories+extra)
	if err != nil {
		t.Fatal(err)
	}
	if newest, oldest := got[0].Key, got[len(got)-1].Key; newest != fmt.Sprintf("tool:c%03d", store.MaxToolMemories+extra-1) || oldest != fmt.Sprintf("tool:c%03d", extra) {
		t.Fatalf("kept %s .. %s, want the newest %d", oldest, newest, store.MaxToolMemories)
	}
	if count(wf.ID, kindex.MemoryExtraction) != 1 || count(other.ID, kindex.MemoryTool) != 1 {
		t.Fatal("pruning reached another source or another workflow")
	}
	// The oldest kept result, written again, is the newest: the next
	// prune takes the one after it.
	oldest := fmt.Sprintf("tool:c%03d", extra)
	put(wf.ID, oldest, kindex.MemoryTool)
	put(wf.ID, "tool:last", kindex.MemoryTool)
	got, err = db.Memories(ctx, w.alice, wf.ID, kindex.MemoryTool, store.MaxToolMemories+extra)
	if err != nil || len(got) != store.MaxToolMemories {
		t.Fatalf("%d kept (%v)", len(got), err)
	}
	keys := map[string]bool{}
	for _, m := range got {
		keys[m.Key] = true
	}
	if !keys[oldest] || !keys["tool:last"] || keys[fmt.Sprintf("tool:c%03d", extra+1)] {
		t.Fatalf("after rewriting %s: %v", oldest, keys)
	}
}
