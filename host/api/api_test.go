package api_test

import (
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http/httptest"
	"testing"

	"github.com/agenthost/agenthost/host/api"
	"github.com/agenthost/agenthost/host/wasm"
)

type noPlugins struct{}

func (noPlugins) Plugins() []*wasm.Plugin { return nil }
func (noPlugins) Tools() []wasm.ToolInfo  { return nil }

func TestRoutes(t *testing.T) {
	ready := errors.New("plugins are still compiling")
	app := api.New(api.Deps{Logger: slog.New(slog.DiscardHandler), Plugins: noPlugins{}, Ready: func() error { return ready }})
	cases := []struct {
		name, path  string
		status      int
		contentType string
	}{
		{"starting", "/healthz", 503, "application/problem+json"},
		{"plugins", "/api/v1/plugins", 200, "application/json"},
		{"tools", "/api/v1/tools", 200, "application/json"},
		{"unknown route", "/api/v1/nope", 404, "application/problem+json"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			resp, err := app.Test(httptest.NewRequest("GET", tc.path, nil))
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != tc.status || resp.Header.Get("Content-Type") != tc.contentType {
				t.Fatalf("%s: %d %s %s", tc.path, resp.StatusCode, resp.Header.Get("Content-Type"), body)
			}
			if !json.Valid(body) {
				t.Fatalf("not JSON: %s", body)
			}
		})
	}
	ready = nil
	resp, _ := app.Test(httptest.NewRequest("GET", "/healthz", nil))
	if resp.StatusCode != 200 {
		t.Fatalf("healthz after start-up: %d", resp.StatusCode)
	}
}
