package api

import (
	"crypto/subtle"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/middleware/adaptor"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// Telemetry instruments requests (a span and a latency observation each)
// and serves the metrics.
type Telemetry interface {
	TracerProvider() trace.TracerProvider
	ObserveHTTP(method, route, status string, d time.Duration)
	Handler() http.Handler
}

// instrument makes a server span of every request, continuing a caller's
// trace (W3C traceparent), named by its route, and records its latency by
// method, route and status. Unlike otelfiber it never cancels the request's
// context when the handler returns: event streams and uploads outlive their
// handlers' return.
//
// Health checks and metric scrapes (/healthz, /status, /metrics) come every
// few seconds from every probe and would bury the requests worth tracing:
// they get no span unless traceHealth, and their latency is still recorded.
func instrument(t Telemetry, traceHealth bool) fiber.Handler {
	tracer := t.TracerProvider().Tracer("github.com/agenthost/agenthost/host/api")
	prop := propagation.TraceContext{}
	return func(c *fiber.Ctx) error {
		start := time.Now()
		if !traceHealth && isHealthPath(c.Path()) {
			err := c.Next()
			if err != nil {
				if herr := c.App().ErrorHandler(c, err); herr != nil {
					return herr
				}
			}
			t.ObserveHTTP(strings.Clone(c.Method()), c.Route().Path, strconv.Itoa(c.Response().StatusCode()), time.Since(start))
			return nil
		}
		h := http.Header{}
		for _, k := range []string{"Traceparent", "Tracestate"} {
			if v := c.Get(k); v != "" {
				h.Set(k, strings.Clone(v))
			}
		}
		// Fiber's strings point into buffers reused by the next request:
		// what outlives the handler is copied.
		method, path := strings.Clone(c.Method()), strings.Clone(c.Path())
		ctx := prop.Extract(c.UserContext(), propagation.HeaderCarrier(h))
		ctx, span := tracer.Start(ctx, method, trace.WithSpanKind(trace.SpanKindServer),
			trace.WithAttributes(attribute.String("http.request.method", method), attribute.String("url.path", path)))
		c.SetUserContext(ctx)
		if err := c.Next(); err != nil {
			// The error handler writes the status the client sees, which
			// the span and the histogram record.
			if herr := c.App().ErrorHandler(c, err); herr != nil {
				span.End()
				return herr
			}
		}
		route, status := c.Route().Path, c.Response().StatusCode()
		span.SetName(method + " " + route)
		span.SetAttributes(attribute.String("http.route", route), attribute.Int("http.response.status_code", status))
		if strings.HasPrefix(route, "/api/v1/workflows/:id") {
			// Every span of a workflow carries its id (the agent's spans
			// take it from the round).
			span.SetAttributes(attribute.String(workflowIDKey, strings.Clone(c.Params("id"))))
		}
		if status >= 500 {
			span.SetStatus(codes.Error, http.StatusText(status))
		}
		span.End()
		t.ObserveHTTP(method, route, strconv.Itoa(status), time.Since(start))
		return nil
	}
}

// workflowIDKey is telemetry.WorkflowIDKey (not imported: the API knows
// telemetry only by the small interface above).
const workflowIDKey = "agenthost.workflow.id"

// isHealthPath reports whether path is a health check or a metrics scrape.
func isHealthPath(path string) bool {
	switch path {
	case "/healthz", "/status", "/metrics":
		return true
	}
	return false
}

// handleMetrics serves the metrics to loopback clients and to those who
// present the metrics token (-metrics-token): they name tenants and their
// spending, which the internet need not read.
func handleMetrics(t Telemetry, token string) fiber.Handler {
	serve := adaptor.HTTPHandler(t.Handler())
	return func(c *fiber.Ctx) error {
		ip := net.ParseIP(c.IP())
		given := []byte(c.Get(fiber.HeaderAuthorization))
		if (ip == nil || !ip.IsLoopback()) && (token == "" || subtle.ConstantTimeCompare(given, []byte("Bearer "+token)) != 1) {
			return problem(c, fiber.StatusForbidden, "Forbidden", "metrics are served to loopback clients and to the metrics token's holders")
		}
		return serve(c)
	}
}
