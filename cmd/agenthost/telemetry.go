package main

import (
	"context"
	"flag"
	"log/slog"
	"os"

	"github.com/agenthost/agenthost/host/jobs"
	"github.com/agenthost/agenthost/host/store"
	"github.com/agenthost/agenthost/host/telemetry"
)

// telemetryFlags say where traces go and who may read /metrics.
type telemetryFlags struct {
	otlp, metricsToken *string
	traceHealth        *bool
}

func addTelemetryFlags(fs *flag.FlagSet) telemetryFlags {
	return telemetryFlags{
		otlp: fs.String("otlp-endpoint", envOr("AGENTHOST_OTLP_ENDPOINT", os.Getenv("OTEL_EXPORTER_OTLP_ENDPOINT")),
			"OTLP/HTTP receiver for trace spans (e.g. http://localhost:4318; /v1/traces is added); empty exports none"),
		metricsToken: fs.String("metrics-token", envOr("AGENTHOST_METRICS_TOKEN", ""),
			"Bearer token that lets clients other than loopback read /metrics (empty: loopback only)"),
		traceHealth: fs.Bool("trace-health", envBool("AGENTHOST_TRACE_HEALTH", false),
			"make trace spans of health checks and metric scrapes (/healthz, /status, /metrics) too"),
	}
}

// open starts the telemetry of the process named hostID: spans exported
// when an endpoint is set, and the metrics. The gauges read from the
// database are added with collectStore once the queue exists.
func (tf telemetryFlags) open(ctx context.Context, hostID string, logger *slog.Logger) (*telemetry.Telemetry, error) {
	tel, err := telemetry.New(ctx, telemetry.Config{OTLPEndpoint: *tf.otlp, InstanceID: hostID})
	if err != nil {
		return nil, err
	}
	if *tf.otlp != "" {
		logger.Info("exporting trace spans", "endpoint", *tf.otlp, "instance", hostID)
	}
	return tel, nil
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
