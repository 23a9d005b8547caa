package api_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"log/slog"
	"net"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agenthost/agenthost/host/agent"
	"github.com/agenthost/agenthost/host/api"
	"github.com/agenthost/agenthost/host/audit"
	"github.com/agenthost/agenthost/host/background"
	"github.com/agenthost/agenthost/host/background/runjob"
	"github.com/agenthost/agenthost/host/billing"
	"github.com/agenthost/agenthost/host/blob"
	"github.com/agenthost/agenthost/host/connections"
	"github.com/agenthost/agenthost/host/datasources"
	"github.com/agenthost/agenthost/host/datasources/syncjob"
	"github.com/agenthost/agenthost/host/files"
	"github.com/agenthost/agenthost/host/jobs"
	"github.com/agenthost/agenthost/host/knowledge/extract"
	"github.com/agenthost/agenthost/host/knowledge/ingest"
	"github.com/agenthost/agenthost/host/knowledge/ondemand"
	"github.com/agenthost/agenthost/host/knowledge/search"
	"github.com/agenthost/agenthost/host/knowledge/unlock"
	"github.com/agenthost/agenthost/host/llm"
	"github.com/agenthost/agenthost/host/llm/llmtest"
	"github.com/agenthost/agenthost/host/llm/modeluse"
	"github.com/agenthost/agenthost/host/mcpclient"
	"github.com/agenthost/agenthost/host/money"
	"github.com/agenthost/agenthost/host/notifications"
	"github.com/agenthost/agenthost/host/oauthserver"
	"github.com/agenthost/agenthost/host/passkey"
	"github.com/agenthost/agenthost/host/rounds"
	"github.com/agenthost/agenthost/host/scim"
	"github.com/agenthost/agenthost/host/secrets"
	"github.com/agenthost/agenthost/host/signin"
	"github.com/agenthost/agenthost/host/store"
	"github.com/agenthost/agenthost/host/telemetry"
	"github.com/agenthost/agenthost/host/tenancy"
	"github.com/agenthost/agenthost/host/tools"
	"github.com/agenthost/agenthost/host/wasm"
	"github.com/agenthost/agenthost/host/wasm/wasmtest"
	"github.com/agenthost/agenthost/host/webui"
	"github.com/agenthost/agenthost/host/workflows"
)

// testServer is the whole API on a real listener over the embedded store,
// real test plugins (notebook, echo) and a scripted model server, with
// users: alice and bob (members of A), carol (member of B, same tenant),
// victor (viewer of A).
type testServer struct {
	app                                  *api.Server
	base, alice, bob, carol, victor, wsA string
	model                                *llmtest.Server
	ws                                   *rounds.Service
	wf                                   *workflows.Service
	db                                   *store.DB
	tel                                  *telemetry.Telemetry
	deps                                 api.Deps
	// reindexes records the re-indexes the server queued (reindex_test.go).
	reindexes *queuedReindexes
}

// secondHost serves the same services on a second listener, as a second
// host on the same database would, and returns its API base URL.
func (ts testServer) secondHost(t *testing.T) string {
	t.Helper()
	app := api.New(ts.deps)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go app.Listener(ln)
	t.Cleanup(func() { app.Shutdown() })
	return "http://" + ln.Addr().String() + "/api/v1"
}

// serverOptions vary the model the server's agent uses.
type serverOptions struct {
	model llm.ModelConfig
	// more are agent models after model (provider "test"), for the
	// conversation's model choice.
	more    []llm.ModelConfig
	llmOpts []llmtest.Option
	agent   agent.Config
	// timeouts of the HTTP server (zero: the defaults)
	timeouts api.Timeouts
	// logger of the workspace service (nil: discarded)
	logger *slog.Logger
	// pluginPerHour, when set, meters tool calls as transactions at this
	// price (the registry's runner is billing's metered runner, as in serve).
	pluginPerHour *money.Amount
	// otlp is the OTLP/HTTP endpoint spans are exported to ("" none).
	otlp string
	// ratePerMinute bounds each tenant's requests that start work.
	ratePerMinute int64
	// connectors, when set, loads the Jira connector for data sources, its
	// connection capability reaching providers by these egress options.
	connectors *wasm.EgressOptions
}

var (
	// plugins is the test plugins' host, built once for every test here.
	plugins = wasmtest.NewShared("notebook", "echo")
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

	pluginHost := plugins.Host(t)
	ts.model = llmtest.New(t, o.llmOpts...)
	if o.model.Model == "" {
		o.model.Model = "scripted"
	}
	o.model.Provider = "test"
	cfg := llm.Config{
		Providers: []llm.ProviderConfig{{Name: "test", BaseURL: ts.model.URL(), Timeout: 10 * time.Second}},
		Models: map[modeluse.Operation][]llm.ModelConfig{modeluse.OpAgent: append([]llm.ModelConfig{o.model}, o.more...),
			modeluse.OpTranscription: {{Provider: "test", Model: "whisper-1"}}, modeluse.OpSpeech: {{Provider: "test", Model: "tts-1"}}},
		Retry: llm.RetryConfig{Attempts: 1},
	}
	prices := billing.Prices{Models: cfg.Prices()}
	var runner billing.Runner = pluginHost
	if o.pluginPerHour != nil {
		prices.PluginPerHour = *o.pluginPerHour
	}
	meter := billing.NewMeter(db, prices, nil)
	if o.pluginPerHour != nil {
		runner = meter.MeteredRunner(pluginHost)
	}
	registry := tools.NewRegistry(runner, map[string][]string{"core": {"lookup", "writeNote", "echo"}})
	// External MCP servers join the tool sets as in serve.
	sealer, err := mcpclient.NewSealer(base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{7}, 32)))
	if err != nil {
		t.Fatal(err)
	}
	// The tests' MCP servers listen on loopback, which serve's transport refuses.
	mcp, err := mcpclient.New(db, mcpclient.Options{DataDir: dir, Sealer: sealer, Meter: meter, HTTPTransport: http.DefaultTransport})
	if err != nil {
		t.Fatal(err)
	}
	registry.WithSources(mcp).WithAudit(audit.NewLog(db, nil))
	client, err := llm.New(cfg, meter, nil)
	if err != nil {
		t.Fatal(err)
	}
	ts.db = db
	fileSvc := files.NewService(db, blobs, 1<<20)
	wf := workflows.NewService(db, workflows.NewBroker(db, workflows.BrokerConfig{Interval: 200 * time.Millisecond}), nil)
	ts.wf = wf
	tel, err := telemetry.New(ctx, telemetry.Config{OTLPEndpoint: o.otlp})
	if err != nil {
		t.Fatal(err)
	}
	tel.CollectStore(db, nil, nil)
	ts.tel = tel
	o.agent.Observer = tel.Observer()
	ts.ws = rounds.New(wf, fileSvc, agent.New(client, o.agent, nil), registry, db, rounds.Config{MaxPromptBytes: 4096}, o.logger).WithModels(client)
	// Background jobs on a real queue over the same database.
	if err := jobs.Migrate(ctx, db); err != nil {
		t.Fatal(err)
	}
	var bg atomic.Pointer[background.Service]
	kinds := jobs.NewRegistry()
	runjob.Register(kinds, func() runjob.Worker {
		if s := bg.Load(); s != nil {
			return s
		}
		return nil
	})
	var dsSvc atomic.Pointer[datasources.Service]
	syncjob.Register(kinds, func() syncjob.Worker {
		if s := dsSvc.Load(); s != nil {
			return s
		}
		return nil
	})
	queue, err := jobs.New(db, jobs.Config{Registry: kinds, Work: true, Queues: map[string]int{runjob.QueueName: 2, syncjob.QueueName: 1}})
	if err != nil {
		t.Fatal(err)
	}
	notes := notifications.New(db, nil)
	ts.ws.WithNotifier(notes)
	bg.Store(background.New(db, runjob.Queue{Q: queue}, ts.ws, wf, background.Config{}, nil).WithNotifier(notes))
	if err := queue.Start(ctx); err != nil {
		t.Fatal(err)
	}
	ui, err := webui.New(db, webui.Config{Audit: audit.NewLog(db, nil), TokenOwner: db.TokenOwner})
	if err != nil {
		t.Fatal(err)
	}
	connSealer, err := secrets.NewSealer(bytes.Repeat([]byte{9}, 32))
	if err != nil {
		t.Fatal(err)
	}
	connSvc, err := connections.New(connections.Options{Store: db, Sealer: connSealer, Providers: connections.DefaultProviders()})
	if err != nil {
		t.Fatal(err)
	}
	// Data sources sync through the same queue, with the Jira connector
	// when the test asks for it.
	var connectors connections.Plugins = pluginHost
	if o.connectors != nil {
		connectors = wasmtest.HostWith(t, []wasm.Capability{(&connections.Capability{Service: connSvc, Egress: *o.connectors}).Wasm()}, "jira")
	}
	dsSvc.Store(datasources.New(db, &connections.Resolver{Plugins: connectors, Service: connSvc}, fileSvc, syncjob.Queue{Q: queue, MaxAttempts: 2}, datasources.Config{}, nil).WithNotifier(notes))
	ts.deps = api.Deps{Logger: slog.New(slog.DiscardHandler), Plugins: pluginHost, Ready: func() error { return nil },
		// Invitations as serve has them without providers: links to copy.
		Invitations: signin.NewInvitations(db, nil, nil, signin.Config{}),
		UI:          ui, Voice: client, Auth: db, Tokens: db, MCPClients: db, OAuth: oauthserver.New(oauthserver.Config{Issuer: "http://127.0.0.1"}, oauthserver.Deps{Store: db, Sessions: ui}), Connections: connSvc, Workspaces: db, Files: fileSvc, MaxBody: 2 << 20, Timeouts: o.timeouts,
		Workflows: wf, Workspace: ts.ws, Tools: registry, WorkspaceTools: db,
		Knowledge: search.New(db, nil, nil), IndexStates: db, ContainerEntries: db, Billing: db, Telemetry: tel, Background: bg.Load()}
	ts.deps.DataSources = dsSvc.Load()
	ts.deps.Notifications = notes
	// Passwords index with the test plugins (no PDF extractor among them:
	// the route's refusals are tested here, decryption in cmd/agenthost).
	ts.deps.FilePasswords = unlock.New(ingest.New(db, blobs, extract.New(pluginHost), nil), db)
	ts.deps.FileObjects = ondemand.NewReader(db, blobs, extract.New(pluginHost))
	ts.deps.PagePDFs = extract.New(pluginHost)
	ts.deps.Rate = api.RateLimit{Counter: db, PerMinute: o.ratePerMinute}
	ts.deps.MCPServers = mcpclient.Admin{Store: db, Sealer: sealer, Manager: mcp}
	ts.deps.Audit, ts.deps.AuditLog = audit.NewLog(db, nil), db
	ts.deps.SCIM = scim.New(db, ts.deps.Audit, nil).Handler()
	pk, err := passkey.New(db, passkey.Config{PublicURL: "http://localhost"})
	if err != nil {
		t.Fatal(err)
	}
	ts.deps.Passkeys, ts.deps.People, ts.deps.SecondFactor = pk, db, db
	ts.reindexes = &queuedReindexes{}
	ts.deps.Reindexer = ts.reindexes
	ts.app = api.New(ts.deps)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go ts.app.Listener(ln)
	t.Cleanup(func() {
		queue.Stop(context.Background())
		ts.ws.Close()
		ts.app.Shutdown()
		mcp.Close()
		tel.Shutdown(context.Background())
		db.Close()
	})
	ts.base = "http://" + ln.Addr().String() + "/api/v1"
	return ts
}
