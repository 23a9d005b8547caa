package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"time"

	"github.com/agenthost/agenthost/host/store"
	"github.com/agenthost/agenthost/host/tenancy"
)

// adminCmd is the operator's tooling for tenants, users, workspaces,
// memberships and API tokens. It works on the database directly (it is the
// administrative path, outside any principal's scope).
//
//	agenthost admin bootstrap -tenant NAME -email ADDR   tenant, admin user, workspace, token
//	agenthost admin user -tenant ID -email ADDR [-admin]
//	agenthost admin workspace -tenant ID -name NAME [-kind KIND]
//	agenthost admin member -workspace ID -user ID -role ROLE   (role "" removes)
//	agenthost admin token -user ID [-name NAME] [-ttl 720h]
//	agenthost admin tools -workspace ID -set NAME [-extra a,b]   the workspace agent's tool set
func adminCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		adminUsage(stderr)
		return fmt.Errorf("admin: want bootstrap, user, workspace, member, token or tools")
	}
	if args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		adminUsage(stdout)
		return nil
	}
	required, ok := adminRequired()[args[0]]
	if !ok {
		adminUsage(stderr)
		return fmt.Errorf("admin: unknown subcommand %q", args[0])
	}
	fs := flag.NewFlagSet("admin "+args[0], flag.ContinueOnError)
	fs.SetOutput(stderr)
	sf := addStorageFlags(fs)
	tenant := fs.String("tenant", "", "tenant name (bootstrap) or id")
	email := fs.String("email", "", "user e-mail address")
	name := fs.String("name", "", "name")
	kind := fs.String("kind", "", "workspace kind (the feature: chatbot, trustee, …)")
	admin := fs.Bool("admin", false, "the user administers the tenant (access level ALL)")
	workspace := fs.String("workspace", "", "workspace id")
	user := fs.String("user", "", "user id")
	role := fs.String("role", "", fmt.Sprintf("role: one of %v, or empty to remove", tenancy.Roles()))
	ttl := fs.Duration("ttl", 0, "token lifetime (0: no expiry)")
	toolSet := fs.String("set", "core", "tool set name (tools)")
	extra := fs.String("extra", "", "extra tool names, comma-separated (tools)")
	// Everything is checked before the database is opened: a mistake must
	// not create or migrate a data directory.
	if ok, err := parseArgs(fs, args[1:]); !ok {
		return err
	}
	var missing []string
	for _, f := range required {
		if fs.Lookup(f).Value.String() == "" {
			missing = append(missing, "-"+f)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("admin %s: %s required", args[0], strings.Join(missing, " and "))
	}
	db, err := sf.open(ctx, slog.New(slog.NewTextHandler(stderr, nil)))
	if err != nil {
		return err
	}
	defer db.Close()
	if err := prepareSchema(ctx, db, false); err != nil {
		return err
	}
	token := func(userID string) error {
		var exp *time.Time
		if *ttl > 0 {
			t := time.Now().Add(*ttl)
			exp = &t
		}
		tok, secret, err := db.CreateToken(ctx, userID, *name, exp)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "token %s (shown once, keep it): %s\n", tok.ID, secret)
		return nil
	}
	switch args[0] {
	case "bootstrap":
		return bootstrap(ctx, db, *tenant, *email, stdout, token)
	case "user":
		u, err := db.CreateUser(ctx, tenancy.User{TenantID: *tenant, Email: *email, Name: *name, Admin: *admin})
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "user %s\n", u.ID)
	case "workspace":
		w, err := db.CreateWorkspace(ctx, tenancy.Workspace{TenantID: *tenant, Name: *name, Kind: *kind})
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "workspace %s\n", w.ID)
	case "member":
		return db.SetMembership(ctx, tenancy.Membership{WorkspaceID: *workspace, UserID: *user, Role: tenancy.Role(*role)})
	case "token":
		return token(*user)
	case "tools":
		var names []string
		for _, n := range strings.Split(*extra, ",") {
			if n = strings.TrimSpace(n); n != "" {
				names = append(names, n)
			}
		}
		return db.SetWorkspaceTools(ctx, *workspace, *toolSet, names)
	default:
		return fmt.Errorf("admin: unknown subcommand %q", args[0])
	}
	return nil
}

// adminRequired maps each admin subcommand to the flags it cannot do
// without.
func adminRequired() map[string][]string {
	return map[string][]string{
		"bootstrap": {"tenant", "email"},
		"user":      {"tenant", "email"},
		"workspace": {"tenant", "name"},
		"member":    {"workspace", "user"},
		"token":     {"user"},
		"tools":     {"workspace"},
	}
}

func adminUsage(w io.Writer) {
	fmt.Fprint(w, `usage: agenthost admin SUBCOMMAND [FLAGS]   (-h after a subcommand lists its flags)

  bootstrap -tenant NAME -email ADDR             tenant, admin user, workspace, token
  user -tenant ID -email ADDR [-admin]           a user of the tenant
  workspace -tenant ID -name NAME [-kind KIND]   a workspace
  member -workspace ID -user ID -role ROLE       a membership (role "" removes it)
  token -user ID [-name NAME] [-ttl 720h]        an API token (shown once)
  tools -workspace ID -set NAME [-extra a,b]     the workspace agent's tool set

every subcommand takes -data DIR or -database URL (the embedded database in ./data by default)
`)
}

// bootstrap makes a tenant with an admin user, a first workspace the admin
// manages, and an API token: what a fresh installation needs to be used.
func bootstrap(ctx context.Context, db *store.DB, tenant, email string, stdout io.Writer, token func(string) error) error {
	t, err := db.CreateTenant(ctx, tenant)
	if err != nil {
		return err
	}
	u, err := db.CreateUser(ctx, tenancy.User{TenantID: t.ID, Email: email, Name: email, Admin: true})
	if err != nil {
		return err
	}
	w, err := db.CreateWorkspace(ctx, tenancy.Workspace{TenantID: t.ID, Name: "Workspace"})
	if err != nil {
		return err
	}
	if err := db.SetMembership(ctx, tenancy.Membership{WorkspaceID: w.ID, UserID: u.ID, Role: tenancy.RoleManager}); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "tenant %s\nuser %s (admin)\nworkspace %s\n", t.ID, u.ID, w.ID)
	return token(u.ID)
}
