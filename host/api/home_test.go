package api_test

import (
	"errors"
	"io"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/agenthost/agenthost/host/api"
)

// TestHomePage: "/status" (and "/" without a UI) is a self-contained HTML page that says what the server
// is, links the API description and shows its state.
func TestHomePage(t *testing.T) {
	cases := []struct {
		name  string
		ready error
		model string
		want  []string
	}{
		{"ready with a model", nil, "gpt-4.1", []string{"ready", "Agent model: <span class=\"ok\">gpt-4.1</span>"}},
		{"starting without a model", errors.New("plugins are still compiling"), "",
			[]string{"starting: plugins are still compiling", "No agent model configured", "AGENTHOST_MODEL_AGENT"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			app := api.New(api.Deps{Logger: slog.New(slog.DiscardHandler), Plugins: noPlugins{},
				Ready: func() error { return tc.ready }, Auth: oneToken{}, Model: func() string { return tc.model }})
			resp, err := app.Test(httptest.NewRequest("GET", "/status", nil))
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") {
				t.Fatalf("/: %d %s %s", resp.StatusCode, resp.Header.Get("Content-Type"), body)
			}
			page := string(body)
			for _, w := range append(tc.want, "agenthost", "<main>", "<header>", `href="/api/v1/openapi.json"`, "Plugins loaded: 0") {
				if !strings.Contains(page, w) {
					t.Errorf("page lacks %q:\n%s", w, page)
				}
			}
			// No external assets: nothing the browser would fetch from elsewhere.
			for _, bad := range []string{"http://", "https://", "<script", "<img", "<link"} {
				if strings.Contains(page, bad) {
					t.Errorf("page has %q", bad)
				}
			}
		})
	}
}
