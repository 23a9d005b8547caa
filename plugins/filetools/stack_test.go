//go:build !wasip1

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"testing"

	"github.com/agenthost/agenthost/host/agent"
	"github.com/agenthost/agenthost/host/api"
	"github.com/agenthost/agenthost/host/rounds"
	"github.com/agenthost/agenthost/host/tools"
)

// stack is the running server over the env: the HTTP API on a real
// listener, the workspace runner with a scripted agent, the tools as the
// built plugin; tokens of the env's user (p) and colleague (bob).
type stack struct {
	*env
	base     string
	token    string
	bobToken string
	runner   *rounds.Service
}

func newStack(t testing.TB) *stack {
	t.Helper()
	e := newEnv(t, agentModel())
	ctx := context.Background()
	ag := agent.New(e.w.Client, agent.Config{MaxRounds: 8}, nil)
	registry := tools.NewRegistry(e.host, nil)
	runner := rounds.New(e.wf, e.svc, ag, registry, e.db, rounds.Config{}, nil)
	t.Cleanup(runner.Close)
	app := api.New(api.Deps{Logger: slog.New(slog.DiscardHandler), Plugins: e.host, Ready: func() error { return nil },
		Auth: e.db, Tokens: e.db, Workspaces: e.db, Files: e.svc, MaxBody: 2 << 20,
		Workflows: e.wf, Workspace: runner, Tools: registry, WorkspaceTools: e.db})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go app.Listener(ln)
	t.Cleanup(func() { app.Shutdown() })
	s := &stack{env: e, base: "http://" + ln.Addr().String() + "/api/v1", runner: runner}
	if _, s.token, err = e.db.CreateToken(ctx, e.p.UserID, "test", nil); err != nil {
		t.Fatal(err)
	}
	if _, s.bobToken, err = e.db.CreateToken(ctx, e.bob.UserID, "test", nil); err != nil {
		t.Fatal(err)
	}
	return s
}

// do sends a request with token and decodes a JSON answer into out (when
// not nil); it returns the status and the raw body.
func (s *stack) do(t testing.TB, token, method, path string, body any, out any) (int, []byte) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, s.base+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if out != nil && resp.StatusCode < 300 {
		if err := json.Unmarshal(raw, out); err != nil {
			t.Fatalf("%s %s: %s: %v", method, path, raw, err)
		}
	}
	return resp.StatusCode, raw
}
