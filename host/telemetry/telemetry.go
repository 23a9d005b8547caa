// Package telemetry makes agenthost observable (docs/observability.md): OpenTelemetry
// trace spans for HTTP requests, agent runs, rounds, model calls and tool
// calls, exported over OTLP/HTTP when an endpoint is configured, and
// Prometheus metrics served at /metrics: workflows by state, tool calls and
// failures by tool, latency histograms, budget use, the knowledge store's
// size, abort reasons and the job queue's depth.
//
// Nothing here is global: the tracer provider and the metric registry
// belong to a Telemetry, which the host passes to what it observes.
package telemetry

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"runtime/debug"

	"github.com/google/uuid"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.26.0"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"
)

// Config says where traces go.
type Config struct {
	// OTLPEndpoint is the base URL of an OTLP/HTTP receiver
	// ("http://collector:4318"); spans are posted to its /v1/traces. Empty
	// records no spans (the metrics are served regardless).
	OTLPEndpoint string
	// ServiceName names this host's spans [agenthost].
	ServiceName string
	// Version is the build's version, recorded with the spans
	// (service.version); empty takes the module's version from the build
	// information (a VCS revision for a build from a checkout).
	Version string
	// InstanceID tells this process's spans from those of the other hosts
	// and workers (service.instance.id); empty makes a random one.
	InstanceID string
	// Exporter, when set, receives the spans instead of an OTLP endpoint
	// (batched all the same): for a program embedding the host, and tests.
	Exporter sdktrace.SpanExporter
}

// Telemetry holds a tracer provider and the metrics.
type Telemetry struct {
	tp       trace.TracerProvider
	tracer   trace.Tracer
	shutdown func(context.Context) error
	reg      *prometheus.Registry
	m        metrics
}

// New starts the trace exporter (when configured) and registers the
// metrics. It makes no network call: an unreachable collector shows in the
// log when spans are exported.
func New(ctx context.Context, cfg Config) (*Telemetry, error) {
	if cfg.ServiceName == "" {
		cfg.ServiceName = "agenthost"
	}
	if cfg.Version == "" {
		cfg.Version = BuildVersion()
	}
	if cfg.InstanceID == "" {
		cfg.InstanceID = uuid.NewString()
	}
	t := &Telemetry{reg: prometheus.NewRegistry(), shutdown: func(context.Context) error { return nil }}
	t.reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	t.m = newMetrics(t.reg)
	if cfg.OTLPEndpoint == "" && cfg.Exporter == nil {
		t.tp = noop.NewTracerProvider()
	} else {
		exp := cfg.Exporter
		if exp == nil {
			opts, err := otlpOptions(cfg.OTLPEndpoint)
			if err != nil {
				return nil, err
			}
			if exp, err = otlptracehttp.New(ctx, opts...); err != nil {
				return nil, fmt.Errorf("telemetry: OTLP exporter for %s: %w", cfg.OTLPEndpoint, err)
			}
		}
		res := resource.NewSchemaless(semconv.ServiceName(cfg.ServiceName), semconv.ServiceVersion(cfg.Version),
			semconv.ServiceInstanceID(cfg.InstanceID))
		tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))
		t.tp, t.shutdown = tp, tp.Shutdown
	}
	t.tracer = t.tp.Tracer("github.com/agenthost/agenthost")
	return t, nil
}

// BuildVersion is the running binary's version: its module version, or
// for a build from a checkout the VCS revision (with "+dirty" when it had
// uncommitted changes); "unknown" without build information.
func BuildVersion() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	if v := bi.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	var rev, dirty string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				dirty = "+dirty"
			}
		}
	}
	if rev == "" {
		return "(devel)"
	}
	return rev + dirty
}

// otlpOptions reads the endpoint as OTEL_EXPORTER_OTLP_ENDPOINT is read: a
// base URL whose scheme decides TLS, to which /v1/traces is added unless
// the URL names a path of its own.
func otlpOptions(endpoint string) ([]otlptracehttp.Option, error) {
	u, err := url.Parse(endpoint)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("telemetry: OTLP endpoint %q is not an http(s) URL", endpoint)
	}
	if u.Path == "" || u.Path == "/" {
		u.Path = "/v1/traces"
	}
	return []otlptracehttp.Option{otlptracehttp.WithEndpointURL(u.String())}, nil
}

// TracerProvider is the provider spans of this host are made with (for
// instrumentation such as the HTTP middleware).
func (t *Telemetry) TracerProvider() trace.TracerProvider { return t.tp }

// Registry is the metrics registry, for collectors of other parts.
func (t *Telemetry) Registry() *prometheus.Registry { return t.reg }

// Handler serves the metrics in the Prometheus text format.
func (t *Telemetry) Handler() http.Handler {
	return promhttp.HandlerFor(t.reg, promhttp.HandlerOpts{})
}

// Shutdown exports the spans still buffered and stops the exporter.
func (t *Telemetry) Shutdown(ctx context.Context) error { return t.shutdown(ctx) }
