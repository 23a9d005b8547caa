package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/agenthost/agenthost/host/store"
	"github.com/agenthost/agenthost/host/tenancy"
	"github.com/agenthost/agenthost/host/workflows"
)

// testToolPolicies: a workspace's approval policies are read by members and
// set only by its managers and the tenant's admin; "" returns a tool to the
// default; a policy outside auto/ask/deny is refused.
func testToolPolicies(t *testing.T, open Opener) {
	ctx := context.Background()
	w := newWorld(t, open)
	db := w.env.DB
	for _, c := range []struct {
		name string
		p    tenancy.Principal
		want error
	}{
		{"a member", w.alice, tenancy.ErrForbidden},
		{"a viewer", w.victor, tenancy.ErrForbidden},
		{"another workspace's manager", w.carol, tenancy.ErrNotFound},
		{"another tenant's admin", w.daveAdmin, tenancy.ErrNotFound},
	} {
		if _, err := db.SetToolPolicy(ctx, c.p, w.wsA.ID, "sendMail", "auto"); !errors.Is(err, c.want) {
			t.Errorf("set by %s: %v, want %v", c.name, err, c.want)
		}
	}
	if _, err := db.SetToolPolicy(ctx, w.admin, w.wsA.ID, "sendMail", "maybe"); !errors.Is(err, tenancy.ErrInvalid) {
		t.Errorf("policy maybe: %v", err)
	}
	if was, err := db.SetToolPolicy(ctx, w.admin, w.wsA.ID, "sendMail", "deny"); err != nil || was != "" {
		t.Fatalf("set: %q %v", was, err)
	}
	if was, err := db.SetToolPolicy(ctx, w.admin, w.wsA.ID, "sendMail", "auto"); err != nil || was != "deny" {
		t.Fatalf("replace: %q %v", was, err)
	}
	got, err := db.ToolPolicies(ctx, w.alice, w.wsA.ID)
	if err != nil || len(got) != 1 || got["sendMail"] != "auto" {
		t.Fatalf("read by a member: %v %v", got, err)
	}
	if _, err := db.ToolPolicies(ctx, w.carol, w.wsA.ID); !errors.Is(err, tenancy.ErrNotFound) {
		t.Errorf("read by an outsider: %v", err)
	}
	if was, err := db.SetToolPolicy(ctx, w.admin, w.wsA.ID, "sendMail", ""); err != nil || was != "auto" {
		t.Fatalf("back to the default: %q %v", was, err)
	}
	if got, _ := db.ToolPolicies(ctx, w.alice, w.wsA.ID); len(got) != 0 {
		t.Fatalf("after the reset: %v", got)
	}
}

// testApprovals: a paused round's approvals are stored with the workflow
// marked waiting (no host, not an orphan for RunningWorkflowsBefore); of
// concurrent decisions on one approval exactly one is recorded, and of
// several hosts (two handles on the database where the opener has them)
// claiming the resumption exactly one succeeds, and only once every
// approval of the pause is decided.
func testApprovals(t *testing.T, open Opener) {
	ctx := context.Background()
	w := newWorld(t, open)
	db := w.env.DB
	wf := startWF(t, wfService(w), w.alice, w.wsA.ID)
	if err := db.SetRoundHost(ctx, wf.ID, "host-a"); err != nil {
		t.Fatal(err)
	}
	cp := json.RawMessage(`{"round":1}`)
	exp := time.Now().Add(time.Hour)
	as, err := db.PauseRound(ctx, wf.ID, []workflows.Approval{
		{Round: 1, CallID: "c1", Tool: "sendMail", External: "mail", Arguments: json.RawMessage(`{"to":"a@example.com"}`), Reason: "the user asked", Checkpoint: cp, ExpiresAt: exp},
		{Round: 1, CallID: "c2", Tool: "externalUpload", External: "upload", Arguments: json.RawMessage(`{}`), Checkpoint: cp, ExpiresAt: time.Now().Add(-time.Second)},
	})
	if err != nil || len(as) != 2 || as[0].PauseID == "" || as[0].PauseID != as[1].PauseID {
		t.Fatalf("pause: %+v %v", as, err)
	}
	if host, _ := db.RoundHost(ctx, wf.ID); host != "" {
		t.Errorf("a waiting round carries host %q", host)
	}
	if got, _ := db.Workflow(ctx, w.alice, wf.ID); got.Outcome != workflows.OutcomeWaitingForApproval || got.Status != workflows.StatusRunning {
		t.Errorf("waiting workflow: %s/%s", got.Status, got.Outcome)
	}
	if orphans, _ := db.RunningWorkflowsBefore(ctx, time.Now().Add(time.Hour)); len(orphans) != 0 {
		t.Errorf("a waiting round is listed as an orphan: %d", len(orphans))
	}
	list, err := db.Approvals(ctx, w.alice, wf.ID)
	if err != nil || len(list) != 2 || list[0].Tool != "sendMail" || string(list[0].Arguments) != `{"to":"a@example.com"}` || list[0].State != workflows.ApprovalPending ||
		list[0].Reason != "the user asked" || string(list[0].Checkpoint) != string(cp) {
		t.Fatalf("approvals: %+v %v", list, err)
	}
	if _, err := db.Approvals(ctx, w.carol, wf.ID); !errors.Is(err, tenancy.ErrNotFound) {
		t.Errorf("an outsider lists approvals: %v", err)
	}
	expired, err := db.ExpiredApprovals(ctx, time.Now())
	if err != nil || len(expired) != 1 || expired[0].CallID != "c2" {
		t.Fatalf("expired: %+v %v", expired, err)
	}
	hosts := []*store.DB{db, db}
	if w.env.Peer != nil {
		hosts[1] = w.env.Peer
	}
	if ps, _ := db.UnresumedPauses(ctx); len(ps) != 0 {
		t.Fatalf("a pending pause is listed as unresumed: %v", ps)
	}
	// Not all decided: nobody may resume.
	if ok, err := db.ClaimResume(ctx, as[0].PauseID, "host-b"); ok || err != nil {
		t.Fatalf("claimed with pending approvals: %v %v", ok, err)
	}
	race := func(f func(h *store.DB) (bool, error)) int {
		var mu sync.Mutex
		var wg sync.WaitGroup
		won := 0
		for _, h := range hosts {
			wg.Add(1)
			go func() {
				defer wg.Done()
				ok, err := f(h)
				if err != nil {
					t.Error(err)
				}
				if ok {
					mu.Lock()
					won++
					mu.Unlock()
				}
			}()
		}
		wg.Wait()
		return won
	}
	if n := race(func(h *store.DB) (bool, error) {
		return h.DecideApproval(ctx, as[0].ID, workflows.ApprovalApproved, []byte(`{"to":"b@example.com"}`), "", w.alice.UserID)
	}); n != 1 {
		t.Fatalf("%d decisions recorded of two", n)
	}
	if ok, _ := db.DecideApproval(ctx, as[1].ID, workflows.ApprovalExpired, nil, "", ""); !ok {
		t.Fatal("expiry not recorded")
	}
	if ps, err := db.UnresumedPauses(ctx); err != nil || len(ps) != 1 || ps[0] != as[0].PauseID {
		t.Fatalf("unresumed pauses: %v %v", ps, err)
	}
	if n := race(func(h *store.DB) (bool, error) { return h.ClaimResume(ctx, as[0].PauseID, "host-b") }); n != 1 {
		t.Fatalf("%d hosts resumed the pause", n)
	}
	if ps, err := db.UnresumedPauses(ctx); err != nil || len(ps) != 0 {
		t.Fatalf("unresumed pauses after the claim: %v %v", ps, err)
	}
	a, err := db.Approval(ctx, as[0].ID)
	if err != nil || a.State != workflows.ApprovalApproved || string(a.DecidedArguments) != `{"to":"b@example.com"}` || a.DecidedBy != w.alice.UserID || a.DecidedAt == nil {
		t.Fatalf("decided: %+v %v", a, err)
	}
	if got, _ := db.Workflow(ctx, w.alice, wf.ID); got.Outcome != "" {
		t.Errorf("resumed workflow's outcome %q", got.Outcome)
	}
	if host, _ := db.RoundHost(ctx, wf.ID); host != "host-b" {
		t.Errorf("resumed round's host %q", host)
	}
	if _, err := db.Approval(ctx, "nope"); !errors.Is(err, tenancy.ErrNotFound) {
		t.Errorf("unknown approval: %v", err)
	}
}
