package storetest

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/agenthost/agenthost/host/tenancy"
	"github.com/agenthost/agenthost/host/workflows"
)

// testConversationList: the owner renames, pins and archives
// conversations; pinned ones come first, archived ones are listed only
// when asked for, and a query finds a conversation by its name or by the
// text of its messages (case folded, LIKE's wildcards taken literally),
// never another user's.
func testConversationList(t *testing.T, open Opener) {
	ctx := context.Background()
	w := newWorld(t, open)
	svc := wfService(w)
	start := func(p tenancy.Principal, name string) workflows.Workflow {
		t.Helper()
		wf, err := svc.Start(ctx, p, workflows.NewWorkflow{WorkspaceID: w.wsA.ID, Name: name})
		if err != nil {
			t.Fatal(err)
		}
		return wf
	}
	say := func(p tenancy.Principal, wf workflows.Workflow, role workflows.Role, text string) {
		t.Helper()
		if _, err := svc.AddMessage(ctx, p, workflows.Message{WorkflowID: wf.ID, Status: workflows.MessageFirst, Role: role, Content: text}); err != nil {
			t.Fatal(err)
		}
	}
	budget := start(w.alice, "Budget 2027")
	say(w.alice, budget, workflows.RoleUser, "What does the budget say about travel?")
	travel := start(w.alice, "Trip")
	say(w.alice, travel, workflows.RoleAssistant, "The Zürich OFFSITE costs 100% of the plan")
	old := start(w.alice, "Old notes")
	bobs := start(w.bob, "Budget of bob")
	say(w.bob, bobs, workflows.RoleUser, "budget")

	names := func(f workflows.Filter) []string {
		t.Helper()
		f.WorkspaceID = w.wsA.ID
		ws, err := svc.List(ctx, w.alice, f)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, x := range ws {
			out = append(out, x.Name)
		}
		return out
	}
	yes, no := true, false
	renamed := "Budget 2027, travel"
	if wf, err := svc.Update(ctx, w.alice, budget.ID, workflows.Update{Name: &renamed}); err != nil || wf.Name != renamed {
		t.Fatalf("rename: %+v %v", wf, err)
	}
	// A conditional name (a title made after the first exchange) is set
	// only while the name is still the one it replaces.
	titled, stale := "Travel budget", "Budget 2027"
	if wf, err := svc.Update(ctx, w.alice, budget.ID, workflows.Update{Name: &titled, NameWas: &stale}); err != nil || wf.Name != renamed {
		t.Fatalf("a title replaced the person's name: %+v %v", wf, err)
	}
	if wf, err := svc.Update(ctx, w.alice, budget.ID, workflows.Update{Name: &titled, NameWas: &renamed}); err != nil || wf.Name != titled {
		t.Fatalf("conditional rename: %+v %v", wf, err)
	}
	if wf, err := svc.Update(ctx, w.alice, budget.ID, workflows.Update{Name: &renamed}); err != nil || wf.Name != renamed {
		t.Fatalf("rename back: %+v %v", wf, err)
	}
	if wf, err := svc.Update(ctx, w.alice, old.ID, workflows.Update{Pinned: &yes}); err != nil || !wf.Pinned {
		t.Fatalf("pin: %+v %v", wf, err)
	}
	if got := names(workflows.Filter{}); len(got) != 3 || got[0] != "Old notes" {
		t.Fatalf("pinned first: %v", got)
	}
	if wf, err := svc.Update(ctx, w.alice, travel.ID, workflows.Update{Archived: &yes}); err != nil || !wf.Archived {
		t.Fatalf("archive: %+v %v", wf, err)
	}
	if got := names(workflows.Filter{}); slices.Contains(got, "Trip") || len(got) != 2 {
		t.Fatalf("archived one listed: %v", got)
	}
	if got := names(workflows.Filter{Archived: true}); !slices.Equal(got, []string{"Trip"}) {
		t.Fatalf("archived list: %v", got)
	}
	cases := []struct {
		q        string
		archived bool
		want     []string
	}{
		{"budget", false, []string{renamed}},       // by name and message; not bob's
		{"TRAVEL", false, []string{renamed}},       // case folded, the message
		{"zürich offsite", true, []string{"Trip"}}, // an assistant's message, archived
		{"100%", true, []string{"Trip"}},           // % is a character here
		{"1_0", true, nil},                         // and _ too
		{"nothing like it", false, nil},
	}
	for _, c := range cases {
		if got := names(workflows.Filter{Query: c.q, Archived: c.archived}); !slices.Equal(got, c.want) {
			t.Errorf("query %q (archived %v): %v, want %v", c.q, c.archived, got, c.want)
		}
	}
	if _, err := svc.Update(ctx, w.alice, travel.ID, workflows.Update{Archived: &no}); err != nil {
		t.Fatal(err)
	}
	if got := names(workflows.Filter{}); len(got) != 3 {
		t.Fatalf("unarchived: %v", got)
	}
	// Only the owner marks a conversation.
	if _, err := svc.Update(ctx, w.bob, old.ID, workflows.Update{Pinned: &no}); !errors.Is(err, tenancy.ErrNotFound) && !errors.Is(err, tenancy.ErrForbidden) {
		t.Fatalf("bob pins alice's: %v", err)
	}
}
