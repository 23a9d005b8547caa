package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agenthost/agenthost/host/llm/llmtest"
)

// The author's path, as docs/plugin-authoring.md tells it, command by
// command: plugin new → build → test → keygen/sign → install on a running
// host → the agent calls the tool → upgrade while a call runs (the call
// ends on the old version, the next runs the new one) → remove (the tool
// is gone: a call is an unknown-tool result).

// greeterV1 is the author's first version: it asks a greeting service,
// which lets the test hold a call in flight while it upgrades.
const greeterV1 = `package main

import (
	"fmt"
	"net/url"

	"github.com/agenthost/agenthost/pdk"
)

type Args struct {
	Name string ` + "`" + `json:"name" description:"who to greet" minLength:"1"` + "`" + `
}

func init() {
	pdk.Tool("greeter", "Greets someone by name.", func(a Args) (string, error) {
		resp := pdk.HTTP(pdk.HTTPRequest{Method: "GET", URL: "GREETINGS/greeting?name=" + url.QueryEscape(a.Name)})
		if resp.Status != 200 {
			return "", fmt.Errorf("the greeting service answered %d", resp.Status)
		}
		return "v1: " + string(resp.Body), nil
	}, pdk.ReadOnly())
}

func main() {}
`

// greeterV2 greets by itself.
const greeterV2 = `package main

import (
	"fmt"

	"github.com/agenthost/agenthost/pdk"
)

type Args struct {
	Name string ` + "`" + `json:"name" description:"who to greet" minLength:"1"` + "`" + `
}

func init() {
	pdk.Tool("greeter", "Greets someone by name.", func(a Args) (string, error) {
		return fmt.Sprintf("v2: Hello, %s!", a.Name), nil
	}, pdk.ReadOnly())
}

func main() {}
`

func TestAuthorsPath(t *testing.T) {
	if testing.Short() {
		t.Skip("builds plugins and runs a server")
	}
	work := t.TempDir()
	dir := filepath.Join(work, "greeter")
	cli := func(args ...string) string {
		t.Helper()
		out, stderr, err := run0(t, args...)
		if err != nil {
			t.Fatalf("agenthost %s: %v\n%s%s", strings.Join(args, " "), err, out, stderr)
		}
		return out
	}
	write := func(rel, body string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, rel), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}

	// 1. Scaffold, build, test: as made, it builds and passes.
	// The checkout is found around the current directory, as in the guide.
	cli("plugin", "new", "greeter", "-dir", dir)
	if out := cli("plugin", "build", dir); !strings.Contains(out, "built greeter 0.1.0 (1 tools") {
		t.Fatalf("build: %s", out)
	}
	if out := cli("plugin", "test", dir); !strings.Contains(out, "2 passed, 0 failed") {
		t.Fatalf("plugin test of the scaffold: %s", out)
	}
	// Its own Go test builds and calls it too.
	goTest := exec.Command("go", "test", "./...")
	goTest.Dir = dir
	if out, err := goTest.CombinedOutput(); err != nil {
		t.Fatalf("go test in the scaffold: %v\n%s", err, out)
	}

	// 2. The author makes it ask a greeting service (allowed by the
	// manifest) and records the service's answer in the fixture.
	var held atomic.Int32
	arrived, release := make(chan struct{}, 4), make(chan struct{})
	greetings := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if held.Add(1) == 1 {
			arrived <- struct{}{}
			select { // the first call waits until the test lets it go
			case <-release:
			case <-r.Context().Done():
				return
			}
		}
		fmt.Fprintf(w, "Hello, %s!", r.URL.Query().Get("name"))
	}))
	defer greetings.Close()
	hostPort := strings.TrimPrefix(greetings.URL, "http://")
	write("main.go", strings.ReplaceAll(greeterV1, "GREETINGS", greetings.URL))
	write("plugin.json", `{"name": "greeter", "version": "0.1.0", "kind": "tool", "description": "Greets people.",
 "capabilities": ["http"], "limits": {"allowedHosts": ["`+hostPort+`"], "timeoutMs": 600000}}`)
	write("testdata/greets.json", `{"tool": "greeter", "args": {"name": "Ada"},
 "http": [{"url": "`+greetings.URL+`/greeting?name=Ada", "body": "Hello, Ada!"}], "want": {"text": "v1: Hello, Ada!"}}`)
	cli("plugin", "build", dir)
	if out := cli("plugin", "test", dir); !strings.Contains(out, "capabilities: http") || !strings.Contains(out, "2 passed, 0 failed") {
		t.Fatalf("plugin test of version 1: %s", out)
	}
	unsigned, err := os.ReadFile(filepath.Join(dir, "greeter.wasm"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(work, "unsigned.wasm"), unsigned, 0o644); err != nil {
		t.Fatal(err)
	}

	// 3. Sign it with the author's key.
	cli("plugin", "keygen", "-o", filepath.Join(work, "author"))
	cli("plugin", "sign", filepath.Join(dir, "greeter.wasm"), "-key", filepath.Join(work, "author.key"))

	// 4. A running host that trusts the key and lets its tenant's admin
	// install; a scripted model that calls the tool and repeats its answer.
	model := llmtest.New(t)
	t.Setenv("AGENTHOST_OPENAI_BASE_URL", model.URL())
	t.Setenv("AGENTHOST_OPENAI_API_KEY", "")
	t.Setenv("AGENTHOST_MODEL_AGENT", "scripted")
	model.SetDefault(llmtest.EndpointChat, llmtest.Decide(func(r llmtest.ChatRequest) llmtest.Step {
		if last := r.Messages[len(r.Messages)-1]; last.Role == "tool" {
			return llmtest.Reply("The tool said: " + last.Content)
		}
		return llmtest.CallTools(llmtest.Call("greeter", `{"name":"Ada"}`))
	}))
	data := filepath.Join(work, "data")
	boot := cli("admin", "bootstrap", "-data", data, "-tenant", "Acme", "-email", "admin@acme.example")
	tenant := regexp.MustCompile(`(?m)^tenant (\S+)$`).FindStringSubmatch(boot)
	creds := tokenLine.FindStringSubmatch(boot)
	if tenant == nil || creds == nil {
		t.Fatalf("bootstrap printed %q", boot)
	}
	ws, token := creds[1], creds[2]
	logs := &syncBuffer{}
	base := serveInProcess(t, logs, "-data", data, "-trust", filepath.Join(work, "author.pub"),
		"-plugin-admins", tenant[1], "-allow-host", hostPort, "-grant", "greeter=http")
	remote := []string{"-url", base, "-token", token}

	// The signature policy of a start-up: unsigned is refused.
	if _, stderr, err := run0(t, append([]string{"plugin", "install", filepath.Join(work, "unsigned.wasm")}, remote...)...); err == nil || !strings.Contains(err.Error(), "422 plugin refused") || !strings.Contains(err.Error(), "not signed") {
		t.Fatalf("an unsigned install: %v %s", err, stderr)
	}
	installStart := time.Now()
	if out := cli(append([]string{"plugin", "install", filepath.Join(dir, "greeter.wasm")}, remote...)...); !strings.Contains(out, "installed greeter 0.1.0") {
		t.Fatalf("install: %s", out)
	}
	t.Logf("installed in %v", time.Since(installStart))
	cli("admin", "tools", "-data", data, "-workspace", ws, "-set", "core", "-extra", "greeter")

	h := host{base: base + "/api/v1"}
	start := func() string {
		t.Helper()
		var w struct {
			ID string `json:"id"`
		}
		if st := h.call(t, token, "POST", "/workspaces/"+ws+"/workflows", `{"prompt":"Greet Ada"}`, &w); st != 202 {
			t.Fatalf("start: %d\n%s", st, logs.String())
		}
		return w.ID
	}
	toolResult := func(id string) string {
		t.Helper()
		var res string
		h.events(t, token, id, func(e hostEvent) bool {
			if e.typ == "toolResult" {
				res = e.data
			}
			return e.typ == "complete" || e.typ == "error" || e.typ == "stopped"
		})
		return res
	}

	// 5. The agent calls it; the call waits at the greeting service (its
	// manifest allows a call ten minutes, so no deadline ends it first).
	first := start()
	select {
	case <-arrived:
	case <-time.After(hangGuard):
		t.Fatalf("the agent's call never reached the greeting service\n%s", logs.String())
	}

	var running []struct {
		Name    string `json:"name"`
		Running int    `json:"running"`
	}
	h.call(t, token, "GET", "/plugins", "", &running)
	for _, p := range running {
		if p.Name == "greeter" && p.Running != 1 {
			t.Fatalf("the plugins listing shows %d calls running on greeter, want 1", p.Running)
		}
	}
	// 6. Version 2, built, tested, signed and upgraded while that call runs.
	write("main.go", greeterV2)
	write("plugin.json", `{"name": "greeter", "version": "0.2.0", "kind": "tool", "description": "Greets people."}`)
	write("testdata/greets.json", `{"tool": "greeter", "args": {"name": "Ada"}, "want": {"text": "v2: Hello, Ada!"}}`)
	cli("plugin", "build", dir)
	if out := cli("plugin", "test", dir); !strings.Contains(out, "2 passed, 0 failed") {
		t.Fatalf("plugin test of version 2: %s", out)
	}
	cli("plugin", "sign", filepath.Join(dir, "greeter.wasm"), "-key", filepath.Join(work, "author.key"))
	out := cli(append([]string{"plugin", "upgrade", filepath.Join(dir, "greeter.wasm")}, remote...)...)
	if !strings.Contains(out, "upgraded greeter 0.2.0") || !strings.Contains(out, "replaced greeter 0.1.0 (retired: its running calls end on it; 1 running)") {
		t.Fatalf("upgrade: %s", out)
	}
	// The next call runs version 2 while the first still runs on version 1.
	if res := toolResult(start()); !strings.Contains(res, `v2: Hello, Ada!`) {
		t.Fatalf("the call after the upgrade: %s", res)
	}
	close(release)
	if res := toolResult(first); !strings.Contains(res, `"ok":true`) || !strings.Contains(res, `v1: Hello, Ada!`) {
		t.Fatalf("the call that started on version 1: %s", res)
	}

	// 7. Removed: the tool is gone, a call is an unknown-tool result, and
	// nothing of it is left to load at the next start.
	if out := cli(append([]string{"plugin", "remove", "greeter"}, remote...)...); !strings.Contains(out, "removed greeter 0.2.0") {
		t.Fatalf("remove: %s", out)
	}
	if res := toolResult(start()); !strings.Contains(res, `"ok":false`) || !strings.Contains(res, "unknown_tool") {
		t.Fatalf("a call after the removal: %s", res)
	}
	var plugins []struct{ Name string }
	h.call(t, token, "GET", "/plugins", "", &plugins)
	for _, p := range plugins {
		if p.Name == "greeter" {
			t.Fatal("greeter is still listed")
		}
	}
	if left, _ := filepath.Glob(filepath.Join(data, "plugins", "*.wasm")); len(left) != 0 {
		t.Fatalf("files left: %v", left)
	}
}
