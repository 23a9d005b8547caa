package main

import (
	"flag"
	"os"

	"github.com/agenthost/agenthost/host/server"
)

// telemetryFlags say where traces go and who may read /metrics.
type telemetryFlags struct {
	otlp, metricsToken *string
	traceHealth        *bool
}

func addTelemetryFlags(fs *flag.FlagSet) telemetryFlags {
	return telemetryFlags{
		otlp: fs.String("otlp-endpoint", os.Getenv("OTEL_EXPORTER_OTLP_ENDPOINT"),
			"OTLP/HTTP receiver for trace spans (e.g. http://localhost:4318; /v1/traces is added); empty exports none"),
		metricsToken: fs.String("metrics-token", "",
			"Bearer token that lets clients other than loopback read /metrics (empty: loopback only)"),
		traceHealth: fs.Bool("trace-health", false,
			"make trace spans of health checks and metric scrapes (/healthz, /status, /metrics) too"),
	}
}

// config is the server's telemetry settings.
func (tf telemetryFlags) config() server.Telemetry {
	return server.Telemetry{OTLPEndpoint: *tf.otlp, MetricsToken: *tf.metricsToken, TraceHealth: *tf.traceHealth}
}
