package mcpclient_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agenthost/agenthost/host/agent"
	"github.com/agenthost/agenthost/host/billing"
	"github.com/agenthost/agenthost/host/llm"
	"github.com/agenthost/agenthost/host/llm/llmtest"
	"github.com/agenthost/agenthost/host/llm/modeluse"
	"github.com/agenthost/agenthost/host/mcpclient"
	"github.com/agenthost/agenthost/host/mcpclient/mcpconfig"
	"github.com/agenthost/agenthost/host/rounds"
	"github.com/agenthost/agenthost/host/tenancy"
	"github.com/agenthost/agenthost/host/tools"
	"github.com/agenthost/agenthost/host/wasm/wasmtest"
	"github.com/agenthost/agenthost/host/workflows"
	"github.com/agenthost/agenthost/host/worldtest"
)

// referenceServer returns the command that runs one of the reference MCP
// servers installed in testdata/npm (.ci/testdeps installs them).
func referenceServer(t *testing.T, pkg string, args ...string) []string {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatal("node is required for this test (see .ci/testdeps)")
	}
	script, err := filepath.Abs(filepath.Join("testdata", "npm", "node_modules", "@modelcontextprotocol", pkg, "dist", "index.js"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(script); err != nil {
		t.Fatalf("@modelcontextprotocol/%s is not installed: run `npm install` in host/mcpclient/testdata/npm (make testdeps does)", pkg)
	}
	return append([]string{node, script}, args...)
}

// TestAgentCallsReferenceServers: an admin adds the reference servers
// server-everything (to one workspace) and server-memory (to the tenant)
// over stdio; the scripted agent of a workflow sees their tools beside a
// plugin's, calls them, and the workflow's events show the calls and the
// servers' answers. server-memory keeps its graph in its own directory
// (outside the data directory);
// server-everything's environment holds nothing of the host's; every call
// is a usage record.
func TestAgentCallsReferenceServers(t *testing.T) {
	ctx := context.Background()
	t.Setenv("AGENTHOST_CANARY", "must-not-reach-the-server")
	world := worldtest.New(t, worldtest.Options{Model: &worldtest.Model{
		Models: map[modeluse.Operation][]llm.ModelConfig{modeluse.OpAgent: {{Model: "scripted"}}},
		Retry:  llm.RetryConfig{Attempts: 1},
	}})
	db, p, ws, srv := world.DB, world.P, world.Workspace, world.Server
	admin := tenancy.Principal{TenantID: p.TenantID, Admin: true}
	everything, err := db.CreateMCPServer(ctx, admin, mcpconfig.Server{Name: "everything", WorkspaceID: ws, Config: mcpconfig.Config{
		Transport: mcpconfig.Stdio, Command: referenceServer(t, "server-everything", "stdio"), ReadOnly: []string{"echo", "get-sum"}}})
	if err != nil {
		t.Fatal(err)
	}
	memory, err := db.CreateMCPServer(ctx, admin, mcpconfig.Server{Name: "memory", Config: mcpconfig.Config{
		Transport: mcpconfig.Stdio, Command: referenceServer(t, "server-memory"),
		Env: map[string]string{"MEMORY_FILE_PATH": "${WORKDIR}/memory.jsonl"}, ReadOnly: []string{"*"}}})
	if err != nil {
		t.Fatal(err)
	}
	data := t.TempDir()
	meter := billing.NewMeter(db, billing.Prices{}, nil)
	mgr, err := mcpclient.New(db, mcpclient.Options{DataDir: data, Meter: meter,
		Commands: []string{strings.Join(everything.Config.Command[:2], " "), "env=MEMORY_FILE_PATH " + strings.Join(memory.Config.Command, " ")}})
	if err != nil {
		t.Fatal(err)
	}
	defer mgr.Close()
	reg := tools.NewRegistry(wasmtest.Host(t, "notebook"), map[string][]string{"core": {"lookup"}}).WithSources(mgr)
	svc := rounds.New(world.Workflows, world.Files, agent.New(world.Client, agent.Config{}, nil), reg, db, rounds.Config{}, nil)
	defer svc.Close()

	srv.Script(
		llmtest.CallTools(llmtest.Call("everything_echo", `{"message":"hello over stdio"}`), llmtest.Call("everything_get-sum", `{"a":2,"b":40}`)),
		llmtest.CallTools(llmtest.Call("memory_create_entities", `{"entities":[{"name":"Ada Lovelace","entityType":"person","observations":["wrote the first program"]}]}`)),
		llmtest.CallTools(llmtest.Call("memory_search_nodes", `{"query":"Ada"}`), llmtest.Call("everything_get-env", `{}`)),
		llmtest.CallTools(llmtest.Call("everything_get-sum", `{"a":"two"}`)),
		llmtest.Reply("Ada Lovelace is remembered; 2 + 40 = 42."),
	)
	w, err := svc.Start(ctx, p, ws, rounds.StartRequest{Prompt: "Remember Ada and add 2 and 40."})
	if err != nil {
		t.Fatal(err)
	}
	svc.Wait()
	if w, err = world.Workflows.Get(ctx, p, w.ID); err != nil || w.Status != workflows.StatusCompleted {
		t.Fatalf("workflow %+v %v", w, err)
	}

	// The model was offered the servers' tools beside the plugin's.
	offered := map[string]bool{}
	for _, tl := range srv.ChatRequests()[0].Tools {
		offered[tl.Name] = true
		if tl.Name == "everything_get-sum" && (!strings.Contains(string(tl.Parameters), `"a"`) || strings.Contains(string(tl.Parameters), "$schema")) {
			t.Errorf("get-sum's parameters as the model sees them: %s", tl.Parameters)
		}
	}
	for _, n := range []string{"lookup", "everything_echo", "everything_get-sum", "everything_get-env", "memory_create_entities", "memory_read_graph", "memory_search_nodes"} {
		if !offered[n] {
			t.Errorf("the model was not offered %s (offered %v)", n, offered)
		}
	}

	evs, err := world.Workflows.Events(ctx, p, w.ID, 0, 1000)
	if err != nil {
		t.Fatal(err)
	}
	calls := map[string]int{}
	results := map[string][]workflows.ToolResultData{}
	for _, ev := range evs {
		switch ev.Type {
		case workflows.EventToolCall:
			var d workflows.ToolCallData
			if err := json.Unmarshal(ev.Data, &d); err != nil {
				t.Fatal(err)
			}
			calls[d.Tool]++
		case workflows.EventToolResult:
			var d workflows.ToolResultData
			if err := json.Unmarshal(ev.Data, &d); err != nil {
				t.Fatal(err)
			}
			results[d.Tool] = append(results[d.Tool], d)
		}
	}
	ok := func(tool, want string) string {
		t.Helper()
		rs := results[tool]
		if calls[tool] == 0 || len(rs) == 0 || !rs[0].OK || !strings.Contains(rs[0].Content, want) {
			t.Fatalf("%s: %d calls, results %+v, want ok containing %q", tool, calls[tool], rs, want)
		}
		return rs[0].Content
	}
	ok("everything_echo", "Echo: hello over stdio")
	ok("everything_get-sum", "The sum of 2 and 40 is 42.")
	ok("memory_create_entities", "Ada Lovelace")
	ok("memory_search_nodes", "wrote the first program")
	env := ok("everything_get-env", mcpconfig.SafePath)
	if strings.Contains(env, "AGENTHOST_CANARY") || strings.Contains(env, "HOME") {
		t.Fatalf("the server saw the host's environment: %s", env)
	}
	// Arguments that break the tool's schema never reach the server.
	if rs := results["everything_get-sum"]; len(rs) != 2 || rs[1].OK || rs[1].ErrorCode != "invalid_arguments" || !strings.Contains(rs[1].Error, "/a") {
		t.Fatalf("get-sum with a bad argument: %+v", rs)
	}

	// server-memory kept its graph in its own directory (the search found
	// it), which is not in the data directory.
	if _, err := os.Stat(filepath.Join(data, "mcp")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the servers wrote in the data directory: %v", err)
	}

	// Every call the server answered is a usage record of the workflow,
	// attributed to the server.
	recs, err := db.UsageRecords(ctx, p, w.ID)
	if err != nil {
		t.Fatal(err)
	}
	billed := map[string]string{}
	for _, r := range recs {
		if r.Usage.Operation == billing.OpPlugin {
			billed[r.Purpose] = r.Usage.Model
		}
	}
	for tool, server := range map[string]string{"everything_echo": "mcp:everything", "everything_get-sum": "mcp:everything",
		"memory_create_entities": "mcp:memory", "memory_search_nodes": "mcp:memory", "everything_get-env": "mcp:everything"} {
		if billed["tool:"+tool] != server {
			t.Errorf("usage of %s: %q, want %q (records %v)", tool, billed["tool:"+tool], server, billed)
		}
	}
}
