package storetest

import (
	"context"
	"errors"
	"testing"

	"github.com/agenthost/agenthost/host/tenancy"
	"github.com/agenthost/agenthost/host/workflows"
)

// testWorkflowAccess: a workflow is its owner's. Every other user (of the
// same workspace in any role, of another workspace, of another tenant, and
// another tenant's admin) gets ErrNotFound from every method; the tenant's
// admin reads it and is refused changes with ErrForbidden; an owner who
// leaves the workspace loses it until readmitted.
func testWorkflowAccess(t *testing.T, w *world) {
	ctx := context.Background()
	svc := wfService(w)
	file := upload(t, w, w.alice, w.wsA.ID, "access.txt", "for the access matrix")

	// fixture is a fresh workflow of alice's with a message, a document and
	// a log entry, so that every method has something to reach for.
	type fixture struct {
		wf  workflows.Workflow
		msg workflows.Message
	}
	newFixture := func(t *testing.T) fixture {
		wf := startWF(t, svc, w.alice, w.wsA.ID)
		msg, err := svc.AddMessage(ctx, w.alice, workflows.Message{WorkflowID: wf.ID, Status: workflows.MessageFirst, Role: workflows.RoleUser,
			Content: "hi", Documents: []workflows.Document{{FileID: file.ID, Label: "in"}}})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := svc.AddLog(ctx, w.alice, workflows.Log{WorkflowID: wf.ID, Message: "started"}); err != nil {
			t.Fatal(err)
		}
		return fixture{wf, msg}
	}

	// Every method, as a read or a change.
	methods := []struct {
		name  string
		write bool
		call  func(p tenancy.Principal, f fixture) error
	}{
		{"get", false, func(p tenancy.Principal, f fixture) error { _, err := svc.Get(ctx, p, f.wf.ID); return err }},
		{"list", false, func(p tenancy.Principal, f fixture) error {
			ws, err := svc.List(ctx, p, workflows.Filter{Limit: 1000})
			for _, x := range ws {
				if x.ID == f.wf.ID {
					return err
				}
			}
			if err == nil {
				err = tenancy.ErrNotFound // not listed
			}
			return err
		}},
		{"messages", false, func(p tenancy.Principal, f fixture) error {
			_, err := svc.Messages(ctx, p, f.wf.ID, workflows.After{}, 0)
			return err
		}},
		{"messages after id", false, func(p tenancy.Principal, f fixture) error {
			_, err := svc.Messages(ctx, p, f.wf.ID, workflows.After{ID: f.msg.ID}, 0)
			return err
		}},
		{"resolve documents", false, func(p tenancy.Principal, f fixture) error {
			_, err := svc.ResolveDocuments(ctx, p, f.wf.ID, []string{"docList:in"})
			return err
		}},
		{"logs", false, func(p tenancy.Principal, f fixture) error {
			_, err := svc.Logs(ctx, p, f.wf.ID, workflows.After{}, 0)
			return err
		}},
		{"events", false, func(p tenancy.Principal, f fixture) error { _, err := svc.Events(ctx, p, f.wf.ID, 0, 0); return err }},
		{"subscribe", false, func(p tenancy.Principal, f fixture) error {
			sctx, cancel := context.WithCancel(ctx)
			defer cancel()
			_, err := svc.Subscribe(sctx, p, f.wf.ID, 0)
			return err
		}},
		{"stop", true, func(p tenancy.Principal, f fixture) error { _, err := svc.Stop(ctx, p, f.wf.ID, ""); return err }},
		{"complete", true, func(p tenancy.Principal, f fixture) error { _, err := svc.Complete(ctx, p, f.wf.ID, ""); return err }},
		{"fail", true, func(p tenancy.Principal, f fixture) error { _, err := svc.Fail(ctx, p, f.wf.ID, ""); return err }},
		{"resume", true, func(p tenancy.Principal, f fixture) error { _, err := svc.Resume(ctx, p, f.wf.ID); return err }},
		{"update", true, func(p tenancy.Principal, f fixture) error {
			name := "renamed"
			_, err := svc.Update(ctx, p, f.wf.ID, workflows.Update{Name: &name})
			return err
		}},
		{"next task", true, func(p tenancy.Principal, f fixture) error { _, err := svc.NextTask(ctx, p, f.wf.ID); return err }},
		{"next action", true, func(p tenancy.Principal, f fixture) error { _, err := svc.NextAction(ctx, p, f.wf.ID); return err }},
		{"add message", true, func(p tenancy.Principal, f fixture) error {
			_, err := svc.AddMessage(ctx, p, workflows.Message{WorkflowID: f.wf.ID, Status: workflows.MessageStep, Role: workflows.RoleAssistant})
			return err
		}},
		{"delete message", true, func(p tenancy.Principal, f fixture) error { return svc.DeleteMessage(ctx, p, f.wf.ID, f.msg.ID) }},
		{"remove file", true, func(p tenancy.Principal, f fixture) error { return svc.RemoveFile(ctx, p, f.wf.ID, f.msg.ID, file.ID) }},
		{"add log", true, func(p tenancy.Principal, f fixture) error {
			_, err := svc.AddLog(ctx, p, workflows.Log{WorkflowID: f.wf.ID, Message: "x"})
			return err
		}},
		{"append event", true, func(p tenancy.Principal, f fixture) error {
			_, err := svc.Append(ctx, p, f.wf.ID, workflows.EventChunk, workflows.ChunkData{Text: "x"})
			return err
		}},
		{"delete", true, func(p tenancy.Principal, f fixture) error { return svc.Delete(ctx, p, f.wf.ID) }},
	}

	// snapshot is what a refused change must leave as it was.
	type snapshot struct {
		wf             workflows.Workflow
		messages, docs int
		events         int
	}
	snap := func(t *testing.T, id string) snapshot {
		t.Helper()
		wf, err := svc.Get(ctx, w.alice, id)
		if err != nil {
			t.Fatalf("the owner cannot read the workflow: %v", err)
		}
		msgs, _ := svc.Messages(ctx, w.alice, id, workflows.After{}, 0)
		evs, _ := svc.Events(ctx, w.alice, id, 0, 0)
		s := snapshot{wf: wf, messages: len(msgs), events: len(evs)}
		for _, m := range msgs {
			s.docs += len(m.Documents)
		}
		return s
	}

	users := []struct {
		who         string
		p           tenancy.Principal
		read, write error
	}{
		{"the owner", w.alice, nil, nil},
		{"another member of the workspace", w.bob, tenancy.ErrNotFound, tenancy.ErrNotFound},
		{"a viewer of the workspace", w.victor, tenancy.ErrNotFound, tenancy.ErrNotFound},
		{"a personal member of the workspace", w.pat, tenancy.ErrNotFound, tenancy.ErrNotFound},
		{"a manager of another workspace", w.carol, tenancy.ErrNotFound, tenancy.ErrNotFound},
		{"a user of another tenant", w.dave, tenancy.ErrNotFound, tenancy.ErrNotFound},
		{"another tenant's admin", w.daveAdmin, tenancy.ErrNotFound, tenancy.ErrNotFound},
		{"the tenant's admin", w.admin, nil, tenancy.ErrForbidden},
	}
	for _, u := range users {
		t.Run(u.who, func(t *testing.T) {
			for _, m := range methods {
				f := newFixture(t)
				if m.name == "resume" {
					if _, err := svc.Stop(ctx, w.alice, f.wf.ID, ""); err != nil {
						t.Fatal(err)
					}
				}
				before := snap(t, f.wf.ID)
				want := u.read
				if m.write {
					want = u.write
				}
				err := m.call(u.p, f)
				if !errIs(err, want) {
					t.Errorf("%s: %v, want %v", m.name, err, want)
				}
				if m.write && want != nil {
					if after := snap(t, f.wf.ID); after != before {
						t.Errorf("a refused %s changed the workflow:\n%+v\nwas %+v", m.name, after, before)
					}
				}
			}
		})
	}

	t.Run("the owner leaves the workspace", func(t *testing.T) {
		f := newFixture(t)
		if err := w.env.DB.SetMembership(ctx, tenancy.Membership{WorkspaceID: w.wsA.ID, UserID: w.alice.UserID}); err != nil {
			t.Fatal(err)
		}
		for _, m := range methods {
			if err := m.call(w.alice, f); !errors.Is(err, tenancy.ErrNotFound) {
				t.Errorf("%s by a former member: %v", m.name, err)
			}
		}
		if err := w.env.DB.SetMembership(ctx, tenancy.Membership{WorkspaceID: w.wsA.ID, UserID: w.alice.UserID, Role: tenancy.RoleViewer}); err != nil {
			t.Fatal(err)
		}
		if _, err := svc.Stop(ctx, w.alice, f.wf.ID, ""); err != nil {
			t.Errorf("readmitted owner (now a viewer) stopping her workflow: %v", err)
		}
		if err := w.env.DB.SetMembership(ctx, tenancy.Membership{WorkspaceID: w.wsA.ID, UserID: w.alice.UserID, Role: tenancy.RoleMember}); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("the admin's own workflow", func(t *testing.T) {
		wf := startWF(t, svc, w.admin, w.wsB.ID)
		if _, err := svc.Stop(ctx, w.admin, wf.ID, ""); err != nil {
			t.Errorf("admin stopping own workflow in a workspace without membership: %v", err)
		}
		if _, err := svc.Get(ctx, w.carol, wf.ID); !errors.Is(err, tenancy.ErrNotFound) {
			t.Errorf("a member reading the admin's workflow: %v", err)
		}
	})
}
