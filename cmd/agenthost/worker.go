package main

import (
	"context"
	"flag"
	"io"
	"log/slog"
	"time"

	"github.com/agenthost/agenthost/host/server"
)

// workerStopTimeout is how long an interrupted worker lets running jobs
// finish before it cancels them (they are retried later, by any process).
const workerStopTimeout = 30 * time.Second

// workerCmd works background jobs until interrupted, without the HTTP
// server. Any number may run beside `agenthost serve` on one database; on
// the embedded store they share the data directory's database file.
func workerCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("worker", flag.ContinueOnError)
	fs.SetOutput(stderr)
	sf := addStorageFlags(fs) // -data, -database
	migrate := fs.Bool("migrate", false, settingUsage("migrate"))
	pf := addPluginFlags(fs)
	ef := addExtractorFlags(fs)
	bf := addBillingFlags(fs)
	fs.String("config", "", settingUsage("config"))
	keyFile := addSecretKeyFileFlag(fs)
	sw := addSweepFlags(fs)
	tf := addTelemetryFlags(fs)
	metricsAddr := fs.String("metrics-addr", "127.0.0.1:9464", settingUsage("metrics-addr", "loopback clients, or -metrics-token holders"))
	if ok, err := parseArgs(fs, args); !ok {
		return err
	}
	file, err := checkSettings("worker", fs)
	if err != nil {
		return err
	}
	env, err := hideSecrets(*keyFile, file) // as serve's
	if err != nil {
		return err
	}
	logger := slog.New(slog.NewTextHandler(stderr, nil))
	cfg, err := commonConfig(server.Worker, logger, env, file, sf, *migrate, pf, ef, bf, tf, sw)
	if err != nil {
		return err
	}
	cfg.MetricsAddr, cfg.StopTimeout = *metricsAddr, workerStopTimeout
	return runServer(ctx, cfg)
}
