package main

import (
	"context"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/agenthost/agenthost/host/audit"
	"github.com/agenthost/agenthost/host/store"
)

// TestAdminAudit: the operator's command-line changes are in the tenant's
// audit log, by the system through the CLI.
func TestAdminAudit(t *testing.T) {
	data := filepath.Join(t.TempDir(), "data")
	admin := adminIn(t, data)
	out := admin("bootstrap", "-tenant", "Acme", "-email", "ada@acme.example")
	ids := map[string]string{}
	for _, k := range []string{"tenant", "user", "workspace"} {
		m := regexp.MustCompile(`(?m)^` + k + ` (\S+)`).FindStringSubmatch(out)
		if m == nil {
			t.Fatalf("bootstrap printed %s", out)
		}
		ids[k] = m[1]
	}
	out = admin("user", "-tenant", ids["tenant"], "-email", "bob@acme.example")
	bob := strings.Fields(out)[1]
	tok := regexp.MustCompile(`token (\S+) \(shown once`).FindStringSubmatch(admin("token", "-user", bob, "-name", "ci"))
	admin("token", "-revoke", tok[1])
	admin("member", "-workspace", ids["workspace"], "-user", bob, "-role", "viewer")
	admin("member", "-workspace", ids["workspace"], "-user", bob, "-role", "member")
	admin("member", "-workspace", ids["workspace"], "-user", bob, "-role", "")
	admin("tools", "-workspace", ids["workspace"], "-set", "core")
	admin("limits", "-tenant", ids["tenant"], "-credit", "100")
	scimTok := regexp.MustCompile(`SCIM token (\S+) \(shown once`).FindStringSubmatch(admin("scim-token", "-tenant", ids["tenant"]))
	if scimTok == nil {
		t.Fatal("no SCIM token printed")
	}
	admin("scim-token", "-tenant", ids["tenant"], "-revoke", scimTok[1])
	admin("scim-map", "-tenant", ids["tenant"], "-group", "Engineers", "-workspace", ids["workspace"], "-role", "member")
	if !strings.Contains(admin("scim-map", "-tenant", ids["tenant"], "-list"), "Engineers\t"+ids["workspace"]+"\tmember") {
		t.Fatal("the mapping is not listed")
	}

	ctx := context.Background()
	db, err := store.Open(ctx, store.Config{Dir: data})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	page, err := db.SearchAudit(ctx, audit.Query{TenantID: ids["tenant"]})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range page.Entries {
		got = append(got, e.Action)
		if e.Actor.Kind != audit.ActorSystem || e.Actor.Via != audit.ViaCLI || e.UserAgent != "agenthost-cli" {
			t.Errorf("entry %+v: not the CLI's", e)
		}
	}
	slices.Reverse(got)
	want := "token.created,token.created,token.revoked,membership.set,membership.set,membership.removed,toolset.changed," +
		"billing.limits_changed,scim.token_created,scim.token_revoked"
	if strings.Join(got, ",") != want {
		t.Fatalf("the CLI's entries\n%s\nwant\n%s", strings.Join(got, ","), want)
	}
	for _, e := range page.Entries {
		if e.Action == audit.LimitsChanged && !strings.Contains(string(e.Detail), `"to":"CHF 100.00"`) {
			t.Errorf("the limits entry %s", e.Detail)
		}
	}
}

// TestEveryActionIsRecorded: every action host/audit lists is recorded by
// some code outside host/audit (its constant is used there), so the list
// names nothing that nothing records. Each place is tested in its own
// package: host/api (API changes, MCP tool calls), host/installed
// (plugins, grants), host/scim, host/connections (connector side
// effects), this package (the CLI), host/webui (sign-in).
func TestEveryActionIsRecorded(t *testing.T) {
	names := map[string]string{} // constant → action
	f, err := parser.ParseFile(token.NewFileSet(), "../../host/audit/actions.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		for _, s := range g.Specs {
			v := s.(*ast.ValueSpec)
			for i, n := range v.Names {
				if lit, ok := v.Values[i].(*ast.BasicLit); ok {
					names[n.Name] = strings.Trim(lit.Value, `"`)
				}
			}
		}
	}
	used := map[string]bool{}
	err = filepath.WalkDir("../../host", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") || strings.Contains(p, "/host/audit/") {
			return err
		}
		b, err := os.ReadFile(p)
		for n := range names {
			if strings.Contains(string(b), "audit."+n) {
				used[n] = true
			}
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"admin.go", "admin_audit.go", "admin_billing.go"} {
		b, _ := os.ReadFile(p)
		for n := range names {
			if strings.Contains(string(b), "audit."+n) {
				used[n] = true
			}
		}
	}
	listed := audit.Actions()
	for n, action := range names {
		if !slices.Contains(listed, action) {
			t.Errorf("%s (%s) is not in audit.Actions", n, action)
		}
		if !used[n] {
			t.Errorf("nothing records %s (%s)", n, action)
		}
	}
	if len(listed) != len(names) {
		t.Errorf("audit.Actions lists %d actions, actions.go declares %d", len(listed), len(names))
	}
}
