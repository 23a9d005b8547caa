package main

import (
	"context"
	"flag"
	"io"
	"log/slog"
	"path/filepath"
	"slices"
	"time"

	"github.com/agenthost/agenthost/host/indexing"
	"github.com/agenthost/agenthost/host/installed"
	"github.com/agenthost/agenthost/host/jobs"
	"github.com/agenthost/agenthost/host/knowledge"
	"github.com/agenthost/agenthost/host/llm"
	"github.com/agenthost/agenthost/host/store"
	"github.com/agenthost/agenthost/host/sweep"
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
	migrate := fs.Bool("migrate", false, "apply pending PostgreSQL migrations at start-up (the embedded database always is)")
	pf := addPluginFlags(fs)
	ef := addExtractorFlags(fs)
	bf := addBillingFlags(fs)
	configPath := fs.String("config", envOr("AGENTHOST_CONFIG", ""), "configuration file (YAML or JSON; see docs/configuration.md); environment variables override it")
	keyFile := addSecretKeyFileFlag(fs)
	sw := addSweepFlags(fs)
	tf := addTelemetryFlags(fs)
	metricsAddr := fs.String("metrics-addr", envOr("AGENTHOST_WORKER_METRICS_ADDR", "127.0.0.1:9464"),
		`address serving /metrics (loopback clients, or -metrics-token holders); "off" serves none`)
	if ok, err := parseArgs(fs, args); !ok {
		return err
	}
	if err := checkSettings("worker", *configPath); err != nil {
		return err
	}
	env, err := hideSecrets(*keyFile, *configPath) // as serve's
	if err != nil {
		return err
	}
	modelCfg, err := llm.LoadConfig(*configPath, env) // before anything is opened
	if err != nil {
		return err
	}
	objectStorage, err := loadObjectStorage(*configPath, env) // as serve's
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
	logger := slog.New(slog.NewTextHandler(stderr, nil))
	// webSearch's search API and sqlQuery's databases (docs/configuration.md).
	closeToolServices, err := connectToolServices(*configPath, env, pf, logger)
	if err != nil {
		return err
	}
	defer closeToolServices()

	db, err := sf.open(ctx, logger)
	if err != nil {
		return err
	}
	defer db.Close()
	if err := prepareSchema(ctx, db, *migrate); err != nil {
		return err
	}
	host, err := pf.open(ctx, *sf.data, logger)
	if err != nil {
		return err
	}
	defer host.Close(context.WithoutCancel(ctx))
	// The plugins a serve of this data directory installed (as of now).
	if _, err := installed.Open(ctx, filepath.Join(*sf.data, "plugins"), host, logger, installed.Options{Audit: db}); err != nil {
		return err
	}
	extractors, err := ef.open(host, logger)
	if err != nil {
		return err
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
	ingester := knowledge.NewIngester(db, blobs, extractors, logger).WithSmartPDF(knowledge.DefaultSmartPDF).
		WithContainers(extractors.Containers(), db, blobs)
	if model.Configured(llm.OpEmbedding) {
		ingester.WithEmbedder(model)
	}
	reader := knowledge.NewReader(db, blobs, extractors).WithEmbedder(embedderOf(model), logger)
	hostID := jobs.NewHostID()
	tel, err := tf.open(ctx, hostID, logger)
	if err != nil {
		return err
	}
	defer func() {
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		if err := tel.Shutdown(sctx); err != nil {
			logger.Warn("telemetry: flushing spans", "err", err)
		}
	}()
	// OCR calls the model capability for the file's uploader: the worker's
	// plugins reach the models too (no workflow: indexing runs outside one).
	*pf.caps.Models = llm.Capabilities{Client: model, Logger: logger}
	ocr := knowledge.NewOCR(db, blobs, extractors, model).WithEmbedder(embedderOf(model), logger)
	reg := jobKinds(ingester, reader, ocr, db, sw.sweeper(db, blobs, logger), *sw.audit, logger)
	q, err := jobs.New(db, jobs.Config{Registry: reg, Work: true, Periodic: periodicJobs(sw), Logger: logger,
		TracerProvider: tel.TracerProvider(), HostID: hostID})
	if err != nil {
		return err
	}
	collectStore(tel, db, q, logger)
	stopMetrics, err := serveMetrics(*metricsAddr, tel.Handler(), *tf.metricsToken, logger)
	if err != nil {
		return err
	}
	defer stopMetrics()
	if err := q.Start(ctx); err != nil {
		return err
	}
	kinds := reg.Kinds()
	slices.Sort(kinds)
	logger.Info("agenthost worker running", "database", db.Dialect(), "kinds", kinds)

	<-ctx.Done()
	logger.Info("stopping; running jobs may finish", "within", workerStopTimeout)
	stopCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), workerStopTimeout)
	defer cancel()
	return q.Stop(stopCtx)
}

// jobKinds builds the registry of every kind of background job agenthost
// has. `agenthost serve` and `agenthost worker` both take theirs from here,
// so every process knows every kind: a kind is added with one jobs.Register
// line in this function and nowhere else. (Background jobs, which run an
// agent, are serve's own, on a queue of their own: see serve.go.)
func jobKinds(ingester *knowledge.Ingester, reader *knowledge.Reader, ocr *knowledge.OCR, db *store.DB, sweeper *sweep.Sweeper, auditRetention time.Duration, logger *slog.Logger) *jobs.Registry {
	reg := jobs.NewRegistry()
	sweep.Register(reg, sweeper)
	sweep.RegisterAudit(reg, db, auditRetention, logger)
	indexing.RegisterJobs(reg, ingester, db)
	indexing.RegisterCompletion(reg, reader, db, db)
	indexing.RegisterOCR(reg, ocr, db)
	return reg
}
