package main

import (
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/agenthost/agenthost/host/testenv"
)

var setupLine = regexp.MustCompile(`setup="?(http://[^ ]+)/#setup=(ahs_[A-Za-z0-9_-]{43})`)

// TestServeFirstRun: a server started on a fresh data directory (and a
// fresh PostgreSQL) has nobody who could sign in; it prints a one-time setup
// link, and the link makes the first organisation and signs its admin in,
// once. A restart of the set-up server prints no link.
func TestServeFirstRun(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the server with the built-in plugins")
	}
	for _, db := range []struct {
		name     string
		database func(t *testing.T) string
	}{
		{"sqlite", func(*testing.T) string { return "" }},
		{"postgres", func(t *testing.T) string { return testenv.Postgres(t) }},
	} {
		t.Run(db.name, func(t *testing.T) {
			database := db.database(t)
			data := filepath.Join(t.TempDir(), "data")
			storage := []string{"-data", data, "-database", database}
			if database != "" {
				if _, stderr, err := run0(t, append([]string{"migrate"}, storage...)...); err != nil {
					t.Fatalf("migrate: %v\n%s", err, stderr)
				}
			}
			logs := &syncBuffer{}
			base := serveInProcess(t, logs, storage...)
			m := setupLine.FindStringSubmatch(logs.String())
			if m == nil {
				t.Fatalf("a fresh server printed no setup link:\n%s", logs.String())
			}
			if m[1] != base {
				t.Errorf("the link points at %s, the server is at %s", m[1], base)
			}
			link := m[2]
			client := &http.Client{}
			t.Cleanup(client.CloseIdleConnections)
			call := func(method, path, body string, cookie string) (int, []byte, *http.Response) {
				t.Helper()
				req, _ := http.NewRequest(method, base+"/api/v1"+path, strings.NewReader(body))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Origin", base)
				if cookie != "" {
					req.Header.Set("Cookie", cookie)
				}
				resp, err := client.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				defer resp.Body.Close()
				raw, _ := io.ReadAll(resp.Body)
				return resp.StatusCode, raw, resp
			}
			if st, raw, _ := call("GET", "/setup", "", ""); st != 200 || !strings.Contains(string(raw), `"needed":true`) {
				t.Fatalf("setup state: %d %s", st, raw)
			}
			setup := func(secret string) string {
				b, _ := json.Marshal(map[string]string{"link": secret, "organisation": "Acme", "email": "ada@acme.example", "name": "Ada"})
				return string(b)
			}
			refused := []struct {
				name   string
				body   string
				status int
			}{
				{"a wrong link", setup("ahs_" + strings.Repeat("A", 43)), 401},
				{"no link", setup(""), 401},
				{"no organisation", `{"link":"` + link + `","organisation":" ","email":"ada@acme.example"}`, 400},
				{"an unknown field", `{"link":"` + link + `","organisation":"Acme","email":"ada@acme.example","admin":true}`, 400},
			}
			for _, c := range refused {
				if st, raw, _ := call("POST", "/setup", c.body, ""); st != c.status {
					t.Errorf("%s: %d %s, want %d", c.name, st, raw, c.status)
				}
			}
			// Another site cannot use a link it learnt.
			req, _ := http.NewRequest("POST", base+"/api/v1/setup", strings.NewReader(setup(link)))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Origin", "https://evil.example")
			if resp, err := client.Do(req); err != nil || resp.StatusCode != 403 {
				t.Fatalf("setup from another origin: %v %v", resp, err)
			} else {
				resp.Body.Close()
			}

			st, raw, resp := call("POST", "/setup", setup(link), "")
			if st != 201 {
				t.Fatalf("setup: %d %s", st, raw)
			}
			var done struct {
				Token string
				User  struct {
					Email string
					Admin bool
				}
				Tenant     struct{ Name string }
				Workspaces []struct{ ID string }
			}
			if err := json.Unmarshal(raw, &done); err != nil || !strings.HasPrefix(done.Token, "ahk_") || !done.User.Admin ||
				done.User.Email != "ada@acme.example" || done.Tenant.Name != "Acme" || len(done.Workspaces) != 1 {
				t.Fatalf("setup answered %s (%v)", raw, err)
			}
			var cookie string
			for _, c := range resp.Cookies() {
				if c.Name == "agenthost_session" {
					cookie = c.Name + "=" + c.Value
				}
			}
			if cookie == "" {
				t.Fatal("setup set no session cookie")
			}
			if st, raw, _ := call("GET", "/session", "", cookie); st != 200 || !strings.Contains(string(raw), "ada@acme.example") {
				t.Fatalf("the session of the setup: %d %s", st, raw)
			}
			// The token works for programs too.
			req, _ = http.NewRequest("GET", base+"/api/v1/workspaces", nil)
			req.Header.Set("Authorization", "Bearer "+done.Token)
			if resp, err := client.Do(req); err != nil || resp.StatusCode != 200 {
				t.Fatalf("the setup's token: %v %v", resp, err)
			} else {
				resp.Body.Close()
			}
			if st, raw, _ := call("POST", "/setup", setup(link), ""); st != 409 {
				t.Fatalf("the link used again: %d %s", st, raw)
			}
			if st, raw, _ := call("GET", "/setup", "", ""); st != 200 || !strings.Contains(string(raw), `"needed":false`) {
				t.Fatalf("setup state after the setup: %d %s", st, raw)
			}

			// A restart of a set-up server prints no link.
			again := &syncBuffer{}
			serveInProcess(t, again, storage...)
			if strings.Contains(again.String(), "#setup=") {
				t.Fatalf("a set-up server printed a setup link:\n%s", again.String())
			}
		})
	}
}

// TestBrowserFirstRun opens a fresh server's setup link in headless
// Chromium (host/webui/e2e/setup.test.mjs): the organisation is created in
// the page, the browser signed in, the token shown once, the link spent.
func TestBrowserFirstRun(t *testing.T) {
	e2e := browserPrereqs(t)
	logs := &syncBuffer{}
	base := serveInProcess(t, logs, "-data", filepath.Join(t.TempDir(), "data"))
	m := setupLine.FindStringSubmatch(logs.String())
	if m == nil {
		t.Fatalf("a fresh server printed no setup link:\n%s", logs.String())
	}
	artefacts, _ := filepath.Abs(filepath.Join("..", "..", "bin", "ui-artefacts"))
	if err := os.MkdirAll(artefacts, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("node", filepath.Join(e2e, "setup.test.mjs"))
	cmd.Dir = e2e
	cmd.Env = append(os.Environ(), "UI_BASE="+base, "UI_SETUP_URL="+m[1]+"/#setup="+m[2], "UI_ARTEFACTS="+artefacts, "UI_CHROMIUM="+chromium)
	out, err := cmd.CombinedOutput()
	t.Logf("setup.test.mjs:\n%s", out)
	if err != nil {
		t.Fatalf("setup.test.mjs: %v", err)
	}
}
