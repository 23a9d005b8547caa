package server

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/agenthost/agenthost/host/agent"
	"github.com/agenthost/agenthost/host/blob"
	"github.com/agenthost/agenthost/host/builtin"
	"github.com/agenthost/agenthost/host/files"
	"github.com/agenthost/agenthost/host/indexing"
	"github.com/agenthost/agenthost/host/jobs"
	"github.com/agenthost/agenthost/host/knowledge/ingest"
	"github.com/agenthost/agenthost/host/knowledge/ocr"
	"github.com/agenthost/agenthost/host/knowledge/ondemand"
	"github.com/agenthost/agenthost/host/knowledge/search"
	"github.com/agenthost/agenthost/host/llm"
	"github.com/agenthost/agenthost/host/llm/modeluse"
	"github.com/agenthost/agenthost/host/mcpclient"
	"github.com/agenthost/agenthost/host/mcpserver"
	"github.com/agenthost/agenthost/host/sqlquery"
	"github.com/agenthost/agenthost/host/store"
	"github.com/agenthost/agenthost/host/sweep"
	"github.com/agenthost/agenthost/host/telemetry"
	"github.com/agenthost/agenthost/host/wasm"
	"github.com/agenthost/agenthost/host/wasm/manifest"
	"github.com/agenthost/agenthost/host/websearch"
)

// MigrateAll applies every migration: ours and the job queue's.
func MigrateAll(ctx context.Context, db *store.DB) error {
	if err := db.Migrate(ctx); err != nil {
		return err
	}
	return jobs.Migrate(ctx, db)
}

// PrepareSchema migrates the embedded database, and PostgreSQL when asked;
// a PostgreSQL database with pending migrations is refused with the command
// that applies them, because several hosts may share it and an operator
// decides when its schema changes.
func PrepareSchema(ctx context.Context, db *store.DB, migratePostgres bool) error {
	if db.Dialect() == store.SQLite || migratePostgres {
		return MigrateAll(ctx, db)
	}
	pending, err := db.Pending(ctx)
	if err != nil {
		return err
	}
	if pending {
		return fmt.Errorf("the PostgreSQL database has pending migrations: run `agenthost migrate -database URL` (or serve -migrate)")
	}
	return nil
}

// OpenBlobs returns the blob backend: the bucket s3 names when object
// storage is configured (File.ObjectStorageConfig), else the one that goes
// with the database: a directory beside the embedded database, or the
// database itself for PostgreSQL, so every host of a cluster reads the same
// bytes. Uploads to S3 and PostgreSQL are staged in DATA/staging.
func OpenBlobs(ctx context.Context, db *store.DB, dataDir string, s3 *blob.S3Config, logger *slog.Logger) (files.Blobs, error) {
	staging := filepath.Join(dataDir, "staging")
	if s3 != nil {
		cfg := *s3
		cfg.StagingDir = staging
		b, err := blob.NewS3(ctx, cfg)
		if err != nil {
			return nil, err
		}
		logger.Info("blobs in object storage", "s3", cfg)
		if where := databaseBlobsLeft(ctx, db, dataDir); where != "" {
			logger.Warn("blobs remain in the database's store: files stored before the move read as not found until `agenthost blobs copy` has copied them; remove them after", "where", where)
		}
		return b, nil
	}
	if db.Dialect() == store.Postgres {
		return blob.NewPostgres(db.Pool(), blob.WithStagingDir(staging)), nil
	}
	return blob.NewDir(filepath.Join(dataDir, "blobs"))
}

// databaseBlobsLeft says where the database's own blob store still holds
// blobs ("" when it holds none, or cannot tell): what an installation that
// moved to object storage has not copied, or not removed yet.
func databaseBlobsLeft(ctx context.Context, db *store.DB, dataDir string) string {
	if db.Dialect() == store.Postgres {
		var any bool
		if err := db.Pool().QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM blobs)`).Scan(&any); err != nil || !any {
			return ""
		}
		return "PostgreSQL table blobs"
	}
	dir := filepath.Join(dataDir, "blobs")
	entries, err := os.ReadDir(dir)
	if err != nil {
		return ""
	}
	for _, e := range entries {
		if e.IsDir() && len(e.Name()) == 2 {
			return dir
		}
	}
	return ""
}

// privateDataDir makes the data directory, or makes an existing one 0700:
// it holds the embedded database and every tenant's files, and stdio MCP
// servers run as another user (nobody) that must not read them.
func privateDataDir(dir string, logger *slog.Logger) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	fi, err := os.Stat(dir)
	if err != nil {
		return err
	}
	if fi.Mode().Perm()&0o077 != 0 {
		if err := os.Chmod(dir, fi.Mode().Perm()&0o700); err != nil {
			return fmt.Errorf("making the data directory private: %w", err)
		}
		logger.Info("data directory made private to the host's user", "dir", dir, "was", fi.Mode().Perm().String())
	}
	return nil
}

// openPlugins makes the plugin host with the built-in plugins and the
// operator's, its capabilities caps; the data directory and the
// configuration file are out of every mount's reach.
func openPlugins(ctx context.Context, cfg Config, caps *builtin.Capabilities, logger *slog.Logger) (*wasm.Host, error) {
	reg, err := wasm.NewRegistry(caps.List(cfg.Plugins.Egress)...)
	if err != nil {
		return nil, err
	}
	protect := []string{cfg.DataDir}
	if cfg.File.Path != "" {
		protect = append(protect, cfg.File.Path)
	}
	host, err := wasm.New(ctx, cfg.Plugins.Wasm.WithLogger(logger).WithCapabilities(reg).WithProtectedPaths(protect...))
	if err != nil {
		return nil, err
	}
	srcs, err := builtin.Sources()
	if err != nil {
		host.Close(ctx)
		return nil, err
	}
	if len(srcs) == 0 {
		logger.Warn("this binary carries no built-in plugins; build it with `make build`")
	}
	// Enabling what this binary does not carry is a mistake to say, not to
	// skip: the operator would wait for tools that never come.
	for _, name := range cfg.Plugins.Enable {
		if !builtin.OptIn(name) || !slices.ContainsFunc(srcs, func(s wasm.Source) bool { return builtin.Name(s) == name }) {
			host.Close(ctx)
			return nil, fmt.Errorf("-enable-plugin %s: this binary carries no opt-in built-in plugin of that name (build it with `make build`)", name)
		}
	}
	for _, s := range srcs {
		if builtin.OptIn(builtin.Name(s)) && !slices.Contains(cfg.Plugins.Enable, builtin.Name(s)) {
			continue
		}
		if _, err := host.Load(ctx, s); err != nil {
			host.Close(ctx)
			return nil, fmt.Errorf("built-in plugin: %w", err)
		}
	}
	if dir := cfg.Plugins.Dir; dir != "" {
		if _, err := host.LoadDir(ctx, dir); err != nil {
			// A refused third-party plugin is reported, not fatal: the rest still serve.
			logger.Error("some plugins were refused", "dir", dir, "err", err)
		}
	}
	return host, nil
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

// jobKinds builds the registry of every kind of job both serve and worker
// work, so that every process knows them: a kind is added with one
// Register line here. (Background runs and data source syncs are serve's
// own, on queues of their own: New registers them.)
func jobKinds(ingester *ingest.Pipeline, reader *ondemand.Reader, ocrRunner *ocr.Runner, db *store.DB, sweeper *sweep.Sweeper, auditRetention time.Duration, logger *slog.Logger) *jobs.Registry {
	reg := jobs.NewRegistry()
	sweep.Register(reg, sweeper)
	sweep.RegisterAudit(reg, db, auditRetention, logger)
	indexing.RegisterJobs(reg, ingester, db)
	indexing.RegisterCompletion(reg, reader, db, db)
	indexing.RegisterOCR(reg, ocrRunner, db)
	return reg
}

// PeriodicJobs lists the periodic jobs of every process that works the queue.
func PeriodicJobs(f Sweep) []jobs.Periodic {
	return append(append(indexing.Periodic(), sweep.Periodic(f.Every)...), sweep.AuditPeriodic()...)
}

// NewSweeper builds the sweeper of db and its blob backend (serve, worker
// and admin storage alike). A blob directory is swept file by file;
// PostgreSQL's blobs go with their rows; object storage is not swept (the
// sweeper has no safe delete for it yet), only the rows past their
// retention are.
func NewSweeper(db *store.DB, blobs files.Blobs, f Sweep, logger *slog.Logger) *sweep.Sweeper {
	var dir sweep.Dir
	rowsOnly := false
	switch b := blobs.(type) {
	case *blob.Dir:
		dir = b
	case *blob.Postgres:
	default:
		rowsOnly = true
		logger.Warn("the storage sweep does not reclaim blobs in object storage: deleted files' objects stay in the bucket", "store", fmt.Sprintf("%T", blobs))
	}
	grace := f.Grace
	if grace <= 0 {
		grace = -1 // no grace, as asked (sweep.Config reads 0 as the default)
	}
	staging, _ := blobs.(sweep.Staging)
	return sweep.New(db, dir, sweep.Config{Retention: store.Retention{Versions: f.Versions, Trash: f.Trash}, Grace: grace,
		RowsOnly: rowsOnly, Staging: staging, Logger: logger})
}

// connectToolServices connects the webSearch and sqlQuery capabilities to
// the file's sections (and AGENTHOST_WEBSEARCH_* of env, which override
// it). Unconfigured, the tools answer that the operator has not set them
// up. The returned function closes the databases.
func connectToolServices(f File, env func(string) string, caps *builtin.Capabilities, eo wasm.EgressOptions, logger *slog.Logger) (func(), error) {
	var ws *websearch.Config
	if f.WebSearch != nil {
		c := *f.WebSearch
		ws = &c
	}
	if p := env("AGENTHOST_WEBSEARCH_PROVIDER"); p != "" {
		if ws == nil {
			ws = &websearch.Config{}
		}
		ws.Provider = p
	}
	if ws != nil {
		if u := env("AGENTHOST_WEBSEARCH_URL"); u != "" {
			ws.URL = u
		}
		if k := env("AGENTHOST_WEBSEARCH_API_KEY"); k != "" {
			ws.APIKey, ws.APIKeyEnv = k, ""
		}
		s, err := websearch.New(*ws, env, eo)
		if err != nil {
			return nil, err
		}
		caps.WebSearch.Searcher = s
		logger.Info("webSearch configured", "provider", s.Provider())
	}
	if f.SQLQuery == nil {
		return func() {}, nil
	}
	svc, err := sqlquery.New(*f.SQLQuery, env, logger)
	if err != nil {
		return nil, err
	}
	caps.SQL.Service = svc
	logger.Info("sqlQuery configured", "databases", len(f.SQLQuery.Databases))
	return svc.Close, nil
}

// mcpServers is serve's side: the connections to the tenants' MCP servers
// (stdio servers run in fresh directories outside the data directory, as
// -mcp-user when serve is root), billed and traced like plugin calls. HTTP
// servers are reached through host/egress's address checks, with the
// plugins' -allow-host exceptions and -resolve overrides.
func mcpServers(db *store.DB, data, key string, f MCPClients, eo wasm.EgressOptions, meter mcpclient.Meter, tel *telemetry.Telemetry, logger *slog.Logger) (mcpclient.Admin, error) {
	sealer, err := mcpclient.NewSealer(key)
	if err != nil {
		return mcpclient.Admin{}, err
	}
	var uids mcpclient.UIDRange
	if f.UIDs != "" {
		if uids, err = mcpclient.ParseUIDRange(f.UIDs); err != nil {
			return mcpclient.Admin{}, fmt.Errorf("-mcp-uids: %w", err)
		}
	}
	m, err := mcpclient.New(db, mcpclient.Options{DataDir: data, Sealer: sealer, Meter: meter, Tracer: tel.TracerProvider(), Logger: logger,
		Commands: f.Commands, User: f.User, UIDs: uids, AllowPrivateHosts: eo.AllowPrivateHosts, Resolver: eo.Resolver})
	if err != nil {
		return mcpclient.Admin{}, err
	}
	return mcpclient.Admin{Store: db, Sealer: sealer, Manager: m, Commands: f.Commands}, nil
}

// serveMCP starts the MCP endpoint on addr in the background ("off" or ""
// serves none); it stops with ctx, or when the returned function is
// called, within grace. The function waits for it to stop: it is called
// before what calls use is closed.
func serveMCP(ctx context.Context, logger *slog.Logger, addr string, d mcpserver.Deps, grace time.Duration) (stop func()) {
	if addr == "off" || addr == "" {
		return func() {}
	}
	srv := mcpserver.New(d)
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		err := mcpserver.Serve(ctx, srv, addr, grace, func(a net.Addr) {
			logger.Info("MCP endpoint listening", "addr", a.String(), "path", mcpserver.Path)
		})
		if err != nil {
			logger.Error("MCP endpoint", "err", err)
		}
	}()
	return func() {
		cancel()
		<-done
	}
}

// collectStore adds the gauges read from db, exported by one process of
// all those sharing the database (gaugeExporter).
func collectStore(tel *telemetry.Telemetry, db *store.DB, queue *jobs.Queue, logger *slog.Logger) {
	tel.CollectStore(db, gaugeExporter{queue}, logger)
}

// gaugeExporter elects the process that exports the database gauges: the
// live host (by the job queue's heartbeats, which serve and every worker
// beat) with the lowest id. Every process reads the same heartbeats, so
// they agree without talking to each other; when the exporter stops, its
// heartbeat lapses (jobs.DefaultHostLease) and the next lowest takes over.
// A host held by its lease rather than by a ranking would need a lease of
// its own to renew; the heartbeats already exist.
type gaugeExporter struct{ queue *jobs.Queue }

func (g gaugeExporter) ExportsDatabaseGauges(ctx context.Context) (bool, error) {
	live, err := g.queue.LiveHosts(ctx)
	if err != nil {
		return false, err
	}
	me := g.queue.HostID()
	if !live[me] {
		return false, nil // not beaten yet: the others decide without it
	}
	for id := range live {
		if id < me {
			return false, nil
		}
	}
	return true, nil
}

// publicURL is the server's public URL: AGENTHOST_PUBLIC_URL (public), or
// for a loopback listen address http://localhost:PORT; "" when neither.
func publicURL(public, addr string) string {
	if v := strings.TrimRight(public, "/"); v != "" {
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

// agentModels names the agent's fallback chain for the home page ("" when
// none is configured).
func agentModels(cfg llm.Config) string {
	var names []string
	for _, m := range cfg.Models[modeluse.OpAgent] {
		names = append(names, m.Model)
	}
	return strings.Join(names, ", ")
}

// embedderOf is the embedding model when one is configured: search is then
// hybrid and read pages are embedded; nil otherwise (words only).
func embedderOf(model *llm.Client) search.Embedder {
	if model.Configured(modeluse.OpEmbedding) {
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
