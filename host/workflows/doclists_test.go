package workflows_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/agenthost/agenthost/host/files"
	"github.com/agenthost/agenthost/host/tenancy"
	"github.com/agenthost/agenthost/host/workflows"
	"github.com/agenthost/agenthost/host/worldtest"
)

// docListWorld is a workflow whose messages carry labelled documents:
// m1 "upload" a.pdf, b.pdf; m2 "upload" c.pdf and "writeFile:report.md"
// report.md; m3 "renderDocument:report.md" report.md (another file) and
// "Notes" n.txt; and a second workflow of the same user with "upload".
type docListWorld struct {
	w                  *worldtest.World
	m1, m2, m3, other  workflows.Message
	a, b, c, rep, rend workflows.Document
	notes              workflows.Document
	otherFlow          string
}

func newDocListWorld(t *testing.T) *docListWorld {
	t.Helper()
	ctx := context.Background()
	w := worldtest.New(t, worldtest.Options{Workflow: "docs"})
	file := func(name string) string {
		f, _, err := w.Files.Upload(ctx, w.P, files.Upload{WorkspaceID: w.Workspace, Name: name, Content: strings.NewReader("content of " + name), NoDedupe: true})
		if err != nil {
			t.Fatal(err)
		}
		return f.ID
	}
	msg := func(flow string, docs ...workflows.Document) workflows.Message {
		m, err := w.Workflows.AddMessage(ctx, w.P, workflows.Message{WorkflowID: flow, Status: workflows.MessageStep, Role: workflows.RoleUser, Content: "m", Documents: docs})
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	e := &docListWorld{w: w}
	e.m1 = msg(w.Workflow, workflows.Document{FileID: file("a.pdf"), Label: "upload"}, workflows.Document{FileID: file("b.pdf"), Label: "upload"})
	e.m2 = msg(w.Workflow, workflows.Document{FileID: file("c.pdf"), Label: "upload"}, workflows.Document{FileID: file("report.md"), Label: "writeFile:report.md"})
	e.m3 = msg(w.Workflow, workflows.Document{FileID: file("report.md"), Label: "renderDocument:report.md"}, workflows.Document{FileID: file("n.txt"), Label: "Notes"})
	e.a, e.b = e.m1.Documents[0], e.m1.Documents[1]
	e.c, e.rep = e.m2.Documents[0], e.m2.Documents[1]
	e.rend, e.notes = e.m3.Documents[0], e.m3.Documents[1]
	wf, err := w.Workflows.Start(ctx, w.P, workflows.NewWorkflow{WorkspaceID: w.Workspace, Name: "other"})
	if err != nil {
		t.Fatal(err)
	}
	e.otherFlow = wf.ID
	e.other = msg(wf.ID, workflows.Document{FileID: file("x.pdf"), Label: "upload"})
	return e
}

func refs(docs ...workflows.Document) []string {
	out := make([]string, len(docs))
	for i, d := range docs {
		out[i] = d.Ref()
	}
	return out
}

// TestExpandDocumentLists: each form of docList and docItem references in a tool's
// document list becomes the documents it names, once each, in order.
func TestExpandDocumentLists(t *testing.T) {
	e := newDocListWorld(t)
	const fileID = "0192f1a0-7b3c-7def-8a12-3456789abcde"
	for _, c := range []struct {
		name string
		in   []string
		want []string
	}{
		{"no docList: unchanged", []string{e.a.Ref(), fileID, "garbage here"}, []string{e.a.Ref(), fileID, "garbage here"}},
		{"label over messages", []string{"docList:upload"}, refs(e.a, e.b, e.c)},
		{"label of one message", []string{"docList:" + e.m2.ID + ":upload"}, refs(e.c)},
		{"label with a colon", []string{"docList:writeFile:report.md"}, refs(e.rep)},
		{"message and label with a colon", []string{"docList:" + e.m2.ID + ":writeFile:report.md"}, refs(e.rep)},
		{"label in another case", []string{"docList:UPLOAD"}, refs(e.a, e.b, e.c)},
		{"label by its name after the tool", []string{"docList:notes"}, refs(e.notes)},
		{"one tool's name, unique", []string{"docList:" + e.m3.ID + ":report.md"}, refs(e.rend)},
		{"docItem then its list: once", []string{e.b.Ref(), "docList:upload"}, refs(e.b, e.a, e.c)},
		{"list then its docItem with a name: once", []string{"docList:upload", e.b.Ref() + ":b.pdf"}, refs(e.a, e.b, e.c)},
		{"same list twice", []string{"docList:upload", "docList:" + e.m1.ID + ":upload"}, refs(e.a, e.b, e.c)},
		{"file id of a listed document: once", []string{e.c.FileID, "docList:upload"}, append([]string{e.c.FileID}, refs(e.a, e.b)...)},
		{"two lists", []string{"docList:Notes", "docList:writeFile:report.md"}, refs(e.notes, e.rep)},
		{"list beside other references", []string{"docList:Notes", fileID, "docItem:" + e.a.ID}, append(refs(e.notes), fileID, e.a.Ref())},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := e.w.Workflows.ExpandDocumentLists(context.Background(), e.w.P, e.w.Workflow, c.in)
			if err != nil || !slices.Equal(got, c.want) {
				t.Fatalf("ExpandDocumentLists(%q) = %q, %v; want %q", c.in, got, err, c.want)
			}
		})
	}
}

// TestExpandDocumentListsRefuses: a label that is unknown or ambiguous, a
// list outside a workflow and lists of another workflow or user are
// refused with what the model can pass instead, never filled from
// elsewhere.
func TestExpandDocumentListsRefuses(t *testing.T) {
	e := newDocListWorld(t)
	ctx := context.Background()
	// Another tenant's user in the same store, with a workflow of their own.
	tn, err := e.w.DB.CreateTenant(ctx, "t2")
	if err != nil {
		t.Fatal(err)
	}
	u, err := e.w.DB.CreateUser(ctx, tenancy.User{TenantID: tn.ID, Email: "s@t2"})
	if err != nil {
		t.Fatal(err)
	}
	ws, err := e.w.DB.CreateWorkspace(ctx, tenancy.Workspace{TenantID: tn.ID, Name: "s"})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.w.DB.SetMembership(ctx, tenancy.Membership{WorkspaceID: ws.ID, UserID: u.ID, Role: tenancy.RoleMember}); err != nil {
		t.Fatal(err)
	}
	stranger := tenancy.Principal{TenantID: tn.ID, UserID: u.ID}
	theirs, err := e.w.Workflows.Start(ctx, stranger, workflows.NewWorkflow{WorkspaceID: ws.ID, Name: "theirs"})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name     string
		p        tenancy.Principal
		workflow string
		in       []string
		is       error
		says     []string
	}{
		{"unknown label", e.w.P, e.w.Workflow, []string{"docList:results"}, tenancy.ErrNotFound,
			[]string{`no documents labelled "results"`, "docList:upload (3 documents)", "docList:writeFile:report.md (1 document)", "docList:Notes (1 document)"}},
		{"ambiguous name", e.w.P, e.w.Workflow, []string{"docList:report.md"}, tenancy.ErrInvalid,
			[]string{"ambiguous", "docList:writeFile:report.md", "docList:renderDocument:report.md"}},
		{"label not in the message", e.w.P, e.w.Workflow, []string{"docList:" + e.m1.ID + ":Notes"}, tenancy.ErrNotFound,
			[]string{"message " + e.m1.ID, "docList:" + e.m1.ID + ":upload (2 documents)"}},
		{"message of another workflow", e.w.P, e.w.Workflow, []string{"docList:" + e.other.ID + ":upload"}, tenancy.ErrNotFound,
			[]string{"message " + e.other.ID, "no labelled documents"}},
		{"a good list does not carry a bad one", e.w.P, e.w.Workflow, []string{"docList:upload", "docList:nope"}, tenancy.ErrNotFound,
			[]string{"docList:nope"}},
		{"outside a workflow", e.w.P, "", []string{"docList:upload"}, tenancy.ErrInvalid, []string{"pass file ids"}},
		{"another tenant's user, this workflow", stranger, e.w.Workflow, []string{"docList:upload"}, tenancy.ErrNotFound, nil},
		{"another tenant's user, own workflow", stranger, theirs.ID, []string{"docList:upload"}, tenancy.ErrNotFound, []string{"no labelled documents"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := e.w.Workflows.ExpandDocumentLists(ctx, c.p, c.workflow, c.in)
			if !errors.Is(err, c.is) || got != nil {
				t.Fatalf("ExpandDocumentLists(%q) = %q, %v; want %v", c.in, got, err, c.is)
			}
			for _, s := range c.says {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q does not say %q", err, s)
				}
			}
			// Nothing of the other workflow is ever named.
			if strings.Contains(err.Error(), e.other.Documents[0].ID) {
				t.Errorf("error %q names another workflow's document", err)
			}
		})
	}
}

// TestExpandDocumentListsBound: a list longer than docref allows is
// refused, not truncated.
func TestExpandDocumentListsBound(t *testing.T) {
	w := worldtest.New(t, worldtest.Options{Workflow: "many"})
	ctx := context.Background()
	var docs []workflows.Document
	for i := range 201 {
		f, _, err := w.Files.Upload(ctx, w.P, files.Upload{WorkspaceID: w.Workspace, Name: "f.txt", Content: strings.NewReader(strings.Repeat("x", i+1)), NoDedupe: true})
		if err != nil {
			t.Fatal(err)
		}
		docs = append(docs, workflows.Document{FileID: f.ID, Label: "bulk"})
	}
	if _, err := w.Workflows.AddMessage(ctx, w.P, workflows.Message{WorkflowID: w.Workflow, Status: workflows.MessageStep, Role: workflows.RoleUser, Documents: docs}); err != nil {
		t.Fatal(err)
	}
	got, err := w.Workflows.ExpandDocumentLists(ctx, w.P, w.Workflow, []string{"docList:bulk"})
	if !errors.Is(err, tenancy.ErrInvalid) || !strings.Contains(err.Error(), "201 documents") {
		t.Fatalf("= %d refs, %v; want ErrInvalid naming 201 documents", len(got), err)
	}
}
