package main

import (
	"context"
	"flag"
	"log/slog"
	"os"

	"github.com/agenthost/agenthost/host/store"
	"github.com/agenthost/agenthost/host/telemetry"
)

// telemetryFlags say where traces go and who may read /metrics.
type telemetryFlags struct{ otlp, metricsToken *string }

func addTelemetryFlags(fs *flag.FlagSet) telemetryFlags {
	return telemetryFlags{
		otlp: fs.String("otlp-endpoint", envOr("AGENTHOST_OTLP_ENDPOINT", os.Getenv("OTEL_EXPORTER_OTLP_ENDPOINT")),
			"OTLP/HTTP receiver for trace spans (e.g. http://localhost:4318; /v1/traces is added); empty exports none"),
		metricsToken: fs.String("metrics-token", envOr("AGENTHOST_METRICS_TOKEN", ""),
			"Bearer token that lets clients other than loopback read /metrics (empty: loopback only)"),
	}
}

// open starts the telemetry: spans exported when an endpoint is set, and
// the metrics, among them gauges read from db when /metrics is scraped.
func (tf telemetryFlags) open(ctx context.Context, db *store.DB, logger *slog.Logger) (*telemetry.Telemetry, error) {
	tel, err := telemetry.New(ctx, telemetry.Config{OTLPEndpoint: *tf.otlp})
	if err != nil {
		return nil, err
	}
	tel.CollectStore(db, logger)
	if *tf.otlp != "" {
		logger.Info("exporting trace spans", "endpoint", *tf.otlp)
	}
	return tel, nil
}
