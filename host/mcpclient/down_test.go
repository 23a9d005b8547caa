package mcpclient_test

import (
	"context"
	"encoding/json"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/agenthost/agenthost/host/agent"
	"github.com/agenthost/agenthost/host/llm"
	"github.com/agenthost/agenthost/host/llm/llmtest"
	"github.com/agenthost/agenthost/host/llm/modeluse"
	"github.com/agenthost/agenthost/host/mcpclient"
	"github.com/agenthost/agenthost/host/mcpclient/mcpconfig"
	"github.com/agenthost/agenthost/host/mcpclient/referencetest"
	"github.com/agenthost/agenthost/host/rounds"
	"github.com/agenthost/agenthost/host/tenancy"
	"github.com/agenthost/agenthost/host/tools"
	"github.com/agenthost/agenthost/host/wasm"
	"github.com/agenthost/agenthost/host/wasm/wasmtest"
	"github.com/agenthost/agenthost/host/workflows"
	"github.com/agenthost/agenthost/host/worldtest"
)

// TestReferenceHTTPServerGoesDown: the reference server-everything over
// streamable HTTP is killed in the middle of a call. The call in flight
// ends with an error that says the server went away; afterwards its tools
// stay listed, each unavailable with the reason and since when, and a call
// is not_reachable in a person's words (not the SDK's "rejected by
// transport"). Started again on its port, the server's tools are
// available again once the back-off allows a try.
func TestReferenceHTTPServerGoesDown(t *testing.T) {
	ref := referencetest.StartHTTP(t)
	s, sealer := remote(t, ref.URL, mcpconfig.Secrets{}, mcpconfig.Config{ReadOnly: []string{"echo"}, TimeoutMs: 60000})
	src, _ := source(t, s, mcpclient.Options{Sealer: sealer, AllowPrivateHosts: []string{ref.Addr}})
	ctx := context.Background()
	list, err := src.Tools(ctx)
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]tools.Tool{}
	for _, tl := range list {
		byName[tl.Name] = tl
	}
	if tl, ok := byName["remote_echo"]; !ok || !tl.ReadOnly || tl.Unavailable != "" {
		t.Fatalf("remote_echo while up: %+v (tools %d)", tl, len(list))
	}
	if r := src.Call(ctx, "remote_echo", []byte(`{"message":"up"}`)); !r.OK || r.Text != "Echo: up" {
		t.Fatalf("echo while up: %+v", r)
	}

	// A long call is running when the server is killed.
	done := make(chan wasm.Result, 1)
	go func() {
		done <- src.Call(ctx, "remote_trigger-long-running-operation", []byte(`{"duration":30,"steps":30}`))
	}()
	time.Sleep(1500 * time.Millisecond)
	killed := time.Now()
	ref.Kill()
	select {
	case r := <-done:
		if r.OK || r.Error.Code != wasm.CodeNotReachable || !strings.Contains(r.Error.Message, "went away during the call") ||
			strings.Contains(r.Error.Message, "rejected by transport") {
			t.Fatalf("the call in flight: %+v", r.Error)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the call in flight did not end within 20 s of the server's death")
	}

	// Listed, unavailable, with the reason and since when.
	var down []tools.Tool
	deadline := time.Now().Add(20 * time.Second)
	for {
		if down, err = src.Tools(ctx); err != nil {
			t.Fatalf("tools while down: %v", err)
		}
		if len(down) > 0 && down[0].Unavailable != "" || time.Now().After(deadline) {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	if len(down) != len(list) {
		t.Fatalf("while down %d tools are listed, %d while up", len(down), len(list))
	}
	for _, tl := range down {
		if !strings.Contains(tl.Unavailable, `"remote" is not reachable since`) || !strings.Contains(tl.Unavailable, "connection refused") ||
			tl.UnavailableSince == nil || tl.UnavailableSince.Before(killed.Add(-time.Second)) || tl.UnavailableSince.After(time.Now()) {
			t.Fatalf("%s while down: %q since %v (killed at %v)", tl.Name, tl.Unavailable, tl.UnavailableSince, killed)
		}
	}
	r := src.Call(ctx, "remote_echo", []byte(`{"message":"down"}`))
	if r.OK || r.Error.Code != wasm.CodeNotReachable || !strings.Contains(r.Error.Message, "not reachable") ||
		strings.Contains(r.Error.Message, "rejected by transport") {
		t.Fatalf("a call while down: %+v", r.Error)
	}

	// Back on its port: available again after the back-off.
	ref.Restart(t)
	deadline = time.Now().Add(30 * time.Second)
	for {
		up, err := src.Tools(ctx)
		if err == nil && len(up) == len(list) && up[0].Unavailable == "" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("not available again: %+v %v", up, err)
		}
		time.Sleep(250 * time.Millisecond)
	}
	if r := src.Call(ctx, "remote_echo", []byte(`{"message":"again"}`)); !r.OK || r.Text != "Echo: again" {
		t.Fatalf("echo when back: %+v", r)
	}
}

// TestAgentRunWithAServerDown: the reference server-everything over HTTP
// listed its tools, then died. A workflow's round still offers them to the
// model, each described as unavailable with the reason; the round's log
// says which tools cannot be called and why; the model's call of one is a
// not_reachable result, and the round goes on to its answer.
func TestAgentRunWithAServerDown(t *testing.T) {
	ctx := context.Background()
	world := worldtest.New(t, worldtest.Options{Model: &worldtest.Model{
		Models: map[modeluse.Operation][]llm.ModelConfig{modeluse.OpAgent: {{Model: "scripted"}}},
		Retry:  llm.RetryConfig{Attempts: 1},
	}})
	db, p, ws, srv := world.DB, world.P, world.Workspace, world.Server
	ref := referencetest.StartHTTP(t)
	admin := tenancy.Principal{TenantID: p.TenantID, Admin: true}
	if _, err := db.CreateMCPServer(ctx, admin, mcpconfig.Server{Name: "remote", WorkspaceID: ws, Config: mcpconfig.Config{
		Transport: mcpconfig.HTTP, URL: ref.URL, ReadOnly: []string{"echo"}}}); err != nil {
		t.Fatal(err)
	}
	// And one never reached: nothing listed, so nothing to mark; the round
	// says so instead.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	gone := ln.Addr().String()
	ln.Close()
	if _, err := db.CreateMCPServer(ctx, admin, mcpconfig.Server{Name: "gone", WorkspaceID: ws, Config: mcpconfig.Config{
		Transport: mcpconfig.HTTP, URL: "http://" + gone + "/mcp"}}); err != nil {
		t.Fatal(err)
	}
	mgr, err := mcpclient.New(db, mcpclient.Options{DataDir: t.TempDir(), AllowPrivateHosts: []string{ref.Addr, gone}})
	if err != nil {
		t.Fatal(err)
	}
	defer mgr.Close()
	reg := tools.NewRegistry(wasmtest.Host(t, "notebook"), map[string][]string{"core": {"lookup"}}).WithSources(mgr)
	set, _, err := reg.WorkspaceSet(ctx, p, ws, "core")
	if err != nil || len(set.Tools()) < 3 {
		t.Fatalf("while up: %v %v", set.Tools(), err)
	}
	ref.Kill()
	deadline := time.Now().Add(20 * time.Second)
	for {
		set, _, err = reg.WorkspaceSet(ctx, p, ws, "core")
		if tl, _ := set.Lookup("remote_echo"); err != nil || tl.Unavailable != "" || time.Now().After(deadline) {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}

	svc := rounds.New(world.Workflows, world.Files, agent.New(world.Client, agent.Config{}, nil), reg, db, rounds.Config{}, nil)
	defer svc.Close()
	srv.Script(
		llmtest.CallTools(llmtest.Call("remote_echo", `{"message":"anyone?"}`)),
		llmtest.Reply("The remote server is not reachable."),
	)
	w, err := svc.Start(ctx, p, ws, rounds.StartRequest{Prompt: "Echo through the remote server."})
	if err != nil {
		t.Fatal(err)
	}
	svc.Wait()
	if w, err = world.Workflows.Get(ctx, p, w.ID); err != nil || w.Status != workflows.StatusCompleted {
		t.Fatalf("workflow %+v %v", w, err)
	}
	var offered string
	for _, tl := range srv.ChatRequests()[0].Tools {
		if tl.Name == "remote_echo" {
			offered = tl.Description
		}
	}
	if !strings.HasPrefix(offered, `[Unavailable now: the MCP server "remote" is not reachable since `) {
		t.Fatalf("remote_echo as the model was offered it: %q", offered)
	}
	logs, err := world.Workflows.Logs(ctx, p, w.ID, workflows.After{}, 1000)
	if err != nil {
		t.Fatal(err)
	}
	var note, left string
	for _, l := range logs {
		if l.Type == workflows.LogWarning && strings.Contains(l.Message, "remote_echo") {
			note = l.Message
		}
		if l.Type == workflows.LogWarning && strings.HasPrefix(l.Message, "Tools left out of this round: mcp:gone: ") {
			left = l.Message
		}
	}
	if !strings.Contains(left, `the MCP server "gone" is not reachable`) {
		t.Errorf("the round's note on the server never reached: %q (logs %+v)", left, logs)
	}
	if !strings.HasPrefix(note, "Tools unavailable in this round: ") || !strings.Contains(note, "remote_get-sum") ||
		!strings.Contains(note, `the MCP server "remote" is not reachable since`) {
		t.Fatalf("the round's note: %q (logs %+v)", note, logs)
	}
	evs, err := world.Workflows.Events(ctx, p, w.ID, 0, 1000)
	if err != nil {
		t.Fatal(err)
	}
	var res *workflows.ToolResultData
	for _, ev := range evs {
		if ev.Type == workflows.EventToolResult {
			var d workflows.ToolResultData
			if err := json.Unmarshal(ev.Data, &d); err != nil {
				t.Fatal(err)
			}
			res = &d
		}
	}
	if res == nil || res.OK || res.ErrorCode != wasm.CodeNotReachable || !strings.Contains(res.Error, "not reachable") {
		t.Fatalf("the call's result: %+v", res)
	}
}
