package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agenthost/agenthost/host/money"
	"github.com/agenthost/agenthost/host/tenancy"
	"github.com/agenthost/agenthost/host/workflows"
)

// wfService is the workflow service over the world's store, with a broker
// whose fallback re-read is quick enough for tests.
func wfService(w *world) *workflows.Service {
	b := workflows.NewBroker(w.env.DB, workflows.BrokerConfig{Interval: 50 * time.Millisecond})
	return workflows.NewService(w.env.DB, b, nil)
}

func startWF(t *testing.T, svc *workflows.Service, p tenancy.Principal, ws string) workflows.Workflow {
	t.Helper()
	wf, err := svc.Start(context.Background(), p, workflows.NewWorkflow{WorkspaceID: ws, Name: "test"})
	if err != nil {
		t.Fatalf("start: %v", err)
	}
	return wf
}

// wfOp is one state-changing operation of the service, by name.
type wfOp func(ctx context.Context, svc *workflows.Service, p tenancy.Principal, id string) (workflows.Workflow, error)

var wfOps = map[string]wfOp{
	"resume": func(ctx context.Context, s *workflows.Service, p tenancy.Principal, id string) (workflows.Workflow, error) {
		return s.Resume(ctx, p, id)
	},
	"complete": func(ctx context.Context, s *workflows.Service, p tenancy.Principal, id string) (workflows.Workflow, error) {
		return s.Complete(ctx, p, id, "done")
	},
	"stop": func(ctx context.Context, s *workflows.Service, p tenancy.Principal, id string) (workflows.Workflow, error) {
		return s.Stop(ctx, p, id, "user")
	},
	"fail": func(ctx context.Context, s *workflows.Service, p tenancy.Principal, id string) (workflows.Workflow, error) {
		return s.Fail(ctx, p, id, "boom")
	},
	"delete": func(ctx context.Context, s *workflows.Service, p tenancy.Principal, id string) (workflows.Workflow, error) {
		return workflows.Workflow{}, s.Delete(ctx, p, id)
	},
}

// reach drives a new workflow into state s.
func reach(t *testing.T, svc *workflows.Service, p tenancy.Principal, ws string, s workflows.Status) workflows.Workflow {
	t.Helper()
	wf := startWF(t, svc, p, ws)
	op := map[workflows.Status]string{workflows.StatusCompleted: "complete", workflows.StatusStopped: "stop", workflows.StatusFailed: "fail"}[s]
	if op == "" {
		return wf
	}
	wf, err := wfOps[op](context.Background(), svc, p, wf.ID)
	if err != nil || wf.Status != s {
		t.Fatalf("reach %s: %+v %v", s, wf, err)
	}
	return wf
}

func allEvents(t *testing.T, svc *workflows.Service, p tenancy.Principal, id string) []workflows.Event {
	t.Helper()
	var out []workflows.Event
	var after int64
	for {
		evs, err := svc.Events(context.Background(), p, id, after, 0)
		if err != nil {
			t.Fatalf("events: %v", err)
		}
		if len(evs) == 0 {
			return out
		}
		out = append(out, evs...)
		after = evs[len(evs)-1].Seq
	}
}

func testWorkflows(t *testing.T, open Opener) {
	ctx := context.Background()
	w := newWorld(t, open)
	svc := wfService(w)
	var (
		running   = workflows.StatusRunning
		completed = workflows.StatusCompleted
		stopped   = workflows.StatusStopped
		failed    = workflows.StatusFailed
	)

	t.Run("start", func(t *testing.T) {
		wf := startWF(t, svc, w.alice, w.wsA.ID)
		if wf.Status != running || wf.CurrentRound != 1 || wf.Exec != (workflows.Exec{Round: 1}) || wf.UserID != w.alice.UserID ||
			wf.TenantID != w.t1.ID || wf.WorkspaceID != w.wsA.ID || wf.StartedAt.IsZero() || !wf.LastActivity.Equal(wf.StartedAt) {
			t.Fatalf("started: %+v", wf)
		}
		got, err := svc.Get(ctx, w.alice, wf.ID)
		if err != nil || got != wf {
			t.Fatalf("get: %+v %v\nwant %+v", got, err, wf)
		}
		evs := allEvents(t, svc, w.alice, wf.ID)
		if len(evs) != 1 || evs[0].Seq != 1 || evs[0].Type != workflows.EventStatus {
			t.Fatalf("start events: %+v", evs)
		}
		var sd workflows.StatusData
		if err := json.Unmarshal(evs[0].Data, &sd); err != nil || sd.Status != running || sd.Label != "round 1" {
			t.Fatalf("status payload %s: %v", evs[0].Data, err)
		}
		for _, c := range []struct {
			who string
			p   tenancy.Principal
			ws  string
		}{{"a viewer", w.victor, w.wsA.ID}, {"a personal member", w.pat, w.wsA.ID}, {"a tenant admin in any workspace", w.admin, w.wsB.ID}} {
			if _, err := svc.Start(ctx, c.p, workflows.NewWorkflow{WorkspaceID: c.ws}); err != nil {
				t.Errorf("%s starting: %v", c.who, err)
			}
		}
		for _, c := range []struct {
			who string
			p   tenancy.Principal
			ws  string
		}{{"another workspace's member", w.carol, w.wsA.ID}, {"another tenant's admin", w.daveAdmin, w.wsA.ID}, {"unknown workspace", w.alice, "nope"}} {
			if _, err := svc.Start(ctx, c.p, workflows.NewWorkflow{WorkspaceID: c.ws}); !errors.Is(err, tenancy.ErrNotFound) {
				t.Errorf("%s starting: %v, want not found", c.who, err)
			}
		}
		if _, err := svc.Start(ctx, w.alice, workflows.NewWorkflow{}); !errors.Is(err, tenancy.ErrInvalid) {
			t.Errorf("no workspace: %v", err)
		}
	})

	t.Run("state machine", func(t *testing.T) {
		// Every operation from every state: the state machine's transitions
		// (docs/agent.md#design-decisions) succeed,
		// everything else is a conflict naming both states and changes
		// nothing (not even the event stream).
		rows := []struct {
			from  workflows.Status
			op    string
			to    workflows.Status // "" with ok: deleted
			ok    bool
			event workflows.EventType
		}{
			{running, "resume", "", false, ""},
			{running, "complete", completed, true, workflows.EventComplete},
			{running, "stop", stopped, true, workflows.EventStopped},
			{running, "fail", failed, true, workflows.EventError},
			{running, "delete", "", true, ""},
			{completed, "resume", running, true, workflows.EventStatus},
			{completed, "complete", "", false, ""},
			{completed, "stop", "", false, ""},
			{completed, "fail", "", false, ""},
			{completed, "delete", "", true, ""},
			{stopped, "resume", running, true, workflows.EventStatus},
			{stopped, "complete", "", false, ""},
			{stopped, "stop", "", false, ""},
			{stopped, "fail", "", false, ""},
			{stopped, "delete", "", true, ""},
			{failed, "resume", running, true, workflows.EventStatus},
			{failed, "complete", "", false, ""},
			{failed, "stop", "", false, ""},
			{failed, "fail", "", false, ""},
			{failed, "delete", "", true, ""},
		}
		target := map[string]workflows.Status{"resume": running, "complete": completed, "stop": stopped, "fail": failed}
		for _, r := range rows {
			t.Run(string(r.from)+" "+r.op, func(t *testing.T) {
				before := reach(t, svc, w.alice, w.wsA.ID, r.from)
				evsBefore := allEvents(t, svc, w.alice, before.ID)
				time.Sleep(time.Millisecond) // so a change moves LastActivity visibly
				got, err := wfOps[r.op](ctx, svc, w.alice, before.ID)
				if !r.ok {
					var te *workflows.TransitionError
					if !errors.As(err, &te) || !errors.Is(err, tenancy.ErrConflict) || te.From != r.from || te.To != target[r.op] {
						t.Fatalf("err %v, want a transition conflict %s → %s", err, r.from, target[r.op])
					}
					if msg := err.Error(); !strings.Contains(msg, string(r.from)) || !strings.Contains(msg, string(target[r.op])) {
						t.Errorf("message %q does not name both states", msg)
					}
					after, err := svc.Get(ctx, w.alice, before.ID)
					if err != nil || after != before {
						t.Errorf("refused change changed the workflow: %+v %v", after, err)
					}
					if n := len(allEvents(t, svc, w.alice, before.ID)); n != len(evsBefore) {
						t.Errorf("refused change appended events: %d → %d", len(evsBefore), n)
					}
					return
				}
				if err != nil {
					t.Fatalf("%s from %s: %v", r.op, r.from, err)
				}
				if r.op == "delete" {
					if _, err := svc.Get(ctx, w.alice, before.ID); !errors.Is(err, tenancy.ErrNotFound) {
						t.Fatalf("deleted workflow still there: %v", err)
					}
					if _, err := svc.Events(ctx, w.alice, before.ID, 0, 0); !errors.Is(err, tenancy.ErrNotFound) {
						t.Fatalf("deleted workflow's events: %v", err)
					}
					return
				}
				wantRound := before.CurrentRound
				if r.op == "resume" {
					wantRound++
				}
				if got.Status != r.to || got.CurrentRound != wantRound || got.Exec.Round != wantRound || !got.LastActivity.After(before.LastActivity) {
					t.Fatalf("after %s: %+v (before %+v)", r.op, got, before)
				}
				evs := allEvents(t, svc, w.alice, before.ID)
				if len(evs) != len(evsBefore)+1 || evs[len(evs)-1].Type != r.event {
					t.Fatalf("events after %s: %+v", r.op, evs)
				}
				if r.op == "resume" {
					var sd workflows.StatusData
					if err := json.Unmarshal(evs[len(evs)-1].Data, &sd); err != nil || sd.Label != fmt.Sprintf("round %d", wantRound) {
						t.Errorf("resume event %s", evs[len(evs)-1].Data)
					}
				}
			})
		}
		if _, err := svc.Resume(ctx, w.alice, "nope"); !errors.Is(err, tenancy.ErrNotFound) {
			t.Errorf("resume of an unknown workflow: %v", err)
		}
	})

	t.Run("execution state, statistics, summary", func(t *testing.T) {
		wf := startWF(t, svc, w.alice, w.wsA.ID)
		steps := []struct {
			next func(context.Context, tenancy.Principal, string) (workflows.Exec, error)
			want workflows.Exec
		}{
			{svc.NextTask, workflows.Exec{Round: 1, Task: 1}},
			{svc.NextAction, workflows.Exec{Round: 1, Task: 1, Action: 1}},
			{svc.NextAction, workflows.Exec{Round: 1, Task: 1, Action: 2}},
			{svc.NextTask, workflows.Exec{Round: 1, Task: 2}},
			{svc.NextAction, workflows.Exec{Round: 1, Task: 2, Action: 1}},
		}
		for i, s := range steps {
			if got, err := s.next(ctx, w.alice, wf.ID); err != nil || got != s.want {
				t.Fatalf("step %d: %+v %v, want %+v", i, got, err, s.want)
			}
		}
		if _, err := svc.Complete(ctx, w.alice, wf.ID, ""); err != nil {
			t.Fatal(err)
		}
		got, err := svc.Resume(ctx, w.alice, wf.ID)
		if err != nil || got.Exec != (workflows.Exec{Round: 2}) {
			t.Fatalf("a new round starts at task 0, action 0: %+v %v", got.Exec, err)
		}
		// Statistics add up, also when added concurrently.
		var wg sync.WaitGroup
		for range 10 {
			wg.Go(func() {
				if _, err := svc.Update(ctx, w.alice, wf.ID, workflows.Update{Stats: workflows.Stats{BytesSent: 10, BytesReceived: 20, TokensUsed: 3, ProcessingTime: 0.5, CostCHF: 25 * money.Rappen}}); err != nil {
					t.Error(err)
				}
			})
		}
		wg.Wait()
		name, summary := "Quarterly report", "Round 1: the user asked for Q4 numbers."
		got, err = svc.Update(ctx, w.alice, wf.ID, workflows.Update{Name: &name, Summary: &summary})
		want := workflows.Stats{BytesSent: 100, BytesReceived: 200, TokensUsed: 30, ProcessingTime: 5, CostCHF: 250 * money.Rappen}
		if err != nil || got.Stats != want || got.Name != name || got.Summary != summary {
			t.Fatalf("updated: %+v %v", got, err)
		}
		if again, _ := svc.Get(ctx, w.alice, wf.ID); again != got {
			t.Fatalf("read back: %+v\nwant %+v", again, got)
		}
		empty := " "
		if _, err := svc.Update(ctx, w.alice, wf.ID, workflows.Update{Name: &empty}); !errors.Is(err, tenancy.ErrInvalid) {
			t.Errorf("empty name: %v", err)
		}
		if _, err := svc.Update(ctx, w.alice, wf.ID, workflows.Update{Stats: workflows.Stats{TokensUsed: -1}}); !errors.Is(err, tenancy.ErrInvalid) {
			t.Errorf("shrinking statistics: %v", err)
		}
	})

	t.Run("listing", func(t *testing.T) {
		w := newWorld(t, open) // a cast with no workflows yet
		svc := wfService(w)
		a1 := startWF(t, svc, w.alice, w.wsA.ID)
		a2 := reach(t, svc, w.alice, w.wsA.ID, stopped)
		b1 := startWF(t, svc, w.bob, w.wsA.ID)
		c1 := startWF(t, svc, w.carol, w.wsB.ID)
		ids := func(ws []workflows.Workflow) []string {
			var out []string
			for _, x := range ws {
				out = append(out, x.ID)
			}
			return out
		}
		for _, c := range []struct {
			who  string
			p    tenancy.Principal
			f    workflows.Filter
			want []string
		}{
			{"alice", w.alice, workflows.Filter{}, []string{a2.ID, a1.ID}},
			{"alice, stopped", w.alice, workflows.Filter{Status: stopped}, []string{a2.ID}},
			{"alice, workspace B", w.alice, workflows.Filter{WorkspaceID: w.wsB.ID}, nil},
			{"bob", w.bob, workflows.Filter{}, []string{b1.ID}},
			{"victor", w.victor, workflows.Filter{}, nil},
			{"tenant admin", w.admin, workflows.Filter{}, []string{c1.ID, b1.ID, a2.ID, a1.ID}},
			{"tenant admin, limit 2", w.admin, workflows.Filter{Limit: 2}, []string{c1.ID, b1.ID}},
			{"other tenant's admin", w.daveAdmin, workflows.Filter{}, nil},
		} {
			got, err := svc.List(ctx, c.p, c.f)
			if err != nil || !slices.Equal(ids(got), c.want) {
				t.Errorf("%s: %v %v, want %v", c.who, ids(got), err, c.want)
			}
		}
		if _, err := svc.List(ctx, w.alice, workflows.Filter{Status: "paused"}); !errors.Is(err, tenancy.ErrInvalid) {
			t.Errorf("unknown status filter: %v", err)
		}
	})

	t.Run("messages with documents", func(t *testing.T) { testWorkflowMessages(t, w) })
	t.Run("branches and feedback", func(t *testing.T) { testWorkflowBranches(t, w) })
	t.Run("sharing", func(t *testing.T) { testWorkflowSharing(t, w) })
	t.Run("logs", func(t *testing.T) { testWorkflowLogs(t, w) })
	t.Run("access", func(t *testing.T) { testWorkflowAccess(t, w) })

	t.Run("concurrent transitions", func(t *testing.T) {
		// Of any number of concurrent changes from one state only one wins.
		wf := startWF(t, svc, w.alice, w.wsA.ID)
		var wg sync.WaitGroup
		var mu sync.Mutex
		var wins []workflows.Status
		for i := range 30 {
			op := []string{"stop", "complete", "fail"}[i%3]
			wg.Go(func() {
				got, err := wfOps[op](ctx, svc, w.alice, wf.ID)
				var te *workflows.TransitionError
				switch {
				case err == nil:
					mu.Lock()
					wins = append(wins, got.Status)
					mu.Unlock()
				case !errors.As(err, &te) || te.From == running:
					t.Errorf("%s: %v", op, err)
				}
			})
		}
		wg.Wait()
		final, _ := svc.Get(ctx, w.alice, wf.ID)
		if len(wins) != 1 || final.Status != wins[0] {
			t.Fatalf("winners %v, final %s", wins, final.Status)
		}

		var resumed int
		for range 20 {
			wg.Go(func() {
				_, err := svc.Resume(ctx, w.alice, wf.ID)
				mu.Lock()
				defer mu.Unlock()
				var te *workflows.TransitionError
				switch {
				case err == nil:
					resumed++
				case !errors.As(err, &te) || te.From != running || te.To != running:
					t.Errorf("resume: %v", err)
				}
			})
		}
		wg.Wait()
		final, _ = svc.Get(ctx, w.alice, wf.ID)
		if resumed != 1 || final.Status != running || final.CurrentRound != 2 {
			t.Fatalf("%d resumes won, final %s round %d", resumed, final.Status, final.CurrentRound)
		}
		if n := len(allEvents(t, svc, w.alice, wf.ID)); n != 3 {
			t.Errorf("%d events, want start, end and one resume", n)
		}

		// Stop against resume of a completed workflow: the outcome is one of
		// the two serial orders, never a mix (both winning and ending in
		// running, or the round moving twice).
		for range 10 {
			wf := reach(t, svc, w.alice, w.wsA.ID, completed)
			var stopErr, resumeErr error
			wg.Go(func() { _, stopErr = svc.Stop(ctx, w.alice, wf.ID, "") })
			wg.Go(func() { _, resumeErr = svc.Resume(ctx, w.alice, wf.ID) })
			wg.Wait()
			final, _ := svc.Get(ctx, w.alice, wf.ID)
			resumeFirst := resumeErr == nil && stopErr == nil && final.Status == stopped
			stopFirst := resumeErr == nil && errors.Is(stopErr, tenancy.ErrConflict) && final.Status == running
			if (!resumeFirst && !stopFirst) || final.CurrentRound != 2 {
				t.Fatalf("stop %v, resume %v, final %s round %d", stopErr, resumeErr, final.Status, final.CurrentRound)
			}
		}
	})
}
