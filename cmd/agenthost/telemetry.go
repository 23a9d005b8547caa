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
			settingUsage("otlp-endpoint", "e.g. http://localhost:4318; /v1/traces is added")),
		metricsToken: fs.String("metrics-token", "", settingUsage("metrics-token", "empty: loopback only")),
		traceHealth:  fs.Bool("trace-health", false, settingUsage("trace-health")),
	}
}

// config is the server's telemetry settings.
func (tf telemetryFlags) config() server.Telemetry {
	return server.Telemetry{OTLPEndpoint: *tf.otlp, MetricsToken: *tf.metricsToken, TraceHealth: *tf.traceHealth}
}
