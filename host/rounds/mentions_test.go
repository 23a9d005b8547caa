package rounds_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/agenthost/agenthost/host/files"
	"github.com/agenthost/agenthost/host/files/filemeta"
	"github.com/agenthost/agenthost/host/rounds"
	"github.com/agenthost/agenthost/host/tenancy"
	"github.com/agenthost/agenthost/host/worldtest"
)

func TestParseMentions(t *testing.T) {
	for _, c := range []struct {
		in   string
		want []string
	}{
		{"Summarise @report.pdf.", []string{"report.pdf"}},
		{"Compare @a.md and @b.md, then @Reports/2024/", []string{"a.md", "b.md", "Reports/2024/"}},
		{`Read @"Q3 plan.docx" please`, []string{"Q3 plan.docx"}},
		{"mail ann@acme.example about (@x.txt)", []string{"x.txt"}},
		{"@a.md @a.md", []string{"a.md"}},
		{"nothing here @ all", nil},
		{`@"unterminated`, nil},
	} {
		if got := rounds.ParseMentions(c.in); !slices.Equal(got, c.want) {
			t.Errorf("ParseMentions(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	many := strings.Repeat("@f ", 5) // one mention, however often
	for i := range 30 {
		many += " @file" + string(rune('a'+i%26)) + string(rune('a'+i/26))
	}
	if n := len(rounds.ParseMentions(many)); n != rounds.MaxMentions {
		t.Fatalf("%d mentions resolved, want at most %d", n, rounds.MaxMentions)
	}
}

// TestResolveMentions: @references name files and folders of the caller's
// workspace that the caller can read; ambiguous and missing names are said
// to be so, and another user's or workspace's file is never named.
func TestResolveMentions(t *testing.T) {
	ctx := context.Background()
	w := worldtest.New(t, worldtest.Options{Workspaces: []string{"w", "w2"}})
	up := func(p tenancy.Principal, ws, name string, folder string) filemeta.Item {
		f, _, err := w.Files.Upload(ctx, p, files.Upload{WorkspaceID: ws, Name: name, FolderID: folder, Content: strings.NewReader(name), NoDedupe: true})
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	reports, err := w.Files.CreateFolder(ctx, w.P, filemeta.Folder{WorkspaceID: w.Workspace, Name: "Reports"})
	if err != nil {
		t.Fatal(err)
	}
	y2024, err := w.Files.CreateFolder(ctx, w.P, filemeta.Folder{WorkspaceID: w.Workspace, ParentID: reports.ID, Name: "2024"})
	if err != nil {
		t.Fatal(err)
	}
	plan := up(w.P, w.Workspace, "plan.md", "")
	q1 := up(w.P, w.Workspace, "q1.pdf", y2024.ID)
	up(w.P, w.Workspace, "dup.txt", "")
	up(w.P, w.Workspace, "dup.txt", reports.ID)
	up(w.P, w.Workspaces[1], "elsewhere.md", "")
	// A colleague's file the user, a personal member, cannot read.
	bob, err := w.DB.CreateUser(ctx, tenancy.User{TenantID: w.Tenant.ID, Email: "bob@t"})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.DB.SetMembership(ctx, tenancy.Membership{WorkspaceID: w.Workspace, UserID: bob.ID, Role: tenancy.RoleMember}); err != nil {
		t.Fatal(err)
	}
	up(tenancy.Principal{TenantID: w.Tenant.ID, UserID: bob.ID}, w.Workspace, "bobs-secret.md", "")
	if err := w.DB.SetMembership(ctx, tenancy.Membership{WorkspaceID: w.Workspace, UserID: w.User.ID, Role: tenancy.RolePersonal}); err != nil {
		t.Fatal(err)
	}

	ms, err := rounds.ResolveMentions(ctx, w.Files, w.P, w.Workspace,
		"Use @plan.md, @PLAN.MD, @Reports/2024/ and @dup.txt; also @elsewhere.md, @bobs-secret.md and @2024")
	if err != nil {
		t.Fatal(err)
	}
	note := rounds.MentionsNote(ms)
	for _, want := range []string{
		"@plan.md: file plan.md (file id " + plan.ID,
		"@PLAN.MD: file plan.md (file id " + plan.ID,
		"@Reports/2024/: folder 2024 (folder id " + y2024.ID + "), files: q1.pdf (file id " + q1.ID,
		"@dup.txt is ambiguous: 2 files",
		"@elsewhere.md: no file or folder of this workspace",
		"@bobs-secret.md: no file or folder of this workspace",
		"@2024: folder 2024 (folder id " + y2024.ID,
	} {
		if !strings.Contains(note, want) {
			t.Errorf("note lacks %q:\n%s", want, note)
		}
	}
	if strings.Contains(note, "bobs-secret.md (") || strings.Contains(note, "elsewhere.md (") {
		t.Fatalf("the note names a file outside the caller's scope:\n%s", note)
	}
	if ms, _ := rounds.ResolveMentions(ctx, w.Files, w.P, w.Workspace, "no references"); ms != nil || rounds.MentionsNote(ms) != "" {
		t.Fatalf("no mentions: %+v", ms)
	}
}
