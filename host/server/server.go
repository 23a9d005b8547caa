// Package server assembles agenthost: the one place that builds a serve or
// worker process from its Config, in an order where every service exists
// before anything can call it. New opens and builds everything and starts
// nothing; Run starts the job queue, the plugins' warm-up, the listeners and
// the periodic work, and serves until its context ends; Close releases what
// New opened, in reverse.
//
// The host capabilities (host/builtin) that plugins call are bound in New,
// once, before Run starts anything that could call them. The plugin host
// itself has to exist before them (the extractors, and so the ingester, the
// job kinds, the queue and the file service the capabilities reach, are
// built over it): that cycle is broken by binding, not by ordering, and Run
// refuses to start with a capability unbound.
package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/agenthost/agenthost/host/actions"
	"github.com/agenthost/agenthost/host/agent"
	"github.com/agenthost/agenthost/host/api"
	"github.com/agenthost/agenthost/host/audit"
	"github.com/agenthost/agenthost/host/background"
	"github.com/agenthost/agenthost/host/background/runjob"
	"github.com/agenthost/agenthost/host/billing"
	"github.com/agenthost/agenthost/host/builtin"
	"github.com/agenthost/agenthost/host/connections"
	"github.com/agenthost/agenthost/host/datasources"
	"github.com/agenthost/agenthost/host/datasources/syncjob"
	"github.com/agenthost/agenthost/host/egress"
	"github.com/agenthost/agenthost/host/files"
	"github.com/agenthost/agenthost/host/indexing"
	"github.com/agenthost/agenthost/host/installed"
	"github.com/agenthost/agenthost/host/jobs"
	"github.com/agenthost/agenthost/host/knowledge"
	"github.com/agenthost/agenthost/host/knowledge/agentcontext"
	"github.com/agenthost/agenthost/host/knowledge/extract"
	"github.com/agenthost/agenthost/host/knowledge/ingest"
	"github.com/agenthost/agenthost/host/knowledge/ocr"
	"github.com/agenthost/agenthost/host/knowledge/ondemand"
	"github.com/agenthost/agenthost/host/knowledge/search"
	"github.com/agenthost/agenthost/host/knowledge/unlock"
	"github.com/agenthost/agenthost/host/llm"
	"github.com/agenthost/agenthost/host/llm/modeluse"
	"github.com/agenthost/agenthost/host/mcpserver"
	"github.com/agenthost/agenthost/host/notifications"
	"github.com/agenthost/agenthost/host/oauthserver"
	"github.com/agenthost/agenthost/host/passkey"
	"github.com/agenthost/agenthost/host/rounds"
	"github.com/agenthost/agenthost/host/scim"
	"github.com/agenthost/agenthost/host/signin"
	"github.com/agenthost/agenthost/host/store"
	"github.com/agenthost/agenthost/host/telemetry"
	"github.com/agenthost/agenthost/host/tools"
	"github.com/agenthost/agenthost/host/wasm"
	"github.com/agenthost/agenthost/host/webui"
	"github.com/agenthost/agenthost/host/workflows"
)

// Server is one agenthost process's services, built by New.
type Server struct {
	cfg    Config
	logger *slog.Logger
	env    envSettings

	// closers release what New opened, in reverse order (Close);
	// serveClosers serve's services, before the queue stops.
	closers      []func()
	serveClosers []func()
	// ctx is New's context without its cancellation, for closing.
	ctx context.Context

	stop   *shutdown // serve: bounds the stop
	db     *store.DB
	host   *wasm.Host
	caps   *builtin.Capabilities
	tel    *telemetry.Telemetry
	queue  *jobs.Queue
	kinds  *jobs.Registry
	model  *llm.Client
	runner *rounds.Service
	// background and dataSources work the runjob and syncjob queues; the
	// job kinds are registered (before the queue exists) with getters of
	// these fields, which New sets before it returns and Run checks.
	background  *background.Service
	dataSources *datasources.Service
	broker      *workflows.Broker
	app         *api.Server
	mcpDeps     mcpserver.Deps

	handOff func()
	// warmed is closed when the plugins' warm-up ends; nil before Run starts it.
	warmed     chan struct{}
	listened   chan struct{} // closed when event listening ends; nil before Run
	stopListen context.CancelFunc
	started    bool // the queue started
	closeOnce  sync.Once
}

// New builds the server of cfg. It opens the database (migrating it as
// cfg says), the plugin host and every service, binds the host
// capabilities, and starts nothing: no job is worked, no plugin compiled
// and nothing listens until Run. On an error everything opened is closed.
// A configuration that does not read (a variable, a key of the file) is
// refused before anything is opened, naming the setting and the value.
func New(ctx context.Context, cfg Config) (_ *Server, err error) {
	if cfg.Logger == nil {
		return nil, errors.New("server: Config.Logger is required")
	}
	if cfg.Env == nil {
		cfg.Env = func(string) string { return "" }
	}
	if cfg.StopTimeout <= 0 {
		cfg.StopTimeout = 30 * time.Second
	}
	s := &Server{cfg: cfg, logger: cfg.Logger, caps: builtin.NewCapabilities(), ctx: context.WithoutCancel(ctx)}
	defer func() {
		if err != nil {
			s.Close()
		}
	}()
	logger := cfg.Logger
	if s.env, err = readEnv(cfg.Role, cfg.Env); err != nil {
		return nil, fmt.Errorf("%s: refusing to start:\n%w", cfg.Role, err)
	}
	// The model configuration is read before anything is opened: a wrong
	// value is refused with no data directory made.
	modelCfg, err := llm.Resolve(cfg.File.LLM, cfg.File.Path, cfg.Env)
	if err != nil {
		return nil, err
	}
	prices := billing.Prices{Models: modelCfg.Prices(), PluginPerHour: cfg.Billing.PluginPerHour}
	objectStorage, err := cfg.File.ObjectStorageConfig(cfg.Env)
	if err != nil {
		return nil, err
	}
	var signInCfg signin.Config
	if cfg.File.HasSignIn {
		if signInCfg, err = signin.Resolve(cfg.File.SignIn, cfg.File.Path, cfg.Env); err != nil {
			return nil, err
		}
	}
	if cfg.Role == Serve && cfg.ShutdownTimeout <= 0 {
		return nil, fmt.Errorf("serve: -shutdown-timeout must be positive")
	}
	// webSearch's search API and sqlQuery's databases (docs/configuration.md).
	closeTools, err := connectToolServices(cfg.File, cfg.Env, s.caps, cfg.Plugins.Egress, logger)
	if err != nil {
		return nil, err
	}
	s.closers = append(s.closers, closeTools)
	if cfg.Role == Serve {
		exit, stderr := cfg.Exit, cfg.Stderr
		if exit == nil {
			exit = os.Exit
		}
		if stderr == nil {
			stderr = io.Discard
		}
		s.stop = watchShutdown(ctx, cfg.ShutdownTimeout, stderr, exit)
		s.closers = append(s.closers, s.stop.Disarm)
		context.AfterFunc(ctx, func() {
			logger.Info("stopping", "deadline", cfg.ShutdownTimeout.String(), "hint", "a second signal ends the process at once")
		})
		if err := privateDataDir(cfg.DataDir, logger); err != nil {
			return nil, err
		}
	}
	storeCfg := cfg.Store
	storeCfg.Logger = logger
	if s.db, err = store.Open(ctx, storeCfg); err != nil {
		return nil, err
	}
	s.closers = append(s.closers, func() { s.db.Close() })
	db := s.db
	if err := PrepareSchema(ctx, db, cfg.Migrate); err != nil {
		return nil, err
	}
	if s.host, err = openPlugins(ctx, cfg, s.caps, logger); err != nil {
		return nil, err
	}
	s.closers = append(s.closers, s.closeHost)
	host := s.host
	// Plugins installed through the API (kept under the data directory)
	// load with the same checks as the others; what they change is in the
	// tenants' audit log (host/audit).
	auditLog := audit.NewLog(db, logger)
	opts := installed.Options{Audit: db}
	if cfg.Role == Serve {
		opts = installed.Options{MayWiden: cfg.UpgradesMayWiden, Audit: db, Tenants: auditLog}
	}
	installs, err := installed.Open(ctx, filepath.Join(cfg.DataDir, "plugins"), host, logger, opts)
	if err != nil {
		return nil, err
	}
	if ctx.Err() != nil {
		return nil, ctx.Err() // stopped during start-up
	}
	extractors := extract.New(host).WithChoice(cfg.Extractors).WithLogger(logger)
	if err := extractors.Check(); err != nil {
		return nil, fmt.Errorf("refusing the operator's choice of extractors: %w", err)
	}
	blobs, err := OpenBlobs(ctx, db, cfg.DataDir, objectStorage, logger)
	if err != nil {
		return nil, err
	}
	model, meter, err := OpenModels(ctx, modelCfg, prices, cfg.Billing.Budget, db, logger)
	if err != nil {
		return nil, err
	}
	s.model = model
	extractors.WithMeter(meter) // every extractor run is a transaction
	// Large PDFs are pre-scanned at upload; their pages are extracted when read.
	// Containers (ZIP, TAR, GZ) are resolved by the containers plugin; their
	// inner files are indexed one by one.
	ingester := ingest.New(db, blobs, extractors, logger).WithSmartPDF(ingest.DefaultSmartPDF).
		WithContainers(extractors.Containers(), db, blobs)
	if model.Configured(modeluse.OpEmbedding) {
		ingester.WithEmbedder(model)
	}
	// One id names this process among the hosts: in the job queue's
	// heartbeats, on the rounds it runs, and on its spans.
	hostID := jobs.NewHostID()
	if s.tel, err = telemetry.New(ctx, telemetry.Config{OTLPEndpoint: cfg.Telemetry.OTLPEndpoint, InstanceID: hostID}); err != nil {
		return nil, err
	}
	if cfg.Telemetry.OTLPEndpoint != "" {
		logger.Info("exporting trace spans", "endpoint", cfg.Telemetry.OTLPEndpoint, "instance", hostID)
	}
	s.closers = append(s.closers, s.shutdownTelemetry)
	tel := s.tel
	if cfg.Role == Serve {
		ingester.WithPhaseObserver(tel.ObserveIngestPhase)
	}
	// Pages of large PDFs are read on demand by the knowledge capability,
	// and the rest extracted in the background by the queue. OCR calls the
	// model capability for the file's uploader.
	reader := ondemand.NewReader(db, blobs, extractors).WithEmbedder(embedderOf(model), logger)
	ocrRunner := ocr.New(db, blobs, extractors, model).WithEmbedder(embedderOf(model), logger)
	s.kinds = jobKinds(ingester, reader, ocrRunner, db, NewSweeper(db, blobs, cfg.Sweep, logger), cfg.Sweep.Audit, logger)
	qcfg := jobs.Config{Registry: s.kinds, Work: true, Periodic: PeriodicJobs(cfg.Sweep), Logger: logger,
		TracerProvider: tel.TracerProvider(), HostID: hostID}
	if cfg.Role == Serve {
		// Background jobs run agents and data source syncs reach
		// connectors, so only serve works their queues; their services
		// exist once the agent and the connections do (below), before Run.
		runjob.Register(s.kinds, func() runjob.Worker {
			if s.background != nil {
				return s.background
			}
			return nil
		})
		syncjob.Register(s.kinds, func() syncjob.Worker {
			if s.dataSources != nil {
				return s.dataSources
			}
			return nil
		})
		qcfg.Queues = map[string]int{jobs.DefaultQueue: max(4, runtime.GOMAXPROCS(0)), runjob.QueueName: background.DefaultPerTenant * 2,
			syncjob.QueueName: 2}
	}
	if s.queue, err = jobs.New(db, qcfg); err != nil {
		return nil, err
	}
	collectStore(tel, db, s.queue, logger)
	if cfg.Role == Worker {
		// The worker's plugins reach the models (no workflow: indexing runs
		// outside one); the other capabilities are serve's.
		*s.caps.Models = llm.Capabilities{Client: model, Logger: logger}
		return s, nil
	}
	if err := s.newServe(ctx, installs, extractors, ingester, reader, blobs, meter, auditLog, signInCfg); err != nil {
		return nil, err
	}
	return s, nil
}

// newServe builds serve's services over what New opened: the workflows,
// the agent and its runner, the tools, connections, sign-in and the API.
func (s *Server) newServe(ctx context.Context, installs *installed.Dir, extractors *extract.Set, ingester *ingest.Pipeline,
	reader *ondemand.Reader, blobs files.Blobs, meter *billing.Meter, auditLog *audit.Log, signInCfg signin.Config) error {
	cfg, logger, db, host, model, tel, queue := s.cfg, s.logger, s.db, s.host, s.model, s.tel, s.queue
	indexer := indexing.NewJobIndexer(queue)
	fileSvc := files.NewService(db, blobs, cfg.MaxUpload).WithIndexer(indexer, logger)
	// Other hosts' events reach this one's followers through the broker
	// (NewWorkflows says how).
	var wfSvc *workflows.Service
	wfSvc, s.broker = NewWorkflows(db, logger)
	// The capabilities that reach files and models, bound before anything
	// calls them (Run starts the queue and the warm-up).
	*s.caps.Files = files.Capability{Files: fileSvc, Workflows: wfSvc, Logger: logger}
	*s.caps.Models = llm.Capabilities{Client: model, Workflows: wfSvc, Logger: logger, MaxWorkflowCost: s.env.agentMaxCost}
	var ag *agent.Agent
	if model.Configured(modeluse.OpAgent) {
		ag = agent.New(model, agent.Config{
			MaxRounds: int(s.env.agentMaxRounds),
			MaxCost:   s.env.agentMaxCost,
			Observer:  tel.Observer(),
			// Tool results too large for the model's context are kept as
			// documents of the workflow (docs/agent.md#context-budget).
			Results: resultKeeper{s.caps.Files},
		}, logger)
	} else {
		logger.Warn("no model configured: files, tools and the API run; workflows answer 503 until one is", "how", rounds.ErrNoModel.Error())
	}
	// Every tool call an agent or the API makes is a transaction.
	// Legacy actions' results are mapped and their documents stored as the
	// caller's files (host/actions, docs/plugins.md#legacy-actions-the-actions-kind).
	registry := tools.NewRegistry(actions.NewAdapter(meter.MeteredRunner(host), s.caps.Files, actions.Limits{}).WithVersions(host), nil).WithVersions(host).
		WithDocumentLists(wfSvc). // docList:<label> in a tool's document list: the workflow's documents
		WithAudit(auditLog)       // calls of MCP servers' writing tools
	// External MCP servers an admin added join their workspaces' tool sets
	// (host/mcpclient); their secrets open with AGENTHOST_SECRET_KEY.
	eo := cfg.Plugins.Egress
	mcpAdmin, err := mcpServers(db, cfg.DataDir, s.env.secretKey, cfg.MCPClients, eo, meter, tel, logger)
	if err != nil {
		return err
	}
	s.serveClosers = append(s.serveClosers, func() { mcpAdmin.Manager.Close() })
	registry.WithSources(mcpAdmin.Manager)
	runner := rounds.New(wfSvc, fileSvc, ag, registry, db, rounds.Config{}, logger).WithHosts(roundHosts{DB: db, queue: queue})
	s.runner = runner
	// Calls with external side effects wait for a person where the
	// workspace's policy says ask (the default), for at most the TTL.
	runner.WithApprovals(db, auditLog, s.env.approvalTTL)
	// People are told when their rounds wait for approval, their
	// background jobs end and their data sources' syncs end.
	notes := notifications.New(db, logger)
	runner.WithNotifier(notes)
	if model != nil {
		runner.WithModels(model) // model choice per workspace and conversation
		if s.env.titles && model.Configured(modeluse.OpTitle) {
			runner.WithTitles(model) // conversations named after their first exchange
		}
	}
	// A stop ends no conversation: from the signal on, no new round starts
	// here; running rounds get a quarter of the shutdown's time to finish,
	// and those still running then are handed off (released, with what
	// they streamed and cost) for another host, or this one restarted, to
	// run again at once. The queue's stop comes after (Close).
	s.handOff = sync.OnceFunc(func() {
		wait, cancelWait := s.stop.At(0.25)
		defer cancelWait()
		record, cancelRecord := s.stop.At(0.45)
		defer cancelRecord()
		if n := runner.HandOff(wait, record); n > 0 {
			logger.Warn("rounds still running at the stop were handed off to another host", "count", n)
		}
	})
	s.serveClosers = append(s.serveClosers, func() {
		s.handOff()
		runner.Close()
	})
	bg := background.New(db, runjob.Queue{Q: queue}, runner, wfSvc, background.Config{}, logger).WithNotifier(notes)
	s.background = bg
	s.caps.Background.Service = bg
	// Users' connections to external providers: only with a secret key,
	// which seals their credentials at rest (docs/connectors.md).
	var conns api.Connections
	var dataSources api.DataSources
	connSvc, err := connections.FromEnv(cfg.Env, db, func(o *connections.Options) {
		// A connection is tried when it is made, under the operator's
		// egress settings (-allow-host, -resolve), as connectors' requests are.
		o.Check.AllowPrivateHosts, o.Check.Resolver = eo.AllowPrivateHosts, eo.Resolver
	})
	if err != nil {
		return err
	}
	if connSvc != nil {
		s.caps.Connections.Service, conns = connSvc, connSvc
		s.caps.Connectors.Resolver = &connections.Resolver{Plugins: host, Service: connSvc, Audit: auditLog}
		// Uploads are read from the workspace by the host, bounded by the
		// same setting as uploads into it.
		s.caps.Connectors.Files, s.caps.Connectors.MaxUpload = s.caps.Files, cfg.MaxUpload
		// FTP and SFTP sessions are kept briefly per user and connection:
		// closed when their connection is revoked, and at shutdown.
		s.caps.FileTransfer.Logins = connSvc
		connSvc.OnRevoke(s.caps.FileTransfer.Forget)
		s.serveClosers = append(s.serveClosers, s.caps.FileTransfer.Close)
		// Each reach of the connection tools into a source is a
		// dataSourceAccess event of the agent's workflow.
		s.caps.Connectors.Events = wfSvc
		// Data sources sync through the same resolver into the workspace's
		// files (indexed like uploads); every host ticks the scheduler (Run),
		// and the claim in the database makes each due source one job.
		s.dataSources = datasources.New(db, s.caps.Connectors.Resolver, fileSvc, syncjob.Queue{Q: queue, MaxAttempts: 5}, datasources.Config{}, logger).WithNotifier(notes)
		dataSources = s.dataSources
	} else {
		logger.Info("connections disabled: set AGENTHOST_SECRET_KEY to store users' connections")
	}
	// Search is hybrid when an embedding model is configured, lexical otherwise.
	searcher := search.New(db, embedderOf(model), logger)
	// Every round's context comes from the knowledge store's context builder;
	// the entity cache costs a model call per round with tool
	// results, so it is opt-in: the variable is the host's default, and a
	// workspace may turn it on or off for itself (PUT /workspaces/:ws/settings,
	// kept by the store, which the runner reaches as its tool sets).
	runner.WithKnowledge(rounds.Knowledge{Builder: agentcontext.NewContextBuilder(searcher, db, agentcontext.ContextConfig{}, logger),
		Memory: db, EntityCache: s.env.entityCache, Model: model})
	containers := indexing.NewContainers(db, ingester)
	*s.caps.Knowledge = knowledge.Capability{Files: fileSvc, Documents: wfSvc, Search: searcher,
		Reader:     reader,
		Containers: containers, Folders: fileSvc}
	// The workspace UI signs people in with a session cookie; behind HTTPS
	// (directly or through a proxy) the cookie is marked Secure.
	// Sign-in through identity providers and invitations (signin.go).
	si, err := newSignIn(signInCfg, db, logger)
	if err != nil {
		return err
	}
	ui, err := webui.New(db, webui.Config{Secure: s.env.cookieSecure, Setup: db, SetupTokenTTL: cfg.SetupTokenTTL,
		LogoutURL: si.logoutURL, Audit: auditLog, TokenOwner: db.TokenOwner})
	if err != nil {
		return err
	}
	si.attach(ui)
	signIn, invitations := si.deps()
	// Passkeys need the server's public URL (its host is the WebAuthn RP
	// ID); without one, a loopback address stands for localhost.
	var passkeys api.Passkeys
	if public := publicURL(s.env.publicURL, cfg.Addr); public != "" {
		pk, err := passkey.New(db, passkey.Config{PublicURL: public})
		if err != nil {
			return err
		}
		passkeys = pk
		// An invitation's page offers registering a passkey.
		if inv, ok := invitations.(*signin.Invitations); ok && inv != nil {
			inv.Passkeys = true
		}
	} else {
		logger.Info("passkeys disabled: set AGENTHOST_PUBLIC_URL to the URL people open the server at")
	}
	// MCP clients sign in like people at the API's public URL, where the
	// person's session is (host/oauthserver); without one, API tokens only.
	var oauth *oauthserver.Server
	public := s.env.publicURL
	if public == "" {
		public = signInCfg.PublicURL // where the providers send people back
	}
	if issuer := publicURL(public, cfg.Addr); issuer != "" {
		var providers oauthserver.Providers
		if si.svc != nil {
			providers = si.svc
		}
		oauth = oauthserver.New(oauthserver.Config{Issuer: issuer, Origins: cfg.MCP.Origins}, oauthserver.Deps{
			Store: db, Sessions: ui, Providers: providers, Audit: auditLog, Logger: logger,
			// Client ID metadata documents come from anywhere public, never
			// from a private address, small and fast (SEP-991).
			Documents: egress.NewClient(egress.NewPolicy().WithAllowedHosts("*").WithMethods("GET").
				WithMaxResponseBytes(5 << 10).WithTimeout(5 * time.Second).WithMaxRedirects(0)),
		})
	}
	s.app = api.New(api.Deps{
		SignIn: signIn, Invitations: invitations,
		Passkeys: passkeys, People: db,
		SecondFactor: db,
		Logger:       logger, Plugins: host, UI: ui, Voice: model,
		Auth: db, Tokens: db, MCPClients: db, OAuth: optionalOAuth(oauth), Connections: conns, DataSources: dataSources, Workspaces: db, Files: fileSvc, MaxBody: int(cfg.MaxUpload) + 1<<20,
		Workflows: wfSvc, Workspace: runner, Tools: registry, WorkspaceTools: db,
		Knowledge: searcher, IndexStates: db, Reindexer: indexer, ContainerEntries: db, FileObjects: reader, PagePDFs: extractors, FilePasswords: unlock.New(ingester, db),
		Billing: db, Telemetry: tel, MetricsToken: cfg.Telemetry.MetricsToken, TraceHealth: cfg.Telemetry.TraceHealth, Background: bg,
		Notifications: notes,
		Rate:          api.RateLimit{Counter: db, PerMinute: cfg.TenantRate},
		Model:         func() string { return agentModels(model.Config()) },
		// Plugin installs on the running host.
		PluginAdmins: api.PluginAdmins{Installer: installs, Audit: db, Tenants: cfg.PluginAdmins},
		// External MCP servers of the tenants.
		MCPServers: mcpAdmin,
		Audit:      auditLog, AuditLog: db,
		// SCIM 2.0 provisioning from the tenants' identity providers
		// (docs/scim.md).
		SCIM: scim.New(db, auditLog, logger).Handler(),
	})
	s.mcpDeps = mcpserver.Deps{Logger: logger, Auth: db, Workspaces: db, Tools: registry, Catalog: host,
		Tracer: tel.TracerProvider(), Rate: db, PerMinute: cfg.TenantRate, Policies: runner, Audit: auditLog, Sessions: db, External: db,
		Hosts: cfg.MCP.Hosts, Origins: cfg.MCP.Origins, OAuth: db}
	if oauth != nil {
		s.mcpDeps.Issuer = oauth.Issuer()
	}
	return nil
}

// optionalOAuth is the API's authorization server: nil stays a nil
// interface.
func optionalOAuth(o *oauthserver.Server) api.AuthorizationServer {
	if o == nil {
		return nil
	}
	return o
}

// DB is the server's database (for commands and tests that look into it).
func (s *Server) DB() *store.DB { return s.db }

// Plugins is the server's plugin host.
func (s *Server) Plugins() *wasm.Host { return s.host }

// Kinds are the job kinds this server's queue works, sorted.
func (s *Server) Kinds() []string {
	k := s.kinds.Kinds()
	slices.Sort(k)
	return k
}

// checkBound refuses to run with a capability or a job kind's service
// unbound: New binds them all before it returns, and a call before its
// service exists would be refused at run time instead.
func (s *Server) checkBound() error {
	var missing []string
	if s.caps.Models.Client == nil {
		missing = append(missing, "models capability")
	}
	if s.cfg.Role == Serve {
		if s.caps.Files.Files == nil {
			missing = append(missing, "files capability")
		}
		if s.caps.Knowledge.Files == nil {
			missing = append(missing, "knowledge capability")
		}
		if s.caps.Background.Service == nil || s.background == nil {
			missing = append(missing, "background service")
		}
		if s.app == nil {
			missing = append(missing, "API")
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("server: not bound before Run: %s", strings.Join(missing, ", "))
	}
	return nil
}

// Run starts the job queue, the plugins' warm-up, the listeners and the
// periodic work, and serves until ctx ends (serve: the API on Config.Addr
// and the MCP endpoint; worker: /metrics). A stop during start-up returns
// nil. Close is called after it, whatever it returned.
func (s *Server) Run(ctx context.Context) error {
	if err := s.checkBound(); err != nil {
		return err
	}
	if ctx.Err() != nil {
		return nil
	}
	if s.cfg.Role == Worker {
		return s.runWorker(ctx)
	}
	return s.runServe(ctx)
}

func (s *Server) runWorker(ctx context.Context) error {
	logger := s.logger
	stopMetrics, err := serveMetrics(s.cfg.MetricsAddr, s.tel.Handler(), s.cfg.Telemetry.MetricsToken, logger)
	if err != nil {
		return err
	}
	defer stopMetrics()
	if err := s.queue.Start(ctx); err != nil {
		return err
	}
	logger.Info("agenthost worker running", "database", s.db.Dialect(), "kinds", s.Kinds())
	<-ctx.Done()
	logger.Info("stopping; running jobs may finish", "within", s.cfg.StopTimeout)
	stopCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.cfg.StopTimeout)
	defer cancel()
	return s.queue.Stop(stopCtx)
}

func (s *Server) runServe(ctx context.Context) error {
	cfg, logger, db, runner := s.cfg, s.logger, s.db, s.runner
	if err := s.queue.Start(ctx); err != nil {
		return stopped(ctx, err)
	}
	s.started = true
	// The API serves at once; plugins compile on first use, and in the
	// background one at a time (extractors first, as uploads need them),
	// so start-up never waits for compiling and memory holds one compile
	// at a time. With the machine's compile cache warm (make build) each
	// is a read of verified native code.
	s.warmed = make(chan struct{})
	go func() {
		defer close(s.warmed)
		start := time.Now()
		warmInBackground(ctx, s.host, logger)
		logger.Info("plugins ready", "count", len(s.host.Plugins()), "took", time.Since(start).Round(time.Millisecond))
	}()
	listenCtx, stopListening := context.WithCancel(ctx)
	// Other hosts' word that they released rounds (a rolling deploy)
	// wakes the take-over sweep.
	released := make(chan struct{}, 1)
	s.listened, s.stopListen = make(chan struct{}), stopListening
	go func() {
		defer close(s.listened)
		db.ListenEvents(listenCtx, store.ListenConfig{Advance: s.broker.Advance, Resync: s.broker.Resync, Released: func() {
			select {
			case released <- struct{}{}:
			default: // a sweep is already due: it takes them all
			}
		}})
	}()
	context.AfterFunc(ctx, s.handOff)
	if s.dataSources != nil {
		go s.dataSources.Schedule(ctx, s.env.dataSourceTick)
	}
	// Rounds left running by a stopped host end as failed (resumable). The
	// embedded store has one host; several share PostgreSQL, so there only
	// rounds silent for an hour count as orphaned.
	horizon := time.Now()
	if db.Dialect() == store.Postgres {
		horizon = horizon.Add(-time.Hour)
	}
	if ctx.Err() != nil {
		return nil // stopped during start-up
	}
	if db.Dialect() == store.SQLite {
		// The embedded database has one host: rounds its last run handed
		// off at its stop (or left when it died over a lease ago) go on.
		if n, err := runner.TakeOver(ctx); err != nil && ctx.Err() == nil {
			logger.Error("resuming rounds of the last run", "err", err)
		} else if n > 0 {
			logger.Warn("rounds the last run did not finish run again", "count", n)
		}
	}
	if n, err := runner.RecoverInterrupted(ctx, db, horizon); err != nil && ctx.Err() == nil {
		logger.Error("recovering interrupted workflows", "err", err)
	} else if n > 0 {
		logger.Warn("workflows interrupted by a stop were marked failed", "count", n)
	}
	go expireApprovals(ctx, runner, s.env.approvalSweep, logger)
	if db.Dialect() == store.Postgres {
		// Rounds of a host that died are resumed by a live one within
		// the heartbeat lease.
		go takeOverRounds(ctx, runner, jobs.DefaultHeartbeatInterval, released, logger)
	}
	logger.Info("agenthost listening", "addr", cfg.Addr, "plugins", len(s.host.Plugins()))
	if err := announceSetup(ctx, db, cfg.Addr, logger); err != nil {
		return stopped(ctx, err)
	}
	stopMCP := serveMCP(ctx, logger, cfg.MCP.Addr, s.mcpDeps, cfg.ShutdownTimeout/2)
	defer stopMCP()
	// Requests get half the shutdown's time (and are cancelled after a
	// quarter); requests still running then would have the host closed
	// under them, so the process exits at once instead.
	if err := api.Serve(ctx, s.app, cfg.Addr, cfg.ShutdownTimeout/2); errors.Is(err, api.ErrShutdownTimeout) {
		s.stop.Abandon(err.Error())
		return err
	} else if err != nil {
		return err
	}
	return nil
}

// stopped is err, or nil when ctx ended: a stop during start-up makes a
// step fail with the context's error, and that is a clean stop.
func stopped(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return nil
	}
	return err
}

// Close stops what Run started and releases what New opened, in reverse
// order: rounds handed off, the runner, connections' sessions and MCP
// servers, the event listener, the job queue (running jobs get until half
// the shutdown's time), the spans still buffered, the plugin host and the
// database. It is called once Run returned, or instead of Run.
func (s *Server) Close() {
	s.closeOnce.Do(func() {
		for i := len(s.serveClosers) - 1; i >= 0; i-- {
			s.serveClosers[i]()
		}
		s.stopRunning()
		for i := len(s.closers) - 1; i >= 0; i-- {
			s.closers[i]()
		}
	})
}

// stopRunning stops serve's event listener and job queue, once the
// services above them are closed and before what they use is.
func (s *Server) stopRunning() {
	if s.stopListen != nil {
		s.stopListen()
		<-s.listened // before the database closes
	}
	if !s.started {
		return
	}
	// Running jobs get until half the shutdown's time, then are cancelled
	// and requeued (the queue gives them 5 s more to return).
	stopCtx, cancel := s.stop.At(0.5)
	defer cancel()
	// Jobs that did not return even when cancelled still use the plugin
	// host and the database: closing those under them would crash them.
	if err := s.queue.Stop(stopCtx); err != nil && strings.Contains(err.Error(), "still running") {
		s.stop.Abandon(err.Error())
	} else if err != nil {
		s.logger.Warn("stopping jobs", "err", err)
	}
}

// closeHost closes the plugin host. Closing it while a plugin compiles
// crashes the compile (wazero's shared cache is gone under it); a host
// still warming up when the process stops is left to the exit instead.
func (s *Server) closeHost() {
	if s.warmed != nil {
		select {
		case <-s.warmed:
		default:
			s.logger.Info("plugins still compiling at the stop: exiting without waiting for them")
			return
		}
	}
	s.host.Close(s.ctx)
}

// shutdownTelemetry sends the spans still buffered.
func (s *Server) shutdownTelemetry() {
	sctx, cancel := context.WithTimeout(s.ctx, 5*time.Second)
	defer cancel()
	if err := s.tel.Shutdown(sctx); err != nil {
		s.logger.Warn("exporting the last trace spans", "err", err)
	}
}
