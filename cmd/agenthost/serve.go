package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agenthost/agenthost/host/actions"
	"github.com/agenthost/agenthost/host/agent"
	"github.com/agenthost/agenthost/host/api"
	"github.com/agenthost/agenthost/host/audit"
	"github.com/agenthost/agenthost/host/background"
	"github.com/agenthost/agenthost/host/background/runjob"
	"github.com/agenthost/agenthost/host/connections"
	"github.com/agenthost/agenthost/host/datasources"
	"github.com/agenthost/agenthost/host/datasources/syncjob"
	"github.com/agenthost/agenthost/host/files"
	"github.com/agenthost/agenthost/host/indexing"
	"github.com/agenthost/agenthost/host/installed"
	"github.com/agenthost/agenthost/host/jobs"
	"github.com/agenthost/agenthost/host/knowledge"
	"github.com/agenthost/agenthost/host/llm"
	"github.com/agenthost/agenthost/host/mcpserver"
	"github.com/agenthost/agenthost/host/passkey"
	"github.com/agenthost/agenthost/host/scim"
	"github.com/agenthost/agenthost/host/signin"
	"github.com/agenthost/agenthost/host/store"
	"github.com/agenthost/agenthost/host/tools"
	"github.com/agenthost/agenthost/host/wasm"
	"github.com/agenthost/agenthost/host/wasm/manifest"
	"github.com/agenthost/agenthost/host/webui"
	"github.com/agenthost/agenthost/host/workflows"
	"github.com/agenthost/agenthost/host/workspace"
)

// serveCmd runs the HTTP server with the built-in plugins and any third-party
// plugins found in -plugins.
func serveCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := fs.String("addr", envOr("AGENTHOST_ADDR", "127.0.0.1:8080"), "listen address")
	mf := addMCPFlags(fs)
	sf := addStorageFlags(fs)
	data := sf.data
	migrate := fs.Bool("migrate", false, "apply pending PostgreSQL migrations at start-up (the embedded database always is)")
	configPath := fs.String("config", envOr("AGENTHOST_CONFIG", ""), "configuration file (YAML or JSON; see docs/configuration.md); environment variables override it")
	tenantRate := fs.Int64("tenant-rate", envInt64("AGENTHOST_TENANT_RATE", 0),
		"requests that start work (workflows, background jobs, tool calls, uploads) each tenant may make per minute, over all hosts sharing the database; 0: no limit")
	maxUpload := sizeFlag(fs, "max-upload", envSize("AGENTHOST_MAX_UPLOAD", files.DefaultMaxUpload), "largest accepted upload: bytes, or with a unit (512MB, 1GiB)")
	pf := addPluginFlags(fs)
	var pluginAdmins stringList
	fs.Var(&pluginAdmins, "plugin-admins", "tenant `ID` whose admins may install, upgrade and remove plugins on the running host (repeatable; none: nobody)")
	mayWiden := fs.Bool("plugin-upgrades-may-widen", envBool("AGENTHOST_PLUGIN_UPGRADES_MAY_WIDEN", false),
		"let a plugin upgrade widen the plugin (higher limits, tools, write access, capabilities, hosts) without the admin confirming it; still logged and recorded")
	shutdownTimeout := fs.Duration("shutdown-timeout", envDuration("AGENTHOST_SHUTDOWN_TIMEOUT", 10*time.Second),
		"how long a stop (SIGINT, SIGTERM) may take: requests still running after a quarter of it are cancelled, and at its end the process exits whatever still runs")
	ef := addExtractorFlags(fs)
	bf := addBillingFlags(fs)
	tf := addTelemetryFlags(fs)
	mcpCommands := addMCPCommandFlag(fs)
	keyFile := addSecretKeyFileFlag(fs)
	sw := addSweepFlags(fs)
	if ok, err := parseArgs(fs, args); !ok {
		return err
	}
	if err := checkSettings("serve", *configPath); err != nil {
		return err
	}
	// Secrets are read from a copy of the environment taken now: the
	// process's own loses them, and the process becomes undumpable, before
	// anything (a stdio MCP server) is started.
	env, err := hideSecrets(*keyFile, *configPath)
	if err != nil {
		return err
	}
	// The model configuration is read before anything is opened: a wrong
	// path or value is refused with no data directory made.
	modelCfg, err := llm.LoadConfig(*configPath, env)
	if err != nil {
		return err
	}
	prices, err := bf.prices(modelCfg)
	if err != nil {
		return err
	}
	budget, err := bf.budget()
	if err != nil {
		return err
	}
	objectStorage, err := loadObjectStorage(*configPath, env)
	if err != nil {
		return err
	}
	if *shutdownTimeout <= 0 {
		return fmt.Errorf("serve: -shutdown-timeout must be positive")
	}
	logger := slog.New(slog.NewTextHandler(stderr, nil))
	// webSearch's search API and sqlQuery's databases (docs/configuration.md).
	closeToolServices, err := connectToolServices(*configPath, env, pf, logger)
	if err != nil {
		return err
	}
	defer closeToolServices()
	stop := watchShutdown(ctx, *shutdownTimeout, stderr, os.Exit)
	defer stop.Disarm()
	context.AfterFunc(ctx, func() {
		logger.Info("stopping", "deadline", shutdownTimeout.String(), "hint", "a second signal ends the process at once")
	})

	if err := privateDataDir(*data, logger); err != nil {
		return err
	}
	// A stop during start-up makes a step fail with the context's error:
	// that is a clean stop, not a failure.
	stopped := func(err error) error {
		if ctx.Err() != nil {
			return nil
		}
		return err
	}
	db, err := sf.open(ctx, logger)
	if err != nil {
		return stopped(err)
	}
	defer db.Close()
	if err := prepareSchema(ctx, db, *migrate); err != nil {
		return stopped(err)
	}
	pf.protect = append(pf.protect, *configPath)
	host, err := pf.open(ctx, *data, logger)
	if err != nil {
		return stopped(err)
	}
	// Closing the host while a plugin compiles crashes the compile (wazero's
	// shared cache is gone under it); a host still warming up when the
	// process stops is left to the exit instead.
	var warmed chan struct{} // closed when the warm-up ends; nil before it starts
	defer func() {
		if warmed != nil {
			select {
			case <-warmed:
			default:
				logger.Info("plugins still compiling at the stop: exiting without waiting for them")
				return
			}
		}
		host.Close(context.WithoutCancel(ctx))
	}()
	// Plugins installed through the API (kept under the data directory)
	// load with the same checks as the others.
	// The tenants' audit log (host/audit): what the API, the tools and
	// the installs change is recorded there.
	auditLog := audit.NewLog(db, logger)
	installs, err := installed.Open(ctx, filepath.Join(*data, "plugins"), host, logger, installed.Options{MayWiden: *mayWiden, Audit: db, Tenants: auditLog})
	if err != nil {
		return err
	}
	if ctx.Err() != nil {
		return nil // stopped during start-up
	}
	extractors, err := ef.open(host, logger)
	if err != nil {
		return stopped(err)
	}
	blobs, err := sf.blobs(ctx, db, objectStorage, logger)
	if err != nil {
		return err
	}
	model, meter, err := openModels(ctx, modelCfg, prices, budget, db, logger)
	if err != nil {
		return err
	}
	extractors.WithMeter(meter) // every extractor run is a transaction
	// Large PDFs are pre-scanned at upload; their pages are extracted when read.
	// Containers (ZIP, TAR, GZ) are resolved by the containers plugin; their
	// inner files are indexed one by one.
	ingester := knowledge.NewIngester(db, blobs, extractors, logger).WithSmartPDF(knowledge.DefaultSmartPDF).
		WithContainers(extractors.Containers(), db, blobs)
	if model.Configured(llm.OpEmbedding) {
		ingester.WithEmbedder(model)
	}
	// One id names this process among the hosts: in the job queue's
	// heartbeats, on the rounds it runs, and on its spans.
	hostID := jobs.NewHostID()
	tel, err := tf.open(ctx, hostID, logger)
	if err != nil {
		return err
	}
	ingester.WithPhaseObserver(tel.ObserveIngestPhase)
	defer func() {
		// Spans still buffered are sent before the process ends.
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		if err := tel.Shutdown(sctx); err != nil {
			logger.Warn("exporting the last trace spans", "err", err)
		}
	}()
	// Background jobs run agents, so only serve works their queue; the
	// service that runs them exists once the agent does (below).
	var bgSvc atomic.Pointer[background.Service]
	// Pages of large PDFs are read on demand by the knowledge capability,
	// and the rest extracted in the background by the queue.
	reader := knowledge.NewReader(db, blobs, extractors).WithEmbedder(embedderOf(model), logger)
	ocr := knowledge.NewOCR(db, blobs, extractors, model).WithEmbedder(embedderOf(model), logger)
	kinds := jobKinds(ingester, reader, ocr, db, sw.sweeper(db, blobs, logger), *sw.audit, logger)
	runjob.Register(kinds, func() runjob.Worker {
		if s := bgSvc.Load(); s != nil {
			return s
		}
		return nil
	})
	// Data source syncs reach connectors, so only serve works their queue
	// too; the service exists once connections do (below).
	var dsSvc atomic.Pointer[datasources.Service]
	syncjob.Register(kinds, func() syncjob.Worker {
		if s := dsSvc.Load(); s != nil {
			return s
		}
		return nil
	})
	queue, err := jobs.New(db, jobs.Config{Registry: kinds, Work: true, Periodic: periodicJobs(sw), Logger: logger,
		TracerProvider: tel.TracerProvider(), HostID: hostID,
		Queues: map[string]int{jobs.DefaultQueue: max(4, runtime.GOMAXPROCS(0)), runjob.QueueName: background.DefaultPerTenant * 2,
			syncjob.QueueName: 2}})
	if err != nil {
		return err
	}
	collectStore(tel, db, queue, logger)
	if err := queue.Start(ctx); err != nil {
		return err
	}
	defer func() {
		// Running jobs get until half the shutdown's time, then are cancelled
		// and requeued (the queue gives them 5 s more to return).
		stopCtx, cancel := stop.At(0.5)
		defer cancel()
		// Jobs that did not return even when cancelled still use the plugin
		// host and the database: closing those under them would crash them.
		if err := queue.Stop(stopCtx); err != nil && strings.Contains(err.Error(), "still running") {
			stop.Abandon(err.Error())
		} else if err != nil {
			logger.Warn("stopping jobs", "err", err)
		}
	}()
	fileSvc := files.NewService(db, blobs, *maxUpload).WithIndexer(indexing.NewJobIndexer(queue), logger)

	// The API serves at once; plugins compile on first use, and in the
	// background one at a time (extractors first, as uploads need them),
	// so start-up never waits for compiling and memory holds one compile
	// at a time. With the machine's compile cache warm (make build) each
	// is a read of verified native code.
	warmed = make(chan struct{})
	go func() {
		defer close(warmed)
		start := time.Now()
		warmInBackground(ctx, host, logger)
		logger.Info("plugins ready", "count", len(host.Plugins()), "took", time.Since(start).Round(time.Millisecond))
	}()

	var ag *agent.Agent
	if model.Configured(llm.OpAgent) {
		ag = agent.New(model, agent.Config{
			MaxRounds: int(envInt64("AGENTHOST_AGENT_MAX_ROUNDS", 25)),
			MaxCost:   envMoney("AGENTHOST_AGENT_MAX_COST_CHF"),
			Observer:  tel.Observer(),
			// Tool results too large for the model's context are kept as
			// documents of the workflow (docs/agent.md#context-budget).
			Results: resultKeeper{pf.caps.Files},
		}, logger)
	} else {
		logger.Warn("no model configured: files, tools and the API run; workflows answer 503 until one is", "how", workspace.ErrNoModel.Error())
	}
	// Events appended by other hosts sharing PostgreSQL (a stop among them)
	// are announced by LISTEN/NOTIFY within milliseconds; the broker's
	// periodic read of the heads delivers those whose announcement was lost
	// (the listening connection dropped) within its interval.
	brokerCfg := workflows.BrokerConfig{Logger: logger, Announcer: db}
	if db.Dialect() == store.Postgres {
		brokerCfg.Interval = 250 * time.Millisecond
	}
	broker := workflows.NewBroker(db, brokerCfg)
	// A round's writes wait out a database restart instead of losing
	// events or its end (host/workflows/retry.go).
	wfSvc := workflows.NewService(db, broker, logger).WithRetry(store.IsUnavailable)
	listenCtx, stopListening := context.WithCancel(ctx)
	listened := make(chan struct{})
	go func() {
		defer close(listened)
		db.ListenEvents(listenCtx, store.ListenConfig{Advance: broker.Advance, Resync: broker.Resync})
	}()
	defer func() { stopListening(); <-listened }() // before the database closes
	// The host capabilities reach the services from here on; tools called
	// before (none: the API is not listening yet) would be refused.
	*pf.caps.Files = files.Capability{Files: fileSvc, Workflows: wfSvc, Logger: logger}
	*pf.caps.Models = llm.Capabilities{Client: model, Workflows: wfSvc, Logger: logger,
		MaxWorkflowCost: envMoney("AGENTHOST_AGENT_MAX_COST_CHF")}
	// Every tool call an agent or the API makes is a transaction.
	// Legacy actions' results are mapped and their documents stored as the
	// caller's files (host/actions, docs/plugins.md#legacy-actions-the-actions-kind).
	registry := tools.NewRegistry(actions.NewAdapter(meter.MeteredRunner(host), pf.caps.Files, actions.Limits{}).WithVersions(host), nil).WithVersions(host).
		WithDocumentLists(wfSvc). // docList:<label> in a tool's document list: the workflow's documents
		WithAudit(auditLog)       // calls of MCP servers' writing tools
	// External MCP servers an admin added join their workspaces' tool sets
	// (host/mcpclient); their secrets open with AGENTHOST_SECRET_KEY.
	eo, err := pf.egress()
	if err != nil {
		return err
	}
	mcpAdmin, err := mcpServers(db, *data, env("AGENTHOST_SECRET_KEY"), mcpCommands, eo, meter, tel, logger)
	if err != nil {
		return err
	}
	defer mcpAdmin.Manager.Close()
	registry.WithSources(mcpAdmin.Manager)
	runner := workspace.New(wfSvc, fileSvc, ag, registry, db, workspace.Config{}, logger).WithHosts(roundHosts{DB: db, queue: queue})
	// Calls with external side effects wait for a person where the
	// workspace's policy says ask (the default), for at most the TTL.
	runner.WithApprovals(db, auditLog, envDuration("AGENTHOST_APPROVAL_TTL", workspace.DefaultApprovalTTL))
	if model != nil {
		runner.WithModels(model) // model choice per workspace and conversation
	}
	// A stop ends no conversation: from the signal on, no new round starts
	// here; running rounds get a quarter of the shutdown's time to finish,
	// and those still running then are handed off (released, with what
	// they streamed and cost) for another host, or this one restarted, to
	// run again at once. The queue's heartbeat goes after (its defer runs
	// later).
	handOff := sync.OnceFunc(func() {
		wait, cancelWait := stop.At(0.25)
		defer cancelWait()
		record, cancelRecord := stop.At(0.45)
		defer cancelRecord()
		if n := runner.HandOff(wait, record); n > 0 {
			logger.Warn("rounds still running at the stop were handed off to another host", "count", n)
		}
	})
	context.AfterFunc(ctx, handOff)
	defer func() {
		handOff()
		runner.Close()
	}()
	bg := background.New(db, runjob.Queue{Q: queue}, runner, wfSvc, background.Config{}, logger)
	bgSvc.Store(bg)
	pf.caps.Background.Service = bg
	// Users' connections to external providers: only with a secret key,
	// which seals their credentials at rest (docs/connectors.md).
	var conns api.Connections
	var dataSources api.DataSources
	connSvc, err := connections.FromEnv(env, db, func(o *connections.Options) {
		// A connection is tried when it is made, under the operator's
		// egress settings (-allow-host, -resolve), as connectors' requests are.
		o.Check.AllowPrivateHosts, o.Check.Resolver = eo.AllowPrivateHosts, eo.Resolver
	})
	if err != nil {
		return err
	}
	if connSvc != nil {
		pf.caps.Connections.Service, conns = connSvc, connSvc
		pf.caps.Connectors.Resolver = &connections.Resolver{Plugins: host, Service: connSvc, Audit: auditLog}
		// Uploads are read from the workspace by the host, bounded by the
		// same setting as uploads into it.
		pf.caps.Connectors.Files, pf.caps.Connectors.MaxUpload = pf.caps.Files, *maxUpload
		// FTP and SFTP sessions are kept briefly per user and connection:
		// closed when their connection is revoked, and at shutdown.
		pf.caps.FileTransfer.Logins = connSvc
		connSvc.OnRevoke(pf.caps.FileTransfer.Forget)
		defer pf.caps.FileTransfer.Close()
		// Each reach of the connection tools into a source is a
		// dataSourceAccess event of the agent's workflow.
		pf.caps.Connectors.Events = wfSvc
		// Data sources sync through the same resolver into the workspace's
		// files (indexed like uploads); every host ticks the scheduler, and
		// the claim in the database makes each due source one job.
		ds := datasources.New(db, pf.caps.Connectors.Resolver, fileSvc, syncjob.Queue{Q: queue, MaxAttempts: 5}, datasources.Config{}, logger)
		dsSvc.Store(ds)
		dataSources = ds
		go ds.Schedule(ctx, envDuration("AGENTHOST_DATASOURCE_TICK", 30*time.Second))
	} else {
		logger.Info("connections disabled: set AGENTHOST_SECRET_KEY to store users' connections")
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
	go expireApprovals(ctx, runner, envDuration("AGENTHOST_APPROVAL_SWEEP", 10*time.Second), logger)
	if db.Dialect() == store.Postgres {
		// Rounds of a host that died are resumed by a live one within
		// the heartbeat lease.
		go takeOverRounds(ctx, runner, jobs.DefaultHeartbeatInterval, logger)
	}

	// Search is hybrid when an embedding model is configured, lexical otherwise.
	searcher := knowledge.NewSearcher(db, embedderOf(model), logger)
	// Every round's context comes from the knowledge store's context builder;
	// the entity cache costs a model call per round with tool
	// results, so it is opt-in: the variable is the host's default, and a
	// workspace may turn it on or off for itself (PUT /workspaces/:ws/settings,
	// kept by the store, which the runner reaches as its tool sets).
	runner.WithKnowledge(workspace.Knowledge{Builder: knowledge.NewContextBuilder(searcher, db, knowledge.ContextConfig{}, logger),
		Memory: db, EntityCache: envBool("AGENTHOST_AGENT_ENTITY_CACHE", false), Model: model})
	containers := indexing.NewContainers(db, ingester)
	*pf.caps.Knowledge = knowledge.Capability{Files: fileSvc, Documents: wfSvc, Search: searcher,
		Reader:     reader,
		Containers: containers, Folders: fileSvc}
	// The workspace UI signs people in with a session cookie; behind HTTPS
	// (directly or through a proxy) the cookie is marked Secure.
	// Sign-in through identity providers and invitations (signin.go).
	si, err := loadSignIn(*configPath, env, db, logger)
	if err != nil {
		return err
	}
	ui, err := webui.New(db, webui.Config{Secure: envBool("AGENTHOST_COOKIE_SECURE", false), Setup: db, SetupTokenTTL: DefaultTokenTTL,
		LogoutURL: si.logoutURL, Audit: auditLog, TokenOwner: db.TokenOwner})
	if err != nil {
		return err
	}
	si.attach(ui)
	signIn, invitations := si.deps()
	// Passkeys need the server's public URL (its host is the WebAuthn RP
	// ID); without one, a loopback address stands for localhost.
	var passkeys api.Passkeys
	if public := publicURL(*addr); public != "" {
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
	app := api.New(api.Deps{
		SignIn: signIn, Invitations: invitations,
		Passkeys: passkeys, People: db,
		SecondFactor: db,
		Logger:       logger, Plugins: host, UI: ui, Voice: model,
		Auth: db, Tokens: db, Connections: conns, DataSources: dataSources, Workspaces: db, Files: fileSvc, MaxBody: int(*maxUpload) + 1<<20,
		Workflows: wfSvc, Workspace: runner, Tools: registry, WorkspaceTools: db,
		Knowledge: searcher, IndexStates: db, ContainerEntries: db, FileObjects: reader, FilePasswords: knowledge.NewUnlocker(ingester, db),
		Billing: db, Telemetry: tel, MetricsToken: *tf.metricsToken, TraceHealth: *tf.traceHealth, Background: bg,
		Rate:  api.RateLimit{Counter: db, PerMinute: *tenantRate},
		Model: func() string { return agentModels(model.Config()) },
		// Plugin installs on the running host (plugin_installs.go).
		PluginAdmins: api.PluginAdmins{Installer: installs, Audit: db, Tenants: pluginAdmins},
		// External MCP servers of the tenants (admin_mcp.go).
		MCPServers: mcpAdmin,
		Audit:      auditLog, AuditLog: db,
		// SCIM 2.0 provisioning from the tenants' identity providers
		// (docs/scim.md).
		SCIM: scim.New(db, auditLog, logger).Handler(),
	})
	logger.Info("agenthost listening", "addr", *addr, "plugins", len(host.Plugins()))
	if err := announceSetup(ctx, db, *addr, logger); err != nil {
		return err
	}
	stopMCP := mf.serve(ctx, logger, mcpserver.Deps{Logger: logger, Auth: db, Workspaces: db, Tools: registry, Catalog: host,
		Tracer: tel.TracerProvider(), Rate: db, PerMinute: *tenantRate, Policies: runner, Audit: auditLog, Sessions: db}, *shutdownTimeout/2)
	defer stopMCP()
	// Requests get half the shutdown's time (and are cancelled after a
	// quarter); requests still running then would have the host closed
	// under them, so the process exits at once instead.
	if err := api.Serve(ctx, app, *addr, *shutdownTimeout/2); errors.Is(err, api.ErrShutdownTimeout) {
		stop.Abandon(err.Error())
		return err
	} else if err != nil {
		return err
	}
	return nil
}

// publicURL is the server's public URL: AGENTHOST_PUBLIC_URL, or for a
// loopback listen address http://localhost:PORT; "" when neither.
func publicURL(addr string) string {
	if v := strings.TrimRight(os.Getenv("AGENTHOST_PUBLIC_URL"), "/"); v != "" {
		return v
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return ""
	}
	if ip := net.ParseIP(host); host == "localhost" || (ip != nil && ip.IsLoopback()) {
		return "http://localhost:" + port
	}
	return ""
}

// warmInBackground compiles the plugins one after the other, extractors
// first; a plugin a request needs sooner compiles then. A plugin that fails
// answers its calls with the reason; the others go on. Plugins this
// machine compiled before are left to their first use: reading their native
// code takes well under a second, and memory holds only what is used.
func warmInBackground(ctx context.Context, host *wasm.Host, logger *slog.Logger) {
	plugins := host.Plugins()
	sort.SliceStable(plugins, func(i, j int) bool {
		return plugins[i].Manifest().Kind == manifest.KindExtractor && plugins[j].Manifest().Kind != manifest.KindExtractor
	})
	for _, p := range plugins {
		if ctx.Err() != nil {
			return
		}
		if p.Builtin() && p.CompiledBefore() {
			continue
		}
		if err := p.Warm(ctx); err != nil {
			logger.Error("plugin failed to compile or verify", "plugin", p.Name(), "err", err)
		}
	}
}

// agentModels names the agent's fallback chain for the home page ("" when
// none is configured).
func agentModels(cfg llm.Config) string {
	var names []string
	for _, m := range cfg.Models[llm.OpAgent] {
		names = append(names, m.Model)
	}
	return strings.Join(names, ", ")
}

// embedderOf is the embedding model when one is configured: search is then
// hybrid and read pages are embedded; nil otherwise (words only).
func embedderOf(model *llm.Client) knowledge.Embedder {
	if model.Configured(llm.OpEmbedding) {
		return model
	}
	return nil
}

// resultKeeper keeps the agent's oversized tool results through the files
// capability: a file of the caller's workspace, bound to its workflow as a
// document the document tools read by its docItem: reference.
type resultKeeper struct{ files *files.Capability }

func (k resultKeeper) KeepResult(ctx context.Context, tool, name, mimeType string, data []byte) (agent.KeptResult, error) {
	w, err := k.files.Store(ctx, tool, name, mimeType, data, tool+":result")
	if err != nil {
		return agent.KeptResult{}, err
	}
	return agent.KeptResult{Ref: w.DocItem, FileID: w.FileID, Name: w.Name}, nil
}
