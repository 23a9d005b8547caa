package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/agenthost/agenthost/host/audit"
	"github.com/agenthost/agenthost/host/builtin"
	"github.com/agenthost/agenthost/host/store"
	"github.com/agenthost/agenthost/host/tenancy"
	"github.com/agenthost/agenthost/host/tools"
	"github.com/agenthost/agenthost/host/wasm"
	"github.com/agenthost/agenthost/host/wasm/manifest"
)

// adminCmd is the operator's tooling for tenants, users, workspaces,
// memberships, API tokens and tenants' spending limits. It works on the database directly (it is the
// administrative path, outside any principal's scope).
//
//	agenthost admin bootstrap -tenant NAME -email ADDR   tenant, admin user, workspace, token
//	agenthost admin user -tenant ID -email ADDR [-admin]
//	agenthost admin workspace -tenant ID -name NAME [-kind KIND]
//	agenthost admin member -workspace ID -user ID -role ROLE   (role "" removes)
//	agenthost admin delete-workspace -workspace ID               the workspace and everything in it
//	agenthost admin token -user ID [-name NAME] [-ttl 2160h]   a token (90 days unless -ttl; -ttl 0 never expires)
//	agenthost admin token -list -user ID                         the user's tokens
//	agenthost admin token -revoke TOKEN_ID                       ends a token at once
//	agenthost admin tools -workspace ID -set NAME [-extra a,b]   the workspace agent's tool set
//	agenthost admin limits -tenant ID [-credit CHF] [-monthly CHF]   spending limits ("none" removes)
//	agenthost admin usage -tenant ID [-by model,month] [-csv]        the tenant's usage report
//	agenthost admin storage [-sweep]                             what storage holds and can reclaim
//	agenthost admin mcp -tenant ID -name NAME (-command CMD | -url URL) …   an external MCP server (-list, -remove ID)
//	agenthost admin scim-token -tenant ID [-name NAME] | -revoke ID   the tenant's SCIM token (docs/scim.md)
//	agenthost admin scim-map -tenant ID -group NAME [-workspace ID] -role ROLE | -list   what a SCIM group gives
func adminCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		adminUsage(stderr)
		return fmt.Errorf("admin: want bootstrap, user, workspace, member, delete-workspace, token, tools, limits, usage, mcp, scim-token, scim-map or storage")
	}
	if args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		adminUsage(stdout)
		return nil
	}
	if args[0] == "storage" {
		return adminStorageCmd(ctx, args[1:], stdout, stderr)
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
	ttl := fs.Duration("ttl", DefaultTokenTTL, "token lifetime; 0 makes a token that never expires (revoke it with -revoke when done)")
	list := fs.Bool("list", false, "list the -user's tokens (token)")
	revoke := fs.String("revoke", "", "revoke the token with this id (token)")
	group := fs.String("group", "", "SCIM group displayName (scim-map)")
	toolSet := fs.String("set", "core", "tool set name (tools)")
	extra := fs.String("extra", "", "extra tool names, comma-separated (tools)")
	pluginDir := fs.String("plugins", "", settingUsage("plugins", "here whose tools -extra may name (tools)"))
	bl := addBillingAdminFlags(fs)
	mf := addMCPAdminFlags(fs)
	// Everything is checked before the database is opened: a mistake must
	// not create or migrate a data directory.
	if ok, err := parseArgs(fs, args[1:]); !ok {
		return err
	}
	if _, err := checkSettings("admin", fs); err != nil {
		return err
	}
	if err := bl.parse(args[0]); err != nil {
		return err
	}
	// A tool set the server cannot resolve would fail every request of the
	// workspace's agent: refuse it now, before anything is opened.
	var extras []string
	if args[0] == "tools" {
		for _, n := range strings.Split(*extra, ",") {
			if n = strings.TrimSpace(n); n != "" {
				extras = append(extras, n)
			}
		}
		if err := checkToolSet(*toolSet, extras, *pluginDir, filepath.Join(*sf.data, "plugins")); err != nil {
			return fmt.Errorf("admin tools: %w", err)
		}
	}
	if args[0] == "token" {
		switch {
		case *revoke != "" && (*list || *user != ""):
			return fmt.Errorf("admin token: -revoke takes a token id alone")
		case *revoke != "":
			required = nil
		case *ttl < 0:
			return fmt.Errorf("admin token: -ttl %v is negative", *ttl)
		}
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
	rec := newCLIAudit(ctx, db, slog.New(slog.NewTextHandler(stderr, nil)))
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
		rec.record("user", userID, audit.Entry{Action: audit.TokenCreated, TargetType: "token", TargetID: tok.ID,
			Detail: audit.Detail(tok)})
		fmt.Fprintf(stdout, "token %s (shown once, keep it): %s\n", tok.ID, secret)
		if exp == nil {
			fmt.Fprintln(stdout, "this token never expires: revoke it with `agenthost admin token -revoke "+tok.ID+"` when done")
		} else {
			fmt.Fprintf(stdout, "expires %s\n", exp.UTC().Format(time.RFC3339))
		}
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
	case "delete-workspace":
		// Its files go to no trash: the workspace is gone. Their blobs go at
		// the first sweep after the grace period unless other rows share them.
		if err := db.DeleteWorkspace(ctx, *workspace); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "workspace %s deleted with its files, folders and conversations; its storage is reclaimed by the next sweep (admin storage)\n", *workspace)
	case "member":
		from, err := db.MembershipRole(ctx, *workspace, *user)
		if err != nil {
			return err
		}
		if err := db.SetMembership(ctx, tenancy.Membership{WorkspaceID: *workspace, UserID: *user, Role: tenancy.Role(*role)}); err != nil {
			return err
		}
		action := audit.MembershipSet
		if *role == "" {
			action = audit.MembershipRemoved
		}
		if from != tenancy.Role(*role) {
			rec.record("workspace", *workspace, audit.Entry{Action: action, TargetType: "user", TargetID: *user, WorkspaceID: *workspace,
				Detail: audit.Detail(map[string]string{"from": string(from), "to": *role})})
		}
		return nil
	case "token":
		switch {
		case *revoke != "":
			if err := db.RevokeAnyToken(ctx, *revoke); err != nil {
				return err
			}
			rec.record("token", *revoke, audit.Entry{Action: audit.TokenRevoked, TargetType: "token", TargetID: *revoke})
			fmt.Fprintf(stdout, "token %s revoked\n", *revoke)
			return nil
		case *list:
			toks, err := db.UserTokens(ctx, *user)
			if err != nil {
				return err
			}
			printTokens(stdout, toks, time.Now())
			return nil
		}
		return token(*user)
	case "tools":
		if err := db.SetWorkspaceTools(ctx, *workspace, *toolSet, extras); err != nil {
			return err
		}
		rec.record("workspace", *workspace, audit.Entry{Action: audit.ToolSetChanged, TargetType: "workspace", TargetID: *workspace,
			WorkspaceID: *workspace, Detail: audit.Detail(map[string]any{"set": *toolSet, "extra": extras})})
		return nil
	case "scim-token":
		return adminSCIMToken(db, rec, *tenant, *name, *revoke, stdout)
	case "scim-map":
		return adminSCIMMap(ctx, db, *tenant, *group, *workspace, *role, *list, stdout)
	case "limits":
		return bl.limits(ctx, db, *tenant, stdout)
	case "usage":
		return bl.usage(ctx, db, *tenant, stdout)
	case "mcp":
		return mf.run(ctx, db, *tenant, *name, *workspace, *list, stdout)
	default:
		return fmt.Errorf("admin: unknown subcommand %q", args[0])
	}
	return nil
}

// adminRequired maps each admin subcommand to the flags it cannot do
// without.
func adminRequired() map[string][]string {
	return map[string][]string{
		"bootstrap":        {"tenant", "email"},
		"user":             {"tenant", "email"},
		"workspace":        {"tenant", "name"},
		"member":           {"workspace", "user"},
		"delete-workspace": {"workspace"},
		"token":            {"user"},
		"tools":            {"workspace"},
		"limits":           {"tenant"},
		"usage":            {"tenant"},
		"mcp":              {"tenant"},
		"scim-token":       {"tenant"},
		"scim-map":         {"tenant"},
	}
}

func adminUsage(w io.Writer) {
	fmt.Fprint(w, `usage: agenthost admin SUBCOMMAND [FLAGS]   (-h after a subcommand lists its flags)

  bootstrap -tenant NAME -email ADDR             tenant, admin user, workspace, token
  user -tenant ID -email ADDR [-admin]           a user of the tenant
  workspace -tenant ID -name NAME [-kind KIND]   a workspace
  member -workspace ID -user ID -role ROLE       a membership (role "" removes it)
  delete-workspace -workspace ID                 delete a workspace and everything in it (files, folders,
                                                 conversations); its bytes go at the next sweep
  token -user ID [-name NAME] [-ttl 2160h]       an API token (shown once); expires after 90 days
                                                 unless -ttl says otherwise (-ttl 0: never)
  token -list -user ID                           the user's tokens, with their state
  token -revoke TOKEN_ID                         revoke a token (it stops working at once)
  tools -workspace ID -set NAME [-extra a,b]     the workspace agent's tool set; the set must be
      [-plugins DIR]                             one the server knows and every extra a tool of a
                                                 built-in plugin or of one in DIR
  limits -tenant ID [-credit CHF] [-monthly CHF] the tenant's spending limits ("none" removes one);
                                                 without -credit/-monthly: show limits and spending
  usage -tenant ID [-by model,month]             the tenant's usage report (CHF, exact), this month
      [-from DATE] [-to DATE] [-csv]             unless -from/-to say otherwise
  storage [-sweep]                               bytes and blobs held (by tenant) and what a sweep would
                                                 reclaim; -sweep reclaims it now (docs/storage.md)

  mcp -tenant ID -name NAME [-workspace ID]     add an external MCP server to the workspace's tool set
      -command "PROG ARGS" [-env K=V,…]          (or every workspace's): a stdio server (no shell; an
      [-secret-env K=VAR,…]                      empty environment but PATH and -env, only variables the
      | -url URL [-bearer-env VAR]               operator's env= allows; secrets read from this process's
      [-header-env Name=VAR,…]                   variables and sealed with AGENTHOST_SECRET_KEY or
                                                 AGENTHOST_SECRET_KEY_FILE), or a streamable-HTTP server;
      [-read-only a,b|*] [-timeout 60s]          -read-only trusts those tools' readOnlyHint
  mcp -tenant ID -list | -remove ID              the tenant's MCP servers; remove one
  scim-token -tenant ID [-name NAME]             a SCIM token for the tenant's identity provider (shown
                                                 once; docs/scim.md); -revoke ID ends one
  scim-map -tenant ID -group NAME                the role a SCIM group gives in a workspace (-role ""
      [-workspace ID] -role ROLE                 removes); without -workspace, -role admin makes the
                                                 group's members tenant admins; -list shows the mappings

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

// DefaultTokenTTL is the lifetime of tokens made without -ttl: a leaked
// token that nobody remembers stops working on its own.
const DefaultTokenTTL = 90 * 24 * time.Hour

// printTokens writes one line per token: id, state, name and times.
func printTokens(w io.Writer, toks []tenancy.Token, now time.Time) {
	if len(toks) == 0 {
		fmt.Fprintln(w, "no tokens")
		return
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tSTATE\tNAME\tCREATED\tEXPIRES")
	for _, t := range toks {
		state, expires := "active", "never"
		if t.ExpiresAt != nil {
			expires = t.ExpiresAt.UTC().Format(time.RFC3339)
			if !t.ExpiresAt.After(now) {
				state = "expired"
			}
		}
		if t.RevokedAt != nil {
			state = "revoked " + t.RevokedAt.UTC().Format(time.RFC3339)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", t.ID, state, t.Name, t.CreatedAt.UTC().Format(time.RFC3339), expires)
	}
	tw.Flush()
}

// checkToolSet refuses a tool set the server does not define and extra
// tools that neither a built-in plugin nor one in pluginDir declares. It
// reads the plugins' manifests only (no compile).
func checkToolSet(set string, extras []string, pluginDir, installedDir string) error {
	srcs, err := builtin.Sources()
	if err != nil {
		return err
	}
	// The operator's folder, and the plugins installed on the running
	// host (with their kept versions, for pins "tool@1.2.0").
	for _, dir := range []string{pluginDir, installedDir} {
		if dir == "" {
			continue
		}
		paths, err := filepath.Glob(filepath.Join(dir, "*.wasm"))
		if err != nil {
			return err
		}
		for _, p := range paths {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			srcs = append(srcs, wasm.Source{Origin: p, Module: b})
		}
	}
	var known, versioned manifestTools
	for _, s := range srcs {
		m, err := manifest.Read(s.Module)
		if err != nil || !m.HasAgentTools() {
			continue // the server refuses it too, or its tools are not agent tools
		}
		kept := strings.Contains(filepath.Base(s.Origin), "@")
		for _, t := range m.Tools {
			if !kept {
				known = append(known, wasm.ToolInfo{Plugin: m.Name, Tool: t})
			}
			t.Name += "@" + m.Version
			versioned = append(versioned, wasm.ToolInfo{Plugin: m.Name, Tool: t})
		}
	}
	// The server's registry resolves the set: an unknown set is its error.
	_, missing, err := tools.NewRegistry(known, nil).WithVersions(versioned).Set(set, extras...)
	if err != nil {
		return err
	}
	var unknown []string
	for _, n := range missing {
		if slices.Contains(extras, n) {
			unknown = append(unknown, n)
		}
	}
	if len(unknown) > 0 {
		return fmt.Errorf("no plugin provides the extra tools %s (give -plugins DIR for third-party plugins' tools)", strings.Join(unknown, ", "))
	}
	return nil
}

// manifestTools is a tools.Runner over tools read from manifests: enough to
// resolve sets, never to call.
type manifestTools []wasm.ToolInfo

func (m manifestTools) Tools() []wasm.ToolInfo { return m }

// VersionedTools lists them as "tool@version" (tools.Versions).
func (m manifestTools) VersionedTools() []wasm.ToolInfo { return m }

func (manifestTools) Call(context.Context, string, []byte, *wasm.CallOptions) wasm.Result {
	panic("admin: manifest tools are not callable")
}
