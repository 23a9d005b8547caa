package api

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"
)

type fakeTelemetry struct{}

func (fakeTelemetry) TracerProvider() trace.TracerProvider              { return noop.NewTracerProvider() }
func (fakeTelemetry) ObserveHTTP(string, string, string, time.Duration) {}
func (fakeTelemetry) Handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.Write([]byte("metric 1\n")) })
}

// TestMetricsGate: a client that is not on loopback (app.Test's is
// 0.0.0.0) reads /metrics only with the metrics token; without a token
// configured, never.
func TestMetricsGate(t *testing.T) {
	for _, c := range []struct {
		name, token, auth string
		want              int
	}{
		{"no token configured", "", "", 403},
		{"no token configured, one sent", "", "Bearer ", 403},
		{"token configured, none sent", "s3cret", "", 403},
		{"wrong token", "s3cret", "Bearer s3cre", 403},
		{"right token", "s3cret", "Bearer s3cret", 200},
	} {
		app := fiber.New()
		app.Get("/metrics", handleMetrics(fakeTelemetry{}, c.token))
		req := httptest.NewRequest("GET", "/metrics", nil)
		if c.auth != "" {
			req.Header.Set("Authorization", c.auth)
		}
		resp, err := app.Test(req)
		if err != nil || resp.StatusCode != c.want {
			t.Errorf("%s: %v %v, want %d", c.name, resp.StatusCode, err, c.want)
		}
	}
}
