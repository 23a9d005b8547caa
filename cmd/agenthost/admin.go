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
		return fmt.Errorf("admin: want bootstrap, user, workspace, member, token or tools")
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
	if err := fs.Parse(args[1:]); err != nil {
		return err
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

// bootstrap makes a tenant with an admin user, a first workspace the admin
// manages, and an API token: what a fresh installation needs to be used.
func bootstrap(ctx context.Context, db *store.DB, tenant, email string, stdout io.Writer, token func(string) error) error {
	if tenant == "" || email == "" {
		return fmt.Errorf("admin bootstrap: -tenant NAME and -email ADDR are required")
	}
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
