package mcpserver_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agenthost/agenthost/host/mcpclient"
	"github.com/agenthost/agenthost/host/mcpclient/mcpconfig"
	"github.com/agenthost/agenthost/host/mcpclient/referencetest"
	"github.com/agenthost/agenthost/host/mcpserver"
	"github.com/agenthost/agenthost/host/rounds"
	"github.com/agenthost/agenthost/host/tenancy"
	"github.com/agenthost/agenthost/host/tools"
	"github.com/agenthost/agenthost/host/wasm/wasmtest"
	"github.com/agenthost/agenthost/host/worldtest"
)

// defaultPolicies applies the policies a workspace has before anyone sets
// one (workspace.DefaultPolicy): ask for a tool with an external side
// effect, auto for the others.
type defaultPolicies struct{}

func (defaultPolicies) ToolPolicyOf(_ context.Context, _ tenancy.Principal, _ string, t tools.Tool) (string, error) {
	return string(rounds.DefaultPolicy(t)), nil
}

// tsTool is a tool as the TypeScript SDK's client lists it.
type tsTool struct {
	Name        string         `json:"name"`
	Title       string         `json:"title"`
	Description string         `json:"description"`
	Annotations map[string]any `json:"annotations"`
	Meta        map[string]any `json:"meta"`
}

// tsClient drives tstools.mjs: one session of the TypeScript SDK's client.
type tsClient struct {
	t       *testing.T
	in      io.Writer
	out     *bufio.Scanner
	changed int // tools/list_changed notifications seen
}

func startTSClient(t *testing.T, url, token string) *tsClient {
	t.Helper()
	node, dir := tsNode(t)
	ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
	t.Cleanup(cancel)
	cmd := exec.CommandContext(ctx, node, filepath.Join(dir, "tstools.mjs"), url, token)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "NODE_PATH="+filepath.Join(dir, "node_modules"))
	cmd.Stderr = os.Stderr
	in, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	c := &tsClient{t: t, in: in, out: bufio.NewScanner(out)}
	c.out.Buffer(nil, 8<<20)
	if m := c.next(); m["session"] == nil {
		t.Fatalf("no session: %v", m)
	}
	return c
}

// next is the client's next answer (notifications counted, not returned).
func (c *tsClient) next() map[string]any {
	c.t.Helper()
	for {
		if !c.out.Scan() {
			c.t.Fatalf("the TypeScript client ended: %v", c.out.Err())
		}
		var m map[string]any
		if err := json.Unmarshal(c.out.Bytes(), &m); err != nil {
			c.t.Fatalf("the TypeScript client said %q", c.out.Text())
		}
		if m["changed"] == true {
			c.changed++
			continue
		}
		return m
	}
}

func (c *tsClient) list() map[string]tsTool {
	c.t.Helper()
	io.WriteString(c.in, "list\n")
	m := c.next()
	var got struct{ Tools []tsTool }
	if err := json.Unmarshal([]byte(toJSON(m)), &got); err != nil || got.Tools == nil {
		c.t.Fatalf("list: %v", m)
	}
	out := map[string]tsTool{}
	for _, tl := range got.Tools {
		out[tl.Name] = tl
	}
	return out
}

// call returns the result's text and whether it is an error.
func (c *tsClient) call(name, args string) (string, bool) {
	c.t.Helper()
	io.WriteString(c.in, "call "+name+" "+args+"\n")
	m := c.next()
	var got struct {
		Result struct {
			IsError bool `json:"isError"`
			Content []struct{ Text string }
		}
		Error string
	}
	if err := json.Unmarshal([]byte(toJSON(m)), &got); err != nil || got.Error != "" {
		c.t.Fatalf("call %s: %v", name, m)
	}
	var texts []string
	for _, b := range got.Result.Content {
		texts = append(texts, b.Text)
	}
	return strings.Join(texts, "\n"), got.Result.IsError
}

// TestExternalToolsOnTheEndpoint (issue 30 item 7): a workspace's external
// MCP servers (the reference server-everything over stdio and over HTTP)
// are on its MCP endpoint as the official TypeScript SDK's client lists
// them: named with their server's prefix, titled and described as the
// server's (their descriptions are the server's words), read-only only
// where the admin trusted the claim, open-world; a tool not known
// read-only goes through the approval policy (ask, which this client
// cannot answer). The HTTP server is killed mid-session: the same session
// is told the list changed, its tools stay listed as unavailable with the
// reason and since when, and a call says not_reachable. A manager leaves
// the external tools out of the endpoint with the workspace's setting.
func TestExternalToolsOnTheEndpoint(t *testing.T) {
	ctx := context.Background()
	w := worldtest.New(t, worldtest.Options{Workspaces: []string{"a"}})
	ws := w.Workspaces[0]
	admin := tenancy.Principal{TenantID: w.Tenant.ID, Admin: true}
	ref := referencetest.StartHTTP(t)
	stdio := referencetest.Command(t, "server-everything", "stdio")
	for _, s := range []mcpconfig.Server{
		{Name: "everything", WorkspaceID: ws, Config: mcpconfig.Config{Transport: mcpconfig.Stdio, Command: stdio, ReadOnly: []string{"echo"}}},
		{Name: "remote", WorkspaceID: ws, Config: mcpconfig.Config{Transport: mcpconfig.HTTP, URL: ref.URL, ReadOnly: []string{"echo"}}},
	} {
		if _, err := w.DB.CreateMCPServer(ctx, admin, s); err != nil {
			t.Fatal(err)
		}
	}
	mgr, err := mcpclient.New(w.DB, mcpclient.Options{DataDir: t.TempDir(), Commands: []string{strings.Join(stdio[:2], " ")},
		AllowPrivateHosts: []string{ref.Addr}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { mgr.Close() })
	host := wasmtest.Host(t, "notebook")
	reg := tools.NewRegistry(host, map[string][]string{"core": {"*"}}).WithSources(mgr)
	srv := mcpserver.New(mcpserver.Deps{Auth: w.DB, Workspaces: w.DB, Tools: reg, Catalog: host, Sessions: w.DB,
		External: w.DB, Policies: defaultPolicies{}})
	ts := httptest.NewServer(srv)
	t.Cleanup(ts.Close)
	_, token, err := w.DB.CreateToken(ctx, w.User.ID, "mcp", nil)
	if err != nil {
		t.Fatal(err)
	}
	url := ts.URL + "/api/v1/workspaces/" + ws + "/mcp"
	c := startTSClient(t, url, token)

	listed := c.list()
	for _, name := range []string{"lookup", "writeNote", "everything_echo", "everything_get-sum", "everything_get-env", "remote_echo", "remote_get-sum"} {
		if _, ok := listed[name]; !ok {
			t.Fatalf("%s is not listed (%d tools)", name, len(listed))
		}
	}
	for name, tl := range listed {
		server, _, _ := strings.Cut(name, "_")
		ext := server == "everything" || server == "remote"
		switch {
		case !ext:
			if tl.Meta[`agenthost/source`] != nil || strings.Contains(tl.Description, "external MCP server") {
				t.Errorf("the plugin's %s is marked external: %+v", name, tl)
			}
		case tl.Meta["agenthost/source"] != "mcp:"+server || !strings.Contains(tl.Title, `external MCP server "`+server+`"`) ||
			!strings.HasPrefix(tl.Description, `[A tool of the external MCP server "`+server+`", not of agenthost;`) ||
			tl.Annotations["openWorldHint"] != true:
			t.Errorf("%s is not marked as %s's: %+v", name, server, tl)
		}
	}
	for name, readOnly := range map[string]bool{"everything_echo": true, "remote_echo": true, "everything_get-env": false, "remote_get-sum": false, "lookup": true} {
		tl := listed[name]
		if got := tl.Annotations["readOnlyHint"] == true; got != readOnly || (!readOnly && tl.Annotations["destructiveHint"] != true) {
			t.Errorf("%s: annotations %v, want read-only %v", name, tl.Annotations, readOnly)
		}
	}
	if text, isErr := c.call("everything_echo", `{"message":"over stdio"}`); isErr || text != "Echo: over stdio" {
		t.Fatalf("everything_echo: %q %v", text, isErr)
	}
	if text, isErr := c.call("remote_echo", `{"message":"over http"}`); isErr || text != "Echo: over http" {
		t.Fatalf("remote_echo: %q %v", text, isErr)
	}
	// Not known read-only: external, so the default policy asks, and this
	// client cannot be asked.
	if text, isErr := c.call("everything_get-env", `{}`); !isErr || !strings.HasPrefix(text, "approval_required:") {
		t.Fatalf("everything_get-env: %q %v", text, isErr)
	}

	// The HTTP server dies; the session goes on.
	ref.Kill()
	var down map[string]tsTool
	deadline := time.Now().Add(30 * time.Second)
	for {
		down = c.list()
		if down["remote_echo"].Meta["agenthost/unavailable"] != nil || time.Now().After(deadline) {
			break
		}
		time.Sleep(300 * time.Millisecond)
	}
	if len(down) != len(listed) {
		t.Fatalf("while down %d tools are listed, %d before", len(down), len(listed))
	}
	for name, tl := range down {
		remote := strings.HasPrefix(name, "remote_")
		reason, _ := tl.Meta["agenthost/unavailable"].(string)
		since, _ := tl.Meta["agenthost/unavailableSince"].(string)
		switch {
		case remote && (!strings.Contains(reason, `the MCP server "remote" is not reachable since`) || since == "" ||
			!strings.HasPrefix(tl.Description, "[Unavailable now: "+reason+".] [A tool of the external MCP server")):
			t.Errorf("%s while down: %+v", name, tl)
		case !remote && reason != "":
			t.Errorf("%s is unavailable: %q", name, reason)
		}
	}
	if text, isErr := c.call("remote_echo", `{"message":"down"}`); !isErr || !strings.HasPrefix(text, "not_reachable: ") ||
		!strings.Contains(text, "not reachable") || strings.Contains(text, "rejected by transport") {
		t.Fatalf("remote_echo while down: %q %v", text, isErr)
	}
	// Nobody is asked to approve a call that cannot reach its server.
	if text, isErr := c.call("remote_get-sum", `{"a":1,"b":2}`); !isErr || !strings.HasPrefix(text, "not_reachable: ") {
		t.Fatalf("remote_get-sum (ask) while down: %q %v", text, isErr)
	}
	if text, isErr := c.call("everything_echo", `{"message":"still"}`); isErr || text != "Echo: still" {
		t.Fatalf("everything_echo while remote is down: %q %v", text, isErr)
	}
	// The notification comes on the session's own stream, beside the
	// answers: it may arrive after the calls above were answered. A list
	// reads what came meanwhile.
	for deadline := time.Now().Add(30 * time.Second); c.changed == 0 && time.Now().Before(deadline); {
		c.list()
		time.Sleep(100 * time.Millisecond)
	}
	if c.changed == 0 {
		t.Error("the session was not told that the tool list changed")
	}

	// A manager leaves the external tools out of the endpoint.
	if err := w.DB.SetWorkspaceMCPExternalTools(ctx, admin, ws, false); err != nil {
		t.Fatal(err)
	}
	only := c.list()
	for name := range only {
		if strings.Contains(name, "_") {
			t.Errorf("%s is offered although the workspace leaves external tools out", name)
		}
	}
	if _, ok := only["lookup"]; !ok || len(only) != 2 {
		t.Errorf("without external tools: %v", only)
	}
	// Not offered, so not known to the session: a protocol error.
	io.WriteString(c.in, "call everything_echo {}\n")
	if m := c.next(); !strings.Contains(toJSON(m["error"]), `unknown tool \"everything_echo\"`) {
		t.Fatalf("an external tool called while left out: %v", m)
	}
}
