package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/agenthost/agenthost/host/agent"
	"github.com/agenthost/agenthost/host/api"
	"github.com/agenthost/agenthost/host/billing"
	"github.com/agenthost/agenthost/host/builtin"
	"github.com/agenthost/agenthost/host/files"
	"github.com/agenthost/agenthost/host/jobs"
	"github.com/agenthost/agenthost/host/llm"
	"github.com/agenthost/agenthost/host/tools"
	"github.com/agenthost/agenthost/host/wasm"
	"github.com/agenthost/agenthost/host/wasm/signature"
	"github.com/agenthost/agenthost/host/workflows"
	"github.com/agenthost/agenthost/host/workspace"
)

// serveCmd runs the HTTP server with the built-in plugins and any third-party
// plugins found in -plugins.
func serveCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := fs.String("addr", envOr("AGENTHOST_ADDR", "127.0.0.1:8080"), "listen address")
	sf := addStorageFlags(fs)
	data := sf.data
	migrate := fs.Bool("migrate", false, "apply pending PostgreSQL migrations at start-up (the embedded database always is)")
	configPath := fs.String("config", envOr("AGENTHOST_CONFIG", ""), "configuration file (YAML or JSON; see docs/configuration.md); environment variables override it")
	maxUpload := fs.Int64("max-upload", envInt64("AGENTHOST_MAX_UPLOAD", files.DefaultMaxUpload), "largest accepted upload in bytes")
	pluginDir := fs.String("plugins", envOr("AGENTHOST_PLUGINS", ""), "directory of third-party plugins (*.wasm)")
	allowUnsigned := fs.Bool("allow-unsigned", false, "load third-party plugins that carry no signature (a bad signature is still refused)")
	var trustFiles stringList
	fs.Var(&trustFiles, "trust", "public key file whose signatures third-party plugins may carry (repeatable)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	logger := slog.New(slog.NewTextHandler(stderr, nil))

	if err := os.MkdirAll(*data, 0o755); err != nil {
		return err
	}
	db, err := sf.open(ctx, logger)
	if err != nil {
		return err
	}
	defer db.Close()
	if err := prepareSchema(ctx, db, *migrate); err != nil {
		return err
	}
	blobs, err := sf.blobs(db)
	if err != nil {
		return err
	}
	fileSvc := files.NewService(db, blobs, *maxUpload)
	queue, err := jobs.New(db, jobs.Config{Registry: jobKinds(), Work: true, Logger: logger})
	if err != nil {
		return err
	}
	if err := queue.Start(ctx); err != nil {
		return err
	}
	defer func() {
		// Running jobs get a grace period, then are cancelled and requeued.
		stopCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
		queue.Stop(stopCtx)
	}()
	reg, err := wasm.NewRegistry(wasm.StandardCapabilities(wasm.EgressOptions{})...)
	if err != nil {
		return err
	}
	trust, err := loadTrust(trustFiles)
	if err != nil {
		return err
	}
	host, err := wasm.New(ctx, wasm.NewConfig().
		WithVerifier(signature.Verifier{Trust: trust}).
		WithLogger(logger).
		WithCapabilities(reg).
		WithAllowUnsigned(*allowUnsigned).
		WithCompilationCacheDir(filepath.Join(*data, "wasm-cache")))
	if err != nil {
		return err
	}
	defer host.Close(context.WithoutCancel(ctx))

	srcs, err := builtin.Sources()
	if err != nil {
		return err
	}
	if len(srcs) == 0 {
		logger.Warn("this binary carries no built-in plugins; build it with `make build`")
	}
	for _, s := range srcs {
		if _, err := host.Load(ctx, s); err != nil {
			return fmt.Errorf("built-in plugin: %w", err)
		}
	}
	if *pluginDir != "" {
		if _, err := host.LoadDir(ctx, *pluginDir); err != nil {
			// A refused third-party plugin is reported, not fatal: the rest still serve.
			logger.Error("some plugins were refused", "dir", *pluginDir, "err", err)
		}
	}

	var warm atomic.Pointer[error]
	starting := errors.New("plugins are still compiling")
	warm.Store(&starting)
	go func() {
		start := time.Now()
		if err := host.Warm(ctx); err != nil {
			// A broken plugin fails its own calls with this error; the rest serve.
			logger.Error("some plugins failed to compile or verify", "err", err)
		}
		var ready error
		warm.Store(&ready)
		logger.Info("plugins ready", "count", len(host.Plugins()), "took", time.Since(start).Round(time.Millisecond))
	}()

	llmCfg, err := llm.LoadConfig(*configPath, os.Getenv)
	if err != nil {
		return err
	}
	var ag *agent.Agent
	if model, err := llm.New(llmCfg, billing.NewMeter(db), logger); err != nil {
		return err
	} else if model.Configured(llm.OpAgent) {
		ag = agent.New(model, agent.Config{}, logger)
	} else {
		logger.Warn("no model configured: files, tools and the API run; workflows answer 503 until one is", "how", workspace.ErrNoModel.Error())
	}
	wfSvc := workflows.NewService(db, workflows.NewBroker(db, workflows.BrokerConfig{Logger: logger}), logger)
	registry := tools.NewRegistry(host, nil)
	runner := workspace.New(wfSvc, fileSvc, ag, registry, db, workspace.Config{}, logger)
	defer runner.Close()

	app := api.New(api.Deps{
		Logger: logger, Plugins: host, Ready: func() error { return *warm.Load() },
		Auth: db, Workspaces: db, Files: fileSvc, MaxBody: int(*maxUpload) + 1<<20,
		Workflows: wfSvc, Workspace: runner, Tools: registry, WorkspaceTools: db,
	})
	logger.Info("agenthost listening", "addr", *addr, "plugins", len(host.Plugins()))
	return api.Serve(ctx, app, *addr)
}

func envOr(key, def string) string {
	if v, ok := os.LookupEnv(key); ok {
		return v
	}
	return def
}

func envInt64(key string, def int64) int64 {
	if v, ok := os.LookupEnv(key); ok {
		if n, err := strconv.ParseInt(v, 10, 64); err == nil {
			return n
		}
	}
	return def
}
