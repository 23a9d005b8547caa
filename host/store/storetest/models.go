package storetest

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/agenthost/agenthost/host/tenancy"
)

// testModelChoice: a workspace's allowed models are set by its manager or
// the tenant's admin, read by members, invisible to outsiders; duplicates
// are dropped and malformed ids refused; none means every configured model.
// A workflow's chosen model is kept, changed only by its owner and read by
// whoever reads the workflow.
func testModelChoice(t *testing.T, open Opener) {
	ctx := context.Background()
	w := newWorld(t, open)
	db := w.env.DB

	if got, err := db.WorkspaceModels(ctx, w.alice, w.wsA.ID); err != nil || got != nil {
		t.Fatalf("a new workspace: %v %v, want none (every model)", got, err)
	}
	for _, c := range []struct {
		name string
		p    tenancy.Principal
		ids  []string
		want error
	}{
		{"a member", w.alice, []string{"openai/gpt-4o"}, tenancy.ErrForbidden},
		{"a viewer", w.victor, []string{"openai/gpt-4o"}, tenancy.ErrForbidden},
		{"another workspace's manager", w.carol, []string{"openai/gpt-4o"}, tenancy.ErrNotFound},
		{"another tenant's admin", w.daveAdmin, []string{"openai/gpt-4o"}, tenancy.ErrNotFound},
		{"a bare model name", w.admin, []string{"gpt-4o"}, tenancy.ErrInvalid},
		{"a comma", w.admin, []string{"openai/a,b"}, tenancy.ErrInvalid},
		{"no provider", w.admin, []string{"/gpt-4o"}, tenancy.ErrInvalid},
		{"the admin", w.admin, []string{"openai/gpt-4o", "local/llama3", "openai/gpt-4o"}, nil},
	} {
		if err := db.SetWorkspaceModels(ctx, c.p, w.wsA.ID, c.ids); !errors.Is(err, c.want) {
			t.Errorf("set by %s: %v, want %v", c.name, err, c.want)
		}
	}
	if got, err := db.WorkspaceModels(ctx, w.alice, w.wsA.ID); err != nil || !slices.Equal(got, []string{"openai/gpt-4o", "local/llama3"}) {
		t.Errorf("read by a member: %v %v", got, err)
	}
	if _, err := db.WorkspaceModels(ctx, w.dave, w.wsA.ID); !errors.Is(err, tenancy.ErrNotFound) {
		t.Errorf("read by another tenant: %v", err)
	}
	if got, _ := db.WorkspaceModels(ctx, w.carol, w.wsB.ID); got != nil {
		t.Errorf("workspace B took A's models: %v", got)
	}
	if err := db.SetWorkspaceModels(ctx, w.admin, w.wsA.ID, nil); err != nil {
		t.Fatal(err)
	}
	if got, err := db.WorkspaceModels(ctx, w.alice, w.wsA.ID); err != nil || got != nil {
		t.Errorf("after clearing: %v %v", got, err)
	}

	svc := wfService(w)
	wf := startWF(t, svc, w.alice, w.wsA.ID)
	if m, err := db.WorkflowModel(ctx, w.alice, wf.ID); err != nil || m != "" {
		t.Fatalf("a new workflow: %q %v", m, err)
	}
	for _, c := range []struct {
		name  string
		p     tenancy.Principal
		model string
		want  error
	}{
		{"another tenant", w.dave, "openai/gpt-4o", tenancy.ErrNotFound},
		{"a bare name", w.alice, "gpt-4o", tenancy.ErrInvalid},
		{"the owner", w.alice, "local/llama3", nil},
	} {
		if err := db.SetWorkflowModel(ctx, c.p, wf.ID, c.model); !errors.Is(err, c.want) {
			t.Errorf("set by %s: %v, want %v", c.name, err, c.want)
		}
	}
	if m, err := db.WorkflowModel(ctx, w.alice, wf.ID); err != nil || m != "local/llama3" {
		t.Errorf("kept: %q %v", m, err)
	}
	if _, err := db.WorkflowModel(ctx, w.dave, wf.ID); !errors.Is(err, tenancy.ErrNotFound) {
		t.Errorf("read by another tenant: %v", err)
	}
	if err := db.SetWorkflowModel(ctx, w.alice, wf.ID, ""); err != nil {
		t.Fatal(err)
	}
	if m, _ := db.WorkflowModel(ctx, w.alice, wf.ID); m != "" {
		t.Errorf("back to the default: %q", m)
	}
}
