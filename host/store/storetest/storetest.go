// Package storetest is the conformance suite every store implementation
// passes: the same scenarios, run against each real database (the embedded
// SQLite store and PostgreSQL), as River's riverdrivertest does for its
// drivers. A dialect's test calls Run with a function that opens a fresh,
// migrated database and the blob backend that goes with it.
package storetest

import (
	"context"
	"testing"

	"github.com/agenthost/agenthost/host/files"
	"github.com/agenthost/agenthost/host/store"
	"github.com/agenthost/agenthost/host/tenancy"
)

// Env is one fresh, migrated database and its blob backend.
type Env struct {
	DB    *store.DB
	Blobs files.Blobs
	// Peer is a second handle on the same database, as a second host
	// sharing it has; nil when the opener gives none.
	Peer *store.DB
}

// Opener makes a fresh, empty (unmigrated) Env for one test; it registers
// its own cleanup.
type Opener func(tb testing.TB) Env

// migrated opens a fresh Env and applies every migration.
func migrated(t *testing.T, open Opener) Env {
	t.Helper()
	env := open(t)
	if err := env.DB.Migrate(context.Background()); err != nil {
		t.Fatal(err)
	}
	return env
}

// Run runs every conformance scenario against the store open makes.
func Run(t *testing.T, open Opener) {
	t.Run("Migrations", func(t *testing.T) { testMigrations(t, open) })
	t.Run("Tenancy", func(t *testing.T) { testTenancy(t, open) })
	t.Run("Tokens", func(t *testing.T) { testTokens(t, open) })
	t.Run("Setup", func(t *testing.T) { testSetup(t, open) })
	t.Run("Sessions", func(t *testing.T) { testSessions(t, open) })
	t.Run("Deactivation", func(t *testing.T) { testDeactivation(t, open) })
	t.Run("Passkeys", func(t *testing.T) { testPasskeys(t, open) })
	t.Run("SecondFactor", func(t *testing.T) { testSecondFactor(t, open) })
	t.Run("People", func(t *testing.T) { testPeople(t, open) })
	t.Run("Invitations", func(t *testing.T) { testInvitations(t, open) })
	t.Run("IdentitySignIn", func(t *testing.T) { testIdentitySignIn(t, open) })
	t.Run("SignInFlows", func(t *testing.T) { testSignInFlows(t, open) })
	t.Run("WorkspaceTools", func(t *testing.T) { testWorkspaceTools(t, open) })
	t.Run("Usage", func(t *testing.T) { testUsage(t, open) })
	t.Run("TenantBudget", func(t *testing.T) { testTenantBudget(t, open) })
	t.Run("PriceVersions", func(t *testing.T) { testPriceVersions(t, open) })
	t.Run("UsageReport", func(t *testing.T) { testUsageReport(t, open) })
	t.Run("ConcurrentSpend", func(t *testing.T) { testConcurrentSpend(t, open) })
	t.Run("Reservations", func(t *testing.T) { testReservations(t, open) })
	t.Run("ConcurrentReservations", func(t *testing.T) { testConcurrentReservations(t, open) })
	t.Run("Knowledge", func(t *testing.T) { testKnowledge(t, open) })
	t.Run("Languages", func(t *testing.T) { testLanguages(t, open) })
	t.Run("ModelChoice", func(t *testing.T) { testModelChoice(t, open) })
	t.Run("Preferences", func(t *testing.T) { testPreferences(t, open) })
	t.Run("Notifications", func(t *testing.T) { testNotifications(t, open) })
	t.Run("Reanalysis", func(t *testing.T) { testReanalysis(t, open) })
	t.Run("ContentPages", func(t *testing.T) { testContentPages(t, open) })
	t.Run("EncryptedClaim", func(t *testing.T) { testEncryptedClaim(t, open) })
	t.Run("PasswordLocks", func(t *testing.T) { testPasswordLocks(t, open) })
	t.Run("OCRPages", func(t *testing.T) { testOCRPages(t, open) })
	t.Run("ContentExtractor", func(t *testing.T) { testContentExtractor(t, open) })
	t.Run("Containers", func(t *testing.T) { testContainers(t, open) })
	t.Run("Vectors", func(t *testing.T) { testVectors(t, open) })
	t.Run("AddVectors", func(t *testing.T) { testAddVectors(t, open) })
	t.Run("AccessMatrix", func(t *testing.T) { testAccessMatrix(t, open) })
	t.Run("Files", func(t *testing.T) { testFiles(t, open) })
	t.Run("Listing", func(t *testing.T) { testListing(t, open) })
	t.Run("Folders", func(t *testing.T) { testFolders(t, open) })
	t.Run("ReuploadTags", func(t *testing.T) { testReuploadTags(t, open) })
	t.Run("AutoRuleOwner", func(t *testing.T) { testAutoRuleOwner(t, open) })
	t.Run("BadInput", func(t *testing.T) { testBadInput(t, open) })
	t.Run("ConcurrentUploads", func(t *testing.T) { testConcurrentUploads(t, open) })
	t.Run("Versions", func(t *testing.T) { testVersions(t, open) })
	t.Run("Proposals", func(t *testing.T) { testProposals(t, open) })
	t.Run("Workflows", func(t *testing.T) { testWorkflows(t, open) })
	t.Run("ConversationList", func(t *testing.T) { testConversationList(t, open) })
	t.Run("ToolPolicies", func(t *testing.T) { testToolPolicies(t, open) })
	t.Run("Approvals", func(t *testing.T) { testApprovals(t, open) })
	t.Run("Events", func(t *testing.T) { testEvents(t, open) })
	t.Run("WorkflowMemory", func(t *testing.T) { testMemory(t, open) })
	t.Run("MCPServers", func(t *testing.T) { testMCPServers(t, open) })
	t.Run("Connections", func(t *testing.T) { testConnections(t, open) })
	t.Run("DataSources", func(t *testing.T) { testDataSources(t, open) })
	t.Run("PluginAudit", func(t *testing.T) { testPluginAudit(t, open) })
	t.Run("Audit", func(t *testing.T) { testAudit(t, open) })
	t.Run("OAuth", func(t *testing.T) { testOAuth(t, open) })
}

// world is the cast of the access scenarios: two tenants; in tenant 1 the
// workspaces A and B with users in every role, and a tenant admin.
type world struct {
	env                                   Env
	svc                                   *files.Service
	t1, t2                                tenancy.Tenant
	wsA, wsB, wsC                         tenancy.Workspace
	alice, bob, victor, pat, carol, admin tenancy.Principal
	dave, daveAdmin                       tenancy.Principal
}

func newWorld(t *testing.T, open Opener) *world {
	t.Helper()
	env := migrated(t, open)
	ctx := context.Background()
	db := env.DB
	w := &world{env: env, svc: files.NewService(db, env.Blobs, 1<<20)}
	w.t1 = must(db.CreateTenant(ctx, "Acme"))
	w.t2 = must(db.CreateTenant(ctx, "Other"))
	w.wsA = must(db.CreateWorkspace(ctx, tenancy.Workspace{TenantID: w.t1.ID, Name: "A", Kind: "chatbot"}))
	w.wsB = must(db.CreateWorkspace(ctx, tenancy.Workspace{TenantID: w.t1.ID, Name: "B"}))
	w.wsC = must(db.CreateWorkspace(ctx, tenancy.Workspace{TenantID: w.t2.ID, Name: "C"}))
	user := func(tn tenancy.Tenant, email string, admin bool, ws *tenancy.Workspace, role tenancy.Role) tenancy.Principal {
		u := must(db.CreateUser(ctx, tenancy.User{TenantID: tn.ID, Email: email, Name: email, Admin: admin}))
		if ws != nil {
			if err := db.SetMembership(ctx, tenancy.Membership{WorkspaceID: ws.ID, UserID: u.ID, Role: role}); err != nil {
				t.Fatal(err)
			}
		}
		return tenancy.Principal{TenantID: tn.ID, UserID: u.ID, Admin: admin}
	}
	w.alice = user(w.t1, "alice@acme", false, &w.wsA, tenancy.RoleMember)
	w.bob = user(w.t1, "bob@acme", false, &w.wsA, tenancy.RoleMember)
	w.victor = user(w.t1, "victor@acme", false, &w.wsA, tenancy.RoleViewer)
	w.pat = user(w.t1, "pat@acme", false, &w.wsA, tenancy.RolePersonal)
	w.carol = user(w.t1, "carol@acme", false, &w.wsB, tenancy.RoleManager)
	w.admin = user(w.t1, "admin@acme", true, nil, "")
	w.dave = user(w.t2, "dave@other", false, &w.wsC, tenancy.RoleManager)
	w.daveAdmin = user(w.t2, "root@other", true, nil, "")
	return w
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
