package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/agenthost/agenthost/host/tenancy"
	"github.com/agenthost/agenthost/host/workflows"
)

// testWorkflowBranches: a conversation's parents survive the store, the
// selected branch is kept with the workflow and announced, and feedback on
// an answer is kept with it (the owner's, answers only, withdrawn by an
// empty rating).
func testWorkflowBranches(t *testing.T, w *world) {
	ctx := context.Background()
	svc := wfService(w)
	wf := startWF(t, svc, w.alice, w.wsA.ID)
	add := func(parent string, user bool, text string) workflows.Message {
		t.Helper()
		m := workflows.Message{WorkflowID: wf.ID, ParentID: parent, Role: workflows.RoleAssistant, Status: workflows.MessageLast, Content: text}
		if user {
			m.Role, m.Status = workflows.RoleUser, workflows.MessageFirst
		}
		out, err := svc.AddMessage(ctx, w.alice, m)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	u1 := add("", true, "first")
	a1 := add(u1.ID, false, "answer")
	u2 := add(a1.ID, true, "second")
	u2b := add(a1.ID, true, "second, edited")

	_, tree, err := svc.Thread(ctx, w.alice, wf.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got := msgIDs(tree.Path("")); len(got) != 3 || got[2] != u2b.ID {
		t.Fatalf("newest branch: %v", got)
	}
	if _, err := svc.SelectBranch(ctx, w.alice, wf.ID, u2.ID); err != nil {
		t.Fatal(err)
	}
	got, tree, err := svc.Thread(ctx, w.alice, wf.ID)
	if err != nil || got.Branch != u2.ID {
		t.Fatalf("selected branch kept: %q %v", got.Branch, err)
	}
	if p := msgIDs(tree.Path(got.Branch)); len(p) != 3 || p[2] != u2.ID {
		t.Fatalf("selected branch: %v", p)
	}
	evs := allEvents(t, svc, w.alice, wf.ID)
	last := evs[len(evs)-1]
	var sel workflows.BranchSelectedData
	if last.Type != workflows.EventBranchSelected || json.Unmarshal(last.Data, &sel) != nil || sel.MessageID != u2.ID {
		t.Fatalf("branchSelected event: %s %s", last.Type, last.Data)
	}
	for _, c := range []struct {
		name string
		p    tenancy.Principal
		id   string
		want error
	}{
		{"a step is no turn", w.alice, "nope", tenancy.ErrNotFound},
		{"another member", w.bob, u1.ID, tenancy.ErrNotFound},
		{"another tenant", w.carol, u1.ID, tenancy.ErrNotFound},
	} {
		if _, err := svc.SelectBranch(ctx, c.p, wf.ID, c.id); !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", c.name, err, c.want)
		}
	}

	t.Run("feedback", func(t *testing.T) {
		m, err := svc.SetFeedback(ctx, w.alice, wf.ID, a1.ID, workflows.Feedback{Rating: workflows.RatingUnhelpful, Note: " cites the wrong page "})
		if err != nil || m.Feedback == nil || m.Feedback.Note != "cites the wrong page" || m.Feedback.At.IsZero() {
			t.Fatalf("set: %+v %v", m.Feedback, err)
		}
		all, err := svc.Messages(ctx, w.alice, wf.ID, workflows.After{}, 0)
		if err != nil || all[1].Feedback == nil || all[1].Feedback.Rating != workflows.RatingUnhelpful || !all[1].Feedback.At.Equal(m.Feedback.At) ||
			all[0].Feedback != nil {
			t.Fatalf("listed: %+v %v", all[1].Feedback, err)
		}
		evs := allEvents(t, svc, w.alice, wf.ID)
		var fb workflows.MessageFeedbackData
		if ev := evs[len(evs)-1]; ev.Type != workflows.EventMessageFeedback || json.Unmarshal(ev.Data, &fb) != nil || fb.MessageID != a1.ID ||
			fb.Rating != workflows.RatingUnhelpful {
			t.Fatalf("messageFeedback event: %s %s", ev.Type, ev.Data)
		}
		for _, c := range []struct {
			name string
			p    tenancy.Principal
			id   string
			f    workflows.Feedback
			want error
		}{
			{"a prompt takes none", w.alice, u1.ID, workflows.Feedback{Rating: workflows.RatingHelpful}, tenancy.ErrNotFound},
			{"unknown rating", w.alice, a1.ID, workflows.Feedback{Rating: "meh"}, tenancy.ErrInvalid},
			{"a note without a rating", w.alice, a1.ID, workflows.Feedback{Note: "x"}, tenancy.ErrInvalid},
			{"another member", w.bob, a1.ID, workflows.Feedback{Rating: workflows.RatingHelpful}, tenancy.ErrNotFound},
			{"another tenant's admin", w.daveAdmin, a1.ID, workflows.Feedback{Rating: workflows.RatingHelpful}, tenancy.ErrNotFound},
		} {
			if _, err := svc.SetFeedback(ctx, c.p, wf.ID, c.id, c.f); !errors.Is(err, c.want) {
				t.Errorf("%s: %v, want %v", c.name, err, c.want)
			}
		}
		if m, err := svc.SetFeedback(ctx, w.alice, wf.ID, a1.ID, workflows.Feedback{}); err != nil || m.Feedback != nil {
			t.Fatalf("withdrawn: %+v %v", m.Feedback, err)
		}
	})
}
