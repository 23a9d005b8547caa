package api_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http/httptest"
	"testing"

	"github.com/agenthost/agenthost/host/api"
	"github.com/agenthost/agenthost/host/tenancy"
	"github.com/agenthost/agenthost/host/wasm"
)

type noPlugins struct{}

func (noPlugins) Plugins() []*wasm.Plugin { return nil }
func (noPlugins) Tools() []wasm.ToolInfo  { return nil }

// oneToken authenticates the secret "good" only.
type oneToken struct{}

func (oneToken) Authenticate(_ context.Context, secret string) (tenancy.Principal, error) {
	if secret != "good" {
		return tenancy.Principal{}, fmt.Errorf("%w: unknown token", tenancy.ErrUnauthenticated)
	}
	return tenancy.Principal{UserID: "u1", TenantID: "t1"}, nil
}

func TestRoutes(t *testing.T) {
	ready := errors.New("plugins are still compiling")
	app := api.New(api.Deps{Logger: slog.New(slog.DiscardHandler), Plugins: noPlugins{}, Ready: func() error { return ready }, Auth: oneToken{}})
	cases := []struct {
		name, path, token string
		status            int
		contentType       string
	}{
		{"starting", "/healthz", "", 503, "application/problem+json"},
		{"openapi without a token", "/api/v1/openapi.json", "", 200, "application/json"},
		{"plugins", "/api/v1/plugins", "good", 200, "application/json"},
		{"tools", "/api/v1/tools", "good", 200, "application/json"},
		{"plugins without a token", "/api/v1/plugins", "", 401, "application/problem+json"},
		{"tools without a token", "/api/v1/tools", "", 401, "application/problem+json"},
		{"plugins with a bad token", "/api/v1/plugins", "bad", 401, "application/problem+json"},
		{"unknown route", "/api/v1/nope", "good", 404, "application/problem+json"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			req := httptest.NewRequest("GET", tc.path, nil)
			if tc.token != "" {
				req.Header.Set("Authorization", "Bearer "+tc.token)
			}
			resp, err := app.Test(req)
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
