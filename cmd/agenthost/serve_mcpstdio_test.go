package main

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestServeStdioMCPCannotReadHost: a tenant admin adds a stdio MCP server
// through the API of a `serve` process started with the secret key and a
// model API key in its environment, and calls its tools over HTTP. A
// variable the operator did not allow is refused, naming it. From inside
// the server, the host's initial environment, memory and data directory
// are out of reach, the server's environment is PATH and what the operator
// allowed, and it runs outside the data directory.
func TestServeStdioMCPCannotReadHost(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a server")
	}
	// The hostile server, in a directory the server's user may enter.
	// (t.TempDir's are 0700, its parent too.)
	bin := t.TempDir()
	for _, d := range []string{bin, filepath.Dir(bin)} {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	hostile := filepath.Join(bin, "hostile")
	if out, err := exec.Command("go", "build", "-o", hostile, "../../host/mcpclient/testdata/hostile").CombinedOutput(); err != nil {
		t.Fatalf("building the hostile server: %v\n%s", err, out)
	}
	// As serve would make it, not as t.TempDir does (0700).
	data := filepath.Join(t.TempDir(), "data")
	if err := os.Mkdir(data, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Dir(data), 0o755); err != nil {
		t.Fatal(err)
	}
	out, stderr, err := run0(t, "admin", "bootstrap", "-data", data, "-tenant", "Acme", "-email", "ada@acme.example")
	if err != nil {
		t.Fatalf("bootstrap: %v\n%s", err, stderr)
	}
	m := tokenLine.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("bootstrap printed %q", out)
	}
	key := make([]byte, 32)
	rand.Read(key)
	secret := base64.StdEncoding.EncodeToString(key)
	apiKey := "sk-canary-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	// In serve's initial environment (startChild passes the test's).
	t.Setenv("AGENTHOST_SECRET_KEY", secret)
	t.Setenv("AGENTHOST_OPENAI_API_KEY", apiKey)
	addr, err := freeLoopbackAddr()
	if err != nil {
		t.Fatal(err)
	}
	srv := startChild(t, "serve", "-data", data, "-addr", addr, "-mcp-addr", "off", "-mcp-command", "env=GREETING "+hostile)
	base := "http://" + addr
	for i := 0; ; i++ {
		if resp, err := http.Get(base + "/healthz"); err == nil && resp.StatusCode == 200 {
			resp.Body.Close()
			break
		}
		if i > 6000 {
			t.Fatalf("no health:\n%s", srv.stderr())
		}
		time.Sleep(10 * time.Millisecond)
	}
	admin := tenantClient{base: base, token: m[2], workspace: m[1]}

	// The fsmonitor trick: a variable the operator did not allow.
	status, body := admin.do(t, http.MethodPost, "/api/v1/mcp-servers", map[string]any{"name": "git", "transport": "stdio",
		"command": []string{hostile}, "env": map[string]string{"GREETING": "hi", "GIT_CONFIG_COUNT": "1", "GIT_CONFIG_KEY_0": "core.fsmonitor"}})
	if status != http.StatusForbidden || !strings.Contains(string(body), "GIT_CONFIG_COUNT") {
		t.Fatalf("a variable not allowed: HTTP %d %s", status, body)
	}
	status, body = admin.do(t, http.MethodPost, "/api/v1/mcp-servers", map[string]any{"name": "hostile", "transport": "stdio",
		"command": []string{hostile}, "env": map[string]string{"GREETING": "hi"}, "workspaceId": admin.workspace})
	if status != http.StatusCreated {
		t.Fatalf("add: HTTP %d %s", status, body)
	}

	var added struct{ ID string }
	if err := json.Unmarshal(body, &added); err != nil {
		t.Fatal(err)
	}
	// Its status connects it and lists its tools.
	if status, body = admin.do(t, http.MethodGet, "/api/v1/mcp-servers/"+added.ID, nil); status != http.StatusOK || !strings.Contains(string(body), `"connected":true`) {
		t.Fatalf("status: HTTP %d %s\n%s", status, body, srv.stderr())
	}
	r := admin.tool(t, "hostile_env", map[string]any{})
	if !r.OK {
		t.Fatalf("env: %+v", r)
	}
	lines := strings.Split(r.Text, "\n")
	cwd := strings.TrimPrefix(lines[0], "cwd=")
	if rel, err := filepath.Rel(data, cwd); err != nil || strings.HasPrefix(lines[0], "cwd=") == false || !strings.HasPrefix(rel, "..") {
		t.Errorf("the server runs in %q, inside the data directory %s", lines[0], data)
	}
	env := lines[1:]
	slices.Sort(env)
	if want := []string{"GREETING=hi", "PATH=/usr/local/bin:/usr/bin:/bin"}; !slices.Equal(env, want) {
		t.Errorf("the server's environment %q, want %q", env, want)
	}

	r = admin.tool(t, "hostile_snoop", map[string]any{"paths": []string{data, filepath.Join(data, "agenthost.db")}})
	if !r.OK {
		t.Fatalf("snoop: %+v", r)
	}
	t.Logf("the server saw:\n%s", r.Text)
	if strings.Contains(r.Text, secret) || strings.Contains(r.Text, apiKey) {
		t.Errorf("the server read the host's secrets")
	}
	child := regexp.MustCompile(`uid=(\d+) gid=\d+ ppid=(\d+)`).FindStringSubmatch(r.Text)
	if child == nil || child[2] != strconv.Itoa(srv.cmd.Process.Pid) {
		t.Fatalf("the server is not serve's child: %q (serve %d)", child, srv.cmd.Process.Pid)
	}
	if !strings.Contains(r.Text, "/proc/self/environ: read") {
		t.Errorf("the server could not read even its own environment: the probe proves nothing")
	}
	proc := "/proc/" + child[2]
	for _, f := range []string{proc + "/environ", proc + "/mem", proc + "/cwd"} {
		if !strings.Contains(r.Text, f+": denied: ") {
			t.Errorf("the server read %s", f)
		}
	}
	if os.Geteuid() == 0 {
		if child[1] == "0" {
			t.Errorf("serve runs as root, and so does the server")
		}
		for _, p := range []string{data, filepath.Join(data, "agenthost.db")} {
			if !strings.Contains(r.Text, p+": denied: ") {
				t.Errorf("the server read %s", p)
			}
		}
	}
	// A stopped serve leaves no directory of its servers behind.
	if err := srv.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	srv.wait(t)
	if _, err := os.Stat(cwd); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the server's directory %s outlived serve: %v", cwd, err)
	}
}
