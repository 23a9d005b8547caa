package workflows

import (
	"strings"
	"testing"
)

func turn(id, parent string, seq int64, user bool) Message {
	m := Message{ID: id, ParentID: parent, Seq: seq, Role: RoleAssistant, Status: MessageLast}
	if user {
		m.Role, m.Status = RoleUser, MessageFirst
	}
	return m
}

func root(m Message) Message { m.Root = true; return m }

func ids(ms []Message) string {
	var s []string
	for _, m := range ms {
		s = append(s, m.ID)
	}
	return strings.Join(s, " ")
}

func TestTreePath(t *testing.T) {
	// u1 a1 u2 a2, then u2 edited (u2b beside u2, answered a2b), then a1
	// regenerated (a1b beside a1).
	branched := []Message{
		turn("u1", "", 1, true), turn("a1", "u1", 2, false),
		{ID: "step", ParentID: "u1", Seq: 3, Role: RoleAssistant, Status: MessageStep},
		turn("u2", "a1", 4, true), turn("a2", "u2", 5, false),
		turn("u2b", "a1", 6, true), turn("a2b", "u2b", 7, false),
		turn("a1b", "u1", 8, false),
	}
	legacy := []Message{turn("u1", "", 1, true), turn("a1", "", 2, false), turn("u2", "", 3, true), turn("a2", "", 4, false)}
	cases := []struct {
		name     string
		msgs     []Message
		selected string
		want     string
		siblings string
	}{
		{"empty", nil, "", "", ""},
		{"legacy conversation is one line", legacy, "", "u1 a1 u2 a2", ""},
		{"legacy selection of its middle", legacy, "a1", "u1 a1 u2 a2", ""},
		{"newest branch by default", branched, "", "u1 a1b", "a1 a1b"},
		{"the first answer's branch takes its newest child", branched, "a1", "u1 a1 u2b a2b", "u2 u2b"},
		{"an older edit", branched, "u2", "u1 a1 u2 a2", "u2 u2b"},
		{"a leaf", branched, "a2b", "u1 a1 u2b a2b", "a2b"},
		{"unknown selection is the newest branch", branched, "nope", "u1 a1b", ""},
		{"a parent that is gone follows the turn before", []Message{turn("u1", "", 1, true), turn("a1", "deleted", 2, false)}, "", "u1 a1", ""},
		{"an edit of the first prompt is a second root", []Message{turn("u1", "", 1, true), turn("a1", "u1", 2, false), root(turn("u1b", "", 3, true)),
			turn("a1b", "u1b", 4, false)}, "u1", "u1 a1", "u1 u1b"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tr := NewTree(c.msgs)
			if got := ids(tr.Path(c.selected)); got != c.want {
				t.Fatalf("Path(%q) = %q, want %q", c.selected, got, c.want)
			}
			if c.siblings != "" {
				probe := strings.Fields(c.siblings)[0]
				if got := strings.Join(tr.Siblings(probe), " "); got != c.siblings {
					t.Fatalf("Siblings(%q) = %q, want %q", probe, got, c.siblings)
				}
			}
		})
	}
}

func TestTreeCycleIsBounded(t *testing.T) {
	// Parents come from the store; a cycle (which the store cannot make:
	// a parent is stored before its child) must still end.
	tr := NewTree([]Message{turn("a", "b", 1, true), turn("b", "a", 2, false)})
	if p := tr.Path("a"); len(p) > 4 {
		t.Fatalf("path %q", ids(p))
	}
}
