package rounds

import (
	"context"
	"fmt"

	"github.com/agenthost/agenthost/host/llm"
	"github.com/agenthost/agenthost/host/tenancy"
	"github.com/agenthost/agenthost/host/workflows"
)

// A round continues one branch of its conversation (workflows.Tree): a new
// prompt follows the shown branch's last turn, an edited prompt is a
// sibling of the prompt it replaces, and a regenerated answer a sibling of
// the answer it replaces. The round's history is the branch above its
// prompt, never what other branches said.

// branchPoint is where a round's prompt goes and what the model sees
// before it.
type branchPoint struct {
	// parent is the turn the new prompt follows ("" for the first).
	parent string
	// prompt is the stored prompt a regenerated round answers again.
	prompt *workflows.Message
	// selects: the round moves the shown branch to its prompt.
	selects bool
	history []llm.Message
}

// branchFor reads where req's round goes in workflow id's conversation,
// before anything changes: the shown branch's end, the place of the prompt
// req.EditOf replaces, or the prompt req.regenerate answers again.
func (s *Service) branchFor(ctx context.Context, p tenancy.Principal, id string, req StartRequest) (branchPoint, error) {
	w, tree, err := s.wf.Thread(ctx, p, id)
	if err != nil {
		return branchPoint{}, err
	}
	var b branchPoint
	switch {
	case req.regenerate != "":
		m, ok := tree.Turn(req.regenerate)
		if ok && m.Role == workflows.RoleAssistant {
			m, ok = tree.Turn(tree.Parent(m.ID))
		}
		if !ok || m.Role != workflows.RoleUser {
			return branchPoint{}, fmt.Errorf("%w: message %q is not a prompt or an answer to one in workflow %q", tenancy.ErrNotFound, req.regenerate, id)
		}
		b.prompt, b.parent, b.selects = &m, tree.Parent(m.ID), true
	case req.EditOf != "":
		m, ok := tree.Turn(req.EditOf)
		if !ok || m.Role != workflows.RoleUser {
			return branchPoint{}, fmt.Errorf("%w: editOf: message %q is not a prompt of workflow %q", tenancy.ErrNotFound, req.EditOf, id)
		}
		b.parent, b.selects = tree.Parent(m.ID), true
	default:
		b.parent = tree.Leaf(w.Branch)
		// Without a selection the newest branch is shown, and the new
		// prompt is the newest turn: nothing to move.
		b.selects = w.Branch != ""
	}
	b.history = s.conversation(tree.PathTo(b.parent))
	return b, nil
}

// roundPrompt is the prompt of the shown branch's current round (its last
// prompt) and the conversation before it: what a round run again (taken
// over, resumed after approval) answers.
func (s *Service) roundPrompt(ctx context.Context, p tenancy.Principal, w workflows.Workflow) (workflows.Message, []llm.Message, error) {
	_, tree, err := s.wf.Thread(ctx, p, w.ID)
	if err != nil {
		return workflows.Message{}, nil, err
	}
	path := tree.Path(w.Branch)
	for i := len(path) - 1; i >= 0; i-- {
		if path[i].Role == workflows.RoleUser {
			return path[i], s.conversation(path[:i]), nil
		}
	}
	return workflows.Message{}, nil, fmt.Errorf("the workflow has no request to run")
}

// Regenerate answers a prompt of the workflow again (messageID names the
// prompt or the answer to replace), as a new round whose answer is a
// sibling of the earlier ones; the conversation shows it once stored.
func (s *Service) Regenerate(ctx context.Context, p tenancy.Principal, workflowID, messageID, model string) (workflows.Workflow, error) {
	w, err := s.wf.Get(ctx, p, workflowID)
	if err != nil {
		return workflows.Workflow{}, err
	}
	return s.start(ctx, p, w.WorkspaceID, StartRequest{WorkflowID: workflowID, Model: model, regenerate: messageID}, nil)
}
