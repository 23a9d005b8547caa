package api_test

import (
	"context"
	"log/slog"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/agenthost/agenthost/host/agent"
	"github.com/agenthost/agenthost/host/api"
	"github.com/agenthost/agenthost/host/billing"
	"github.com/agenthost/agenthost/host/blob"
	"github.com/agenthost/agenthost/host/files"
	"github.com/agenthost/agenthost/host/knowledge"
	"github.com/agenthost/agenthost/host/llm"
	"github.com/agenthost/agenthost/host/llm/llmtest"
	"github.com/agenthost/agenthost/host/store"
	"github.com/agenthost/agenthost/host/tenancy"
	"github.com/agenthost/agenthost/host/tools"
	"github.com/agenthost/agenthost/host/wasm"
	"github.com/agenthost/agenthost/host/wasm/wasmtest"
	"github.com/agenthost/agenthost/host/webui"
	"github.com/agenthost/agenthost/host/workflows"
	"github.com/agenthost/agenthost/host/workspace"
)

// testServer is the whole API on a real listener over the embedded store,
// real test plugins (notebook, echo) and a scripted model server, with
// users: alice and bob (members of A), carol (member of B, same tenant),
// victor (viewer of A).
type testServer struct {
	app                                  *api.Server
	base, alice, bob, carol, victor, wsA string
	model                                *llmtest.Server
	ws                                   *workspace.Service
	wf                                   *workflows.Service
	db                                   *store.DB
}

// serverOptions vary the model the server's agent uses.
type serverOptions struct {
	model   llm.ModelConfig
	llmOpts []llmtest.Option
	agent   agent.Config
	// timeouts of the HTTP server (zero: the defaults)
	timeouts api.Timeouts
	// logger of the workspace service (nil: discarded)
	logger *slog.Logger
}

var (
	pluginsOnce sync.Once
	pluginHost  *wasm.Host
)

func server(t testing.TB, opts ...func(*serverOptions)) testServer {
	t.Helper()
	var o serverOptions
	for _, f := range opts {
		f(&o)
	}
	ctx := context.Background()
	dir := t.TempDir()
	db, err := store.Open(ctx, store.Config{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	blobs, err := blob.NewDir(dir + "/blobs")
	if err != nil {
		t.Fatal(err)
	}
	tn, _ := db.CreateTenant(ctx, "Acme")
	a, _ := db.CreateWorkspace(ctx, tenancy.Workspace{TenantID: tn.ID, Name: "A"})
	b, _ := db.CreateWorkspace(ctx, tenancy.Workspace{TenantID: tn.ID, Name: "B"})
	token := func(email string, ws tenancy.Workspace, role tenancy.Role) string {
		u, err := db.CreateUser(ctx, tenancy.User{TenantID: tn.ID, Email: email})
		if err != nil {
			t.Fatal(err)
		}
		if err := db.SetMembership(ctx, tenancy.Membership{WorkspaceID: ws.ID, UserID: u.ID, Role: role}); err != nil {
			t.Fatal(err)
		}
		_, secret, err := db.CreateToken(ctx, u.ID, "test", nil)
		if err != nil {
			t.Fatal(err)
		}
		return secret
	}
	ts := testServer{
		alice: token("alice@acme", a, tenancy.RoleMember), bob: token("bob@acme", a, tenancy.RoleMember),
		carol: token("carol@acme", b, tenancy.RoleMember), victor: token("victor@acme", a, tenancy.RoleViewer), wsA: a.ID,
	}

	pluginsOnce.Do(func() { pluginHost = wasmtest.Host(&testing.T{}, "notebook", "echo") })
	registry := tools.NewRegistry(pluginHost, map[string][]string{"core": {"lookup", "writeNote", "echo"}})
	ts.model = llmtest.New(t, o.llmOpts...)
	if o.model.Model == "" {
		o.model.Model = "scripted"
	}
	o.model.Provider = "test"
	client, err := llm.New(llm.Config{
		Providers: []llm.ProviderConfig{{Name: "test", BaseURL: ts.model.URL(), Timeout: 10 * time.Second}},
		Models: map[llm.Operation][]llm.ModelConfig{llm.OpAgent: {o.model},
			llm.OpTranscription: {{Provider: "test", Model: "whisper-1"}}, llm.OpSpeech: {{Provider: "test", Model: "tts-1"}}},
		Retry: llm.RetryConfig{Attempts: 1},
	}, billing.NewMeter(db), nil)
	if err != nil {
		t.Fatal(err)
	}
	ts.db = db
	fileSvc := files.NewService(db, blobs, 1<<20)
	wf := workflows.NewService(db, workflows.NewBroker(db, workflows.BrokerConfig{Interval: 200 * time.Millisecond}), nil)
	ts.wf = wf
	ts.ws = workspace.New(wf, fileSvc, agent.New(client, o.agent, nil), registry, db, workspace.Config{MaxPromptBytes: 4096}, o.logger)
	ui, err := webui.New(db, webui.Config{})
	if err != nil {
		t.Fatal(err)
	}
	ts.app = api.New(api.Deps{Logger: slog.New(slog.DiscardHandler), Plugins: pluginHost, Ready: func() error { return nil },
		UI: ui, Voice: client, Auth: db, Tokens: db, Workspaces: db, Files: fileSvc, MaxBody: 2 << 20, Timeouts: o.timeouts,
		Workflows: wf, Workspace: ts.ws, Tools: registry, WorkspaceTools: db,
		Knowledge: knowledge.NewSearcher(db, nil, nil), IndexStates: db, ContainerEntries: db})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go ts.app.Listener(ln)
	t.Cleanup(func() {
		ts.ws.Close()
		ts.app.Shutdown()
		db.Close()
	})
	ts.base = "http://" + ln.Addr().String() + "/api/v1"
	return ts
}
