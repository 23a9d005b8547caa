// Package worldtest builds, for tests, the world a request or a tool call
// happens in: a migrated embedded store with its blob directory, a tenant,
// a user who is a member of one or more workspaces, the file and workflow
// services, a started workflow and, when asked, a scripted model provider
// with a client that meters into the store.
//
// The schema, the workflow service and the metered model client are the
// server's own (host/server: MigrateAll, NewWorkflows, OpenModels), so a
// world is wired as serve wires them; a whole server is not started, as
// one costs seconds of plugin loading that these tests do not need.
//
// It imports host/server, so only external tests (package x_test) of the
// packages the server is made of can use it.
package worldtest

import (
	"context"
	"io"
	"path/filepath"
	"testing"
	"time"

	"github.com/agenthost/agenthost/host/billing"
	"github.com/agenthost/agenthost/host/blob"
	"github.com/agenthost/agenthost/host/files"
	"github.com/agenthost/agenthost/host/files/filemeta"
	"github.com/agenthost/agenthost/host/llm"
	"github.com/agenthost/agenthost/host/llm/llmtest"
	"github.com/agenthost/agenthost/host/llm/modeluse"
	"github.com/agenthost/agenthost/host/server"
	"github.com/agenthost/agenthost/host/store"
	"github.com/agenthost/agenthost/host/tenancy"
	"github.com/agenthost/agenthost/host/workflows"
)

// Provider is the name of the provider a Model's client reaches its
// scripted server through.
const Provider = "test"

// Options says what New builds beyond the store, the tenant and the user.
type Options struct {
	// Workspaces names the workspaces the user is a member of
	// (tenancy.RoleMember), in order; none means one named "w".
	Workspaces []string
	// Workflow, when not empty, is the name of a workflow the user starts
	// in the first workspace.
	Workflow string
	// Model, when not nil, starts a scripted provider and a client on it.
	Model *Model
	// DatabaseURL, when set, is a PostgreSQL database (empty, or migrated)
	// the world is made in instead of an embedded store; the blobs stay in
	// a directory of the test.
	DatabaseURL string
}

// Model describes a scripted provider and the client that reaches it.
type Model struct {
	// Models are the client's models by operation; an empty Provider in
	// one of them is set to Provider.
	Models map[modeluse.Operation][]llm.ModelConfig
	// Server are the scripted server's options (a default step, ...).
	Server []llmtest.Option
	// Retry is the client's retry policy (zero: llm's default).
	Retry llm.RetryConfig
	// Timeout bounds one provider request (zero: 20 seconds).
	Timeout time.Duration
}

// World is what New built. Fields a test did not ask for are zero.
type World struct {
	DB    *store.DB
	Blobs *blob.Dir
	// Tenant and User are the world's tenant and its one user; P is the
	// user as a principal.
	Tenant tenancy.Tenant
	User   tenancy.User
	P      tenancy.Principal
	// Workspace is the first of Workspaces, the ids of Options.Workspaces.
	Workspace  string
	Workspaces []string
	Files      *files.Service
	Workflows  *workflows.Service
	// Workflow is the id of the started workflow ("" when none was asked).
	Workflow string
	// Server and Client are the scripted provider and the client on it
	// (nil when Options.Model is nil).
	Server *llmtest.Server
	Client *llm.Client
}

// New builds a world in tb's temporary directory; the store is closed when
// the test ends. Any failure ends the test.
func New(tb testing.TB, o Options) *World {
	tb.Helper()
	ctx := context.Background()
	var db *store.DB
	var blobs *blob.Dir
	if o.DatabaseURL == "" {
		db, blobs = Store(tb)
	} else {
		db = open(tb, store.Config{URL: o.DatabaseURL})
		var err error
		if blobs, err = blob.NewDir(tb.TempDir()); err != nil {
			tb.Fatal(err)
		}
	}
	tn, err := db.CreateTenant(ctx, "t")
	if err != nil {
		tb.Fatal(err)
	}
	u, err := db.CreateUser(ctx, tenancy.User{TenantID: tn.ID, Email: "u@t"})
	if err != nil {
		tb.Fatal(err)
	}
	names := o.Workspaces
	if len(names) == 0 {
		names = []string{"w"}
	}
	w := &World{DB: db, Blobs: blobs, Tenant: tn, User: u, P: tenancy.Principal{TenantID: tn.ID, UserID: u.ID}}
	for _, name := range names {
		ws, err := db.CreateWorkspace(ctx, tenancy.Workspace{TenantID: tn.ID, Name: name})
		if err != nil {
			tb.Fatal(err)
		}
		if err := db.SetMembership(ctx, tenancy.Membership{WorkspaceID: ws.ID, UserID: u.ID, Role: tenancy.RoleMember}); err != nil {
			tb.Fatal(err)
		}
		w.Workspaces = append(w.Workspaces, ws.ID)
	}
	w.Workspace = w.Workspaces[0]
	w.Files = files.NewService(db, blobs, 0)
	w.Workflows, _ = server.NewWorkflows(db, nil)
	if o.Workflow != "" {
		wf, err := w.Workflows.Start(ctx, w.P, workflows.NewWorkflow{WorkspaceID: w.Workspace, Name: o.Workflow})
		if err != nil {
			tb.Fatal(err)
		}
		w.Workflow = wf.ID
	}
	if o.Model != nil {
		w.Server, w.Client = NewModel(tb, db, *o.Model)
	}
	return w
}

// Store opens an embedded store in a temporary directory of tb, migrates
// it and makes a blob directory beside it; the store is closed when the
// test ends.
func Store(tb testing.TB) (*store.DB, *blob.Dir) {
	tb.Helper()
	dir := tb.TempDir()
	db := open(tb, store.Config{Dir: dir})
	blobs, err := blob.NewDir(filepath.Join(dir, "blobs"))
	if err != nil {
		tb.Fatal(err)
	}
	return db, blobs
}

// open opens and migrates a store, closed when the test ends.
func open(tb testing.TB, cfg store.Config) *store.DB {
	tb.Helper()
	ctx := context.Background()
	db, err := store.Open(ctx, cfg)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { db.Close() })
	if err := server.MigrateAll(ctx, db); err != nil {
		tb.Fatal(err)
	}
	return db
}

// ReadFile reads file id of svc as p: its item and content. The test ends
// when p cannot read it.
func ReadFile(tb testing.TB, svc *files.Service, p tenancy.Principal, id string) (filemeta.Item, []byte) {
	tb.Helper()
	info, r, err := svc.Open(context.Background(), p, id)
	if err != nil {
		tb.Fatal(err)
	}
	defer r.Close()
	b, err := io.ReadAll(r)
	if err != nil {
		tb.Fatal(err)
	}
	return info, b
}

// NewModel starts a scripted provider (closed when the test ends) and a
// client on it whose usage is metered into db, as the server meters it
// (server.OpenModels: the price table saved, tenants' limits held).
func NewModel(tb testing.TB, db *store.DB, m Model) (*llmtest.Server, *llm.Client) {
	tb.Helper()
	if len(m.Models) == 0 {
		tb.Fatal("worldtest: a Model needs at least one model")
	}
	if m.Timeout == 0 {
		m.Timeout = 20 * time.Second
	}
	srv := llmtest.New(tb, m.Server...)
	models := make(map[modeluse.Operation][]llm.ModelConfig, len(m.Models))
	for op, list := range m.Models {
		for _, mc := range list {
			if mc.Provider == "" {
				mc.Provider = Provider
			}
			models[op] = append(models[op], mc)
		}
	}
	cfg := llm.Config{
		Providers: []llm.ProviderConfig{{Name: Provider, BaseURL: srv.URL(), Timeout: m.Timeout}},
		Models:    models,
		Retry:     m.Retry,
	}
	client, _, err := server.OpenModels(context.Background(), cfg, billing.Prices{Models: cfg.Prices()}, billing.BudgetConfig{}, db, nil)
	if err != nil {
		tb.Fatal(err)
	}
	return srv, client
}
