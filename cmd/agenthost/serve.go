package main

import (
	"context"
	"flag"
	"io"
	"log/slog"
	"os"
	"time"

	"github.com/agenthost/agenthost/host/files"
	"github.com/agenthost/agenthost/host/server"
)

// serveCmd runs the HTTP server with the built-in plugins and any third-party
// plugins found in -plugins.
func serveCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := fs.String("addr", "127.0.0.1:8080", settingUsage("addr"))
	mf := addMCPFlags(fs)
	sf := addStorageFlags(fs)
	migrate := fs.Bool("migrate", false, settingUsage("migrate"))
	fs.String("config", "", settingUsage("config"))
	tenantRate := fs.Int64("tenant-rate", 0, settingUsage("tenant-rate"))
	maxUpload := sizeFlag(fs, "max-upload", files.DefaultMaxUpload, settingUsage("max-upload"))
	pf := addPluginFlags(fs)
	var pluginAdmins stringList
	fs.Var(&pluginAdmins, "plugin-admins", settingUsage("plugin-admins"))
	mayWiden := fs.Bool("plugin-upgrades-may-widen", false, settingUsage("plugin-upgrades-may-widen"))
	shutdownTimeout := fs.Duration("shutdown-timeout", 10*time.Second,
		settingUsage("shutdown-timeout", "how long a stop (SIGINT, SIGTERM) may take"))
	ef := addExtractorFlags(fs)
	bf := addBillingFlags(fs)
	tf := addTelemetryFlags(fs)
	mcpCommands := addMCPCommandFlag(fs)
	keyFile := addSecretKeyFileFlag(fs)
	sw := addSweepFlags(fs)
	if ok, err := parseArgs(fs, args); !ok {
		return err
	}
	// The variables and the whole configuration file are read now,
	// strictly: anything unreadable refuses start-up before anything opens.
	file, err := checkSettings("serve", fs)
	if err != nil {
		return err
	}
	// Secrets are read from a copy of the environment taken now: the
	// process's own loses them, and the process becomes undumpable, before
	// anything (a stdio MCP server) is started.
	env, err := hideSecrets(*keyFile, file)
	if err != nil {
		return err
	}
	logger := slog.New(slog.NewTextHandler(stderr, nil))
	cfg, err := commonConfig(server.Serve, logger, env, file, sf, *migrate, pf, ef, bf, tf, sw)
	if err != nil {
		return err
	}
	cfg.Addr, cfg.MCP, cfg.MCPClients = *addr, mf.config(), mcpCommands.config()
	cfg.TenantRate, cfg.MaxUpload = *tenantRate, *maxUpload
	cfg.PluginAdmins, cfg.UpgradesMayWiden = pluginAdmins, *mayWiden
	cfg.SetupTokenTTL = DefaultTokenTTL
	cfg.ShutdownTimeout, cfg.Exit, cfg.Stderr = *shutdownTimeout, os.Exit, stderr
	return runServer(ctx, cfg)
}

// commonConfig is the part of the server's configuration serve and worker
// both take from their flags.
func commonConfig(role server.Role, logger *slog.Logger, env func(string) string, file server.File, sf storageFlags, migrate bool,
	pf pluginFlags, ef extractorFlags, bf billingFlags, tf telemetryFlags, sw sweepFlags) (server.Config, error) {
	plugins, err := pf.config(*sf.data)
	if err != nil {
		return server.Config{}, err
	}
	extractors, err := ef.choice()
	if err != nil {
		return server.Config{}, err
	}
	bill, err := bf.config()
	if err != nil {
		return server.Config{}, err
	}
	return server.Config{Role: role, Logger: logger, Env: env, File: file, DataDir: *sf.data, Store: sf.config(), Migrate: migrate,
		Plugins: plugins, Extractors: extractors, Billing: bill, Telemetry: tf.config(), Sweep: sw.config()}, nil
}

// runServer builds the server of cfg, runs it until ctx ends and closes
// it. A stop during start-up (ctx ended) is a clean stop, not a failure.
func runServer(ctx context.Context, cfg server.Config) error {
	// The process runs plugins, whose memory is Go heap: a soft limit
	// (applyMemoryLimit) keeps the collector ahead of their growth.
	cfg.Logger.Info("memory limit", "softLimitMiB", applyMemoryLimit(os.Getenv)>>20)
	srv, err := server.New(ctx, cfg)
	if err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return err
	}
	defer srv.Close()
	return srv.Run(ctx)
}
