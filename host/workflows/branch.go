package workflows

import (
	"context"
	"fmt"
	"sort"

	"github.com/agenthost/agenthost/host/tenancy"
)

// A conversation is a tree of turns: a person's prompt (a user message that
// opens a round) and the answer that ends a round (an assistant's last
// message). Editing a sent prompt adds a sibling of it, regenerating an
// answer a sibling of that answer; the branch a person looks at, and the
// one the next round continues, is the path from a root to a leaf through
// the selected turn (Workflow.Branch). A turn without a parent that is not
// marked Root (messages stored before branches existed, a background job's
// report) follows the turn stored before it, which keeps an old
// conversation one straight line.

// IsTurn reports whether m is a node of the conversation tree: a prompt
// or an answer.
func IsTurn(m Message) bool {
	return (m.Role == RoleUser && m.Status == MessageFirst) || (m.Role == RoleAssistant && m.Status == MessageLast)
}

// Tree is the turns of a conversation with their parents and children.
type Tree struct {
	turns    map[string]Message
	parent   map[string]string
	children map[string][]string // by parent id, "" for the roots; oldest first
}

// NewTree builds the tree of msgs (in the order stored).
func NewTree(msgs []Message) *Tree {
	t := &Tree{turns: map[string]Message{}, parent: map[string]string{}, children: map[string][]string{}}
	ordered := make([]Message, 0, len(msgs))
	for _, m := range msgs {
		if IsTurn(m) {
			ordered = append(ordered, m)
		}
	}
	sort.SliceStable(ordered, func(i, j int) bool { return ordered[i].Seq < ordered[j].Seq })
	prev := ""
	for _, m := range ordered {
		parent := m.ParentID
		if _, ok := t.turns[parent]; !ok {
			// No parent, or one that is gone (deleted) or not a turn:
			// the turn stored before it, unless it starts the
			// conversation.
			parent = prev
			if m.Root {
				parent = ""
			}
		}
		t.turns[m.ID] = m
		t.parent[m.ID] = parent
		t.children[parent] = append(t.children[parent], m.ID)
		prev = m.ID
	}
	return t
}

// Has reports whether id is a turn of the tree.
func (t *Tree) Has(id string) bool { _, ok := t.turns[id]; return ok }

// Turn returns the turn id.
func (t *Tree) Turn(id string) (Message, bool) { m, ok := t.turns[id]; return m, ok }

// Parent is the turn id follows, "" for a root.
func (t *Tree) Parent(id string) string { return t.parent[id] }

// Siblings lists the turns with id's parent, oldest first (id among them).
func (t *Tree) Siblings(id string) []string { return t.children[t.parent[id]] }

// PathTo is the turns from a root to id, id last; empty for "" or an
// unknown id.
func (t *Tree) PathTo(id string) []Message {
	var rev []Message
	for n := 0; t.Has(id) && n <= len(t.turns); n++ {
		rev = append(rev, t.turns[id])
		id = t.parent[id]
	}
	out := make([]Message, len(rev))
	for i, m := range rev {
		out[len(rev)-1-i] = m
	}
	return out
}

// Path is the branch through selected: its ancestors, itself, and below
// it the newest child at each step. An empty or unknown selection is the
// newest branch (from the newest root).
func (t *Tree) Path(selected string) []Message {
	path := t.PathTo(selected)
	cur := selected
	if len(path) == 0 {
		cur = ""
	}
	for n := 0; n <= len(t.turns); n++ {
		kids := t.children[cur]
		if len(kids) == 0 {
			break
		}
		cur = kids[len(kids)-1]
		path = append(path, t.turns[cur])
	}
	return path
}

// Leaf is the last turn of the branch through selected, "" for a
// conversation without turns.
func (t *Tree) Leaf(selected string) string {
	p := t.Path(selected)
	if len(p) == 0 {
		return ""
	}
	return p[len(p)-1].ID
}

// Thread returns the workflow and the tree of its conversation (its
// first 1,000 messages, as a round's history reads them).
func (s *Service) Thread(ctx context.Context, p tenancy.Principal, id string) (Workflow, *Tree, error) {
	w, err := s.Get(ctx, p, id)
	if err != nil {
		return Workflow{}, nil, err
	}
	msgs, err := s.Messages(ctx, p, id, After{}, maxListLimit)
	if err != nil {
		return Workflow{}, nil, err
	}
	return w, NewTree(msgs), nil
}

// SelectBranch shows (and continues) the conversation's branch through
// turn messageID, and appends a `branchSelected` event. Only the owner
// selects.
func (s *Service) SelectBranch(ctx context.Context, p tenancy.Principal, workflowID, messageID string) (Workflow, error) {
	_, tree, err := s.Thread(ctx, p, workflowID)
	if err != nil {
		return Workflow{}, err
	}
	if !tree.Has(messageID) {
		return Workflow{}, fmt.Errorf("%w: message %q is not a prompt or an answer of workflow %q", tenancy.ErrNotFound, messageID, workflowID)
	}
	w, err := s.Update(ctx, p, workflowID, Update{Branch: &messageID})
	if err != nil {
		return Workflow{}, err
	}
	if _, err := s.Append(ctx, p, workflowID, EventBranchSelected, BranchSelectedData{MessageID: messageID}); err != nil {
		return Workflow{}, err
	}
	return w, nil
}
