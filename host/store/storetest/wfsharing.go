package storetest

import (
	"context"
	"errors"
	"testing"

	"github.com/agenthost/agenthost/host/tenancy"
	"github.com/agenthost/agenthost/host/workflows"
)

// testWorkflowSharing: a conversation its owner shares is read, never
// changed, by the members of its workspace, and by nobody else; the
// members find it with Filter.Shared, their own lists stay their own, and
// unsharing hides it again at once.
func testWorkflowSharing(t *testing.T, w *world) {
	ctx := context.Background()
	svc := wfService(w)
	wf := startWF(t, svc, w.alice, w.wsA.ID)
	if _, err := svc.AddMessage(ctx, w.alice, workflows.Message{WorkflowID: wf.ID, Status: workflows.MessageFirst, Role: workflows.RoleUser, Content: "q"}); err != nil {
		t.Fatal(err)
	}
	readable := func(p tenancy.Principal) error {
		if _, err := svc.Get(ctx, p, wf.ID); err != nil {
			return err
		}
		if _, err := svc.Messages(ctx, p, wf.ID, workflows.After{}, 0); err != nil {
			return err
		}
		_, err := svc.Events(ctx, p, wf.ID, 0, 0)
		return err
	}
	if err := readable(w.bob); !errors.Is(err, tenancy.ErrNotFound) {
		t.Fatalf("bob before sharing: %v", err)
	}
	yes, no := true, false
	if _, err := svc.Update(ctx, w.bob, wf.ID, workflows.Update{Shared: &yes}); !errors.Is(err, tenancy.ErrNotFound) {
		t.Fatalf("bob shares alice's conversation: %v", err)
	}
	got, err := svc.Update(ctx, w.alice, wf.ID, workflows.Update{Shared: &yes})
	if err != nil || !got.Shared {
		t.Fatalf("share: %+v %v", got.Shared, err)
	}
	for _, c := range []struct {
		name string
		p    tenancy.Principal
		want error
	}{
		{"bob, a member of its workspace", w.bob, nil},
		{"carol, of another workspace", w.carol, tenancy.ErrNotFound},
		{"another tenant's admin", w.daveAdmin, tenancy.ErrNotFound},
	} {
		if err := readable(c.p); !errors.Is(err, c.want) && !(c.want == nil && err == nil) {
			t.Errorf("%s reads: %v, want %v", c.name, err, c.want)
		}
	}
	// Read only: every change stays the owner's.
	name := "bob's"
	for what, err := range map[string]error{
		"rename":  func() error { _, err := svc.Update(ctx, w.bob, wf.ID, workflows.Update{Name: &name}); return err }(),
		"unshare": func() error { _, err := svc.Update(ctx, w.bob, wf.ID, workflows.Update{Shared: &no}); return err }(),
		"message": func() error {
			_, err := svc.AddMessage(ctx, w.bob, workflows.Message{WorkflowID: wf.ID, Status: workflows.MessageFirst, Role: workflows.RoleUser})
			return err
		}(),
		"stop":   func() error { _, err := svc.Stop(ctx, w.bob, wf.ID, ""); return err }(),
		"delete": svc.Delete(ctx, w.bob, wf.ID),
	} {
		if !errors.Is(err, tenancy.ErrForbidden) {
			t.Errorf("bob's %s of a shared conversation: %v, want forbidden", what, err)
		}
	}
	list := func(p tenancy.Principal, f workflows.Filter) []string {
		t.Helper()
		ws, err := svc.List(ctx, p, f)
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, x := range ws {
			ids = append(ids, x.ID)
		}
		return ids
	}
	if ids := list(w.bob, workflows.Filter{Shared: true}); len(ids) != 1 || ids[0] != wf.ID {
		t.Errorf("bob's shared list: %v", ids)
	}
	for _, id := range list(w.bob, workflows.Filter{}) {
		if id == wf.ID {
			t.Errorf("alice's shared conversation in bob's own list")
		}
	}
	if ids := list(w.alice, workflows.Filter{Shared: true}); len(ids) != 0 {
		t.Errorf("alice's own conversation in her shared-with-me list: %v", ids)
	}
	if ids := list(w.carol, workflows.Filter{Shared: true}); len(ids) != 0 {
		t.Errorf("carol's shared list: %v", ids)
	}
	if _, err := svc.Update(ctx, w.alice, wf.ID, workflows.Update{Shared: &no}); err != nil {
		t.Fatal(err)
	}
	if err := readable(w.bob); !errors.Is(err, tenancy.ErrNotFound) {
		t.Fatalf("bob after unsharing: %v", err)
	}
}
