package workflows_test

import (
	"errors"
	"testing"

	"github.com/agenthost/agenthost/host/tenancy"
	"github.com/agenthost/agenthost/host/workflows"
)

func TestCanTransition(t *testing.T) {
	const (
		none      = workflows.Status("")
		running   = workflows.StatusRunning
		completed = workflows.StatusCompleted
		stopped   = workflows.StatusStopped
		failed    = workflows.StatusFailed
	)
	// The state machine's transitions (package doc), and nothing else.
	legal := map[[2]workflows.Status]bool{
		{none, running}:      true, // new workflow
		{running, completed}: true,
		{running, stopped}:   true,
		{running, failed}:    true,
		{completed, running}: true, // new round
		{stopped, running}:   true,
		{failed, running}:    true,
		{running, none}:      true, // deleted, from any state
		{completed, none}:    true,
		{stopped, none}:      true,
		{failed, none}:       true,
	}
	all := append([]workflows.Status{none, "paused"}, workflows.Statuses()...)
	for _, from := range all {
		for _, to := range all {
			if got := workflows.CanTransition(from, to); got != legal[[2]workflows.Status{from, to}] {
				t.Errorf("%q → %q: %v", from, to, got)
			}
		}
	}
}

func TestTransitionError(t *testing.T) {
	for _, c := range []struct {
		err  *workflows.TransitionError
		want string
	}{
		{&workflows.TransitionError{WorkflowID: "w1", From: workflows.StatusCompleted, To: workflows.StatusStopped},
			`conflict: workflow "w1" cannot go from completed to stopped`},
		{&workflows.TransitionError{WorkflowID: "w1", From: workflows.StatusRunning, To: workflows.StatusRunning},
			`conflict: workflow "w1" cannot go from running to running (a running workflow cannot be resumed; stop it first)`},
	} {
		if got := c.err.Error(); got != c.want {
			t.Errorf("got %q\nwant %q", got, c.want)
		}
		var err error = c.err
		if !errors.Is(err, tenancy.ErrConflict) {
			t.Errorf("%v is not a conflict", err)
		}
	}
}

func TestEventTypes(t *testing.T) {
	want := []string{"message", "status", "chunk", "toolCall", "toolResult", "agentProgress", "agentSummary", "fileCreated",
		"fileEditProposal", "fileVersion", "dataSourceAccess", "voiceResponse", "backgroundJob", "roundRestarted", "approvalRequested", "approvalDecided", "branchSelected", "messageFeedback", "renamed", "complete", "stopped", "error"}
	types := workflows.EventTypes()
	if len(types) != len(want) {
		t.Fatalf("%d types, want %d", len(types), len(want))
	}
	for i, typ := range types {
		if string(typ) != want[i] || !typ.Valid() {
			t.Errorf("type %d: %q", i, typ)
		}
		if typ.Terminal() != (i >= len(want)-3) {
			t.Errorf("%s terminal: %v", typ, typ.Terminal())
		}
	}
	if workflows.EventType("Chunk").Valid() {
		t.Error("event types are case-sensitive")
	}
}
