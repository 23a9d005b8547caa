package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestAdminMCP: `admin mcp` adds a stdio server and an HTTP server whose
// token comes from a variable (never the command line), lists them with
// the names of their secrets only, refuses secrets without a key and bad
// input, and removes a server by id.
func TestAdminMCP(t *testing.T) {
	data := filepath.Join(t.TempDir(), "data")
	admin := adminIn(t, data)
	out := admin("bootstrap", "-tenant", "Acme", "-email", "ada@acme.example")
	tenant := regexp.MustCompile(`tenant (\S+)`).FindStringSubmatch(out)
	ws := regexp.MustCompile(`workspace (\S+)`).FindStringSubmatch(out)
	if tenant == nil || ws == nil {
		t.Fatalf("bootstrap printed %s", out)
	}
	fail := func(want string, args ...string) {
		t.Helper()
		_, _, err := run0(t, append(append([]string{"admin", "mcp", "-tenant", tenant[1]}, args...), "-data", data, "-database=")...)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("admin mcp %v: %v, want %q", args, err, want)
		}
	}
	t.Setenv("JIRA_TOKEN", "tok-from-env")
	t.Setenv("AGENTHOST_SECRET_KEY", "")
	fail("keeps none", "-name", "jira", "-url", "https://mcp.example.com/mcp", "-bearer-env", "JIRA_TOKEN")
	// The key from a file (AGENTHOST_SECRET_KEY_FILE), and not from both.
	keyFile := filepath.Join(t.TempDir(), "key")
	if err := os.WriteFile(keyFile, []byte("BwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwc=\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("AGENTHOST_SECRET_KEY", "BwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwc=")
	t.Setenv("AGENTHOST_SECRET_KEY_FILE", keyFile)
	fail("not both", "-name", "jira", "-url", "https://mcp.example.com/mcp", "-bearer-env", "JIRA_TOKEN")
	t.Setenv("AGENTHOST_SECRET_KEY", "")
	fail("not set", "-name", "jira", "-url", "https://mcp.example.com/mcp", "-bearer-env", "NO_SUCH_VARIABLE")
	fail("not both", "-name", "jira", "-url", "https://x/mcp", "-command", "node x.js")
	fail("name", "-name", "Bad Name", "-command", "node x.js")

	fail("allows none", "-name", "memory", "-command", "/usr/bin/node /srv/other.js")
	t.Setenv("AGENTHOST_MCP_COMMANDS", "/usr/bin/python3 /srv/x.py; env=MEMORY_FILE_PATH /usr/bin/node /srv/memory/index.js")
	fail("not one the operator allows", "-name", "memory", "-command", "/usr/bin/node /srv/other.js")
	fail("load code", "-name", "memory", "-command", "/usr/bin/node /srv/memory/index.js", "-env", "NODE_OPTIONS=--require=/tmp/x.js")
	// Variables are the operator's allow list: one it did not name is refused, by name.
	fail("does not allow the variable GIT_CONFIG_COUNT", "-name", "memory", "-command", "/usr/bin/node /srv/memory/index.js",
		"-env", "MEMORY_FILE_PATH=x,GIT_CONFIG_COUNT=1,GIT_CONFIG_KEY_0=core.fsmonitor,GIT_CONFIG_VALUE_0=id")
	fail("does not allow the variable HOME", "-name", "py", "-command", "/usr/bin/python3 /srv/x.py", "-env", "HOME=/tmp/evil")
	t.Setenv("SSH_CMD", "touch /tmp/x")
	fail("does not allow the variable GIT_SSH_COMMAND", "-name", "memory", "-command", "/usr/bin/node /srv/memory/index.js", "-secret-env", "GIT_SSH_COMMAND=SSH_CMD")
	out = admin("mcp", "-tenant", tenant[1], "-name", "memory", "-workspace", ws[1],
		"-command", `["/usr/bin/node","/srv/memory/index.js","--flag"]`, "-env", "MEMORY_FILE_PATH=${WORKDIR}/memory.jsonl", "-read-only", "*")
	if !strings.Contains(out, "memory_TOOL") || !strings.Contains(out, ws[1]) {
		t.Fatalf("add stdio: %s", out)
	}
	out = admin("mcp", "-tenant", tenant[1], "-name", "jira", "-url", "https://mcp.example.com/mcp", "-bearer-env", "JIRA_TOKEN")
	id := regexp.MustCompile(`MCP server (\S+) \(jira\)`).FindStringSubmatch(out)
	if id == nil || !strings.Contains(out, "every workspace") {
		t.Fatalf("add http: %s", out)
	}
	list := admin("mcp", "-tenant", tenant[1], "-list")
	if strings.Contains(list, "tok-from-env") || !strings.Contains(list, "Authorization") ||
		!strings.Contains(list, "/usr/bin/node /srv/memory/index.js --flag") || !strings.Contains(list, "(all)") {
		t.Fatalf("list:\n%s", list)
	}
	admin("mcp", "-tenant", tenant[1], "-remove", id[1])
	if list := admin("mcp", "-tenant", tenant[1], "-list"); strings.Contains(list, "jira") || !strings.Contains(list, "memory") {
		t.Fatalf("list after remove:\n%s", list)
	}
}
