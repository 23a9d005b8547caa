//go:build !wasip1

package crosshost_test

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	extism "github.com/extism/go-sdk"

	"github.com/agenthost/agenthost/host/builtin"
	"github.com/agenthost/agenthost/host/wasm/build"
)

// A plugin built with our PDK must run unchanged in other Extism hosts: Extism's
// own Go SDK and its npm package. Neither sets agenthost.stdio, so these tests
// exercise the PDK's standard-ABI path (input_load_u64, output_set, error_set).

var (
	echoOnce sync.Once
	echoWasm []byte
	echoErr  error
)

func echoPlugin(t *testing.T) []byte {
	t.Helper()
	echoOnce.Do(func() {
		echoWasm, _, echoErr = build.Build(context.Background(), "../testdata/plugins/echo", build.Options{})
	})
	if echoErr != nil {
		t.Fatal(echoErr)
	}
	return echoWasm
}

// crossCases are calls and the outputs every Extism host must produce.
var crossCases = []struct {
	fn, input, want string
}{
	{"call", "echo\n" + `{"text":"grüezi"}`, "{\"ok\":true,\"body\":\"text\"}\ngrüezi"},
	{"call", "echoJSON\n" + `{"text":"a"}`, "{\"ok\":true,\"body\":\"json\"}\n{\"text\":\"a\"}"},
	{"call", "echo\n" + `{"text":"` + strings.Repeat("0123456789", 1000) + `"}`, "{\"ok\":true,\"body\":\"text\"}\n" + strings.Repeat("0123456789", 1000)},
	{"call", "nosuch\n{}", `{"ok":false,"error":{"code":"unknown_tool","message":"this plugin has no tool \"nosuch\""}}` + "\n"},
}

func TestRunsInExtismGoSDK(t *testing.T) {
	ctx := context.Background()
	p, err := extism.NewPlugin(ctx, extism.Manifest{Wasm: []extism.Wasm{extism.WasmData{Data: echoPlugin(t)}}},
		extism.PluginConfig{EnableWasi: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close(ctx)
	for _, c := range crossCases {
		rc, out, err := p.Call(c.fn, []byte(c.input))
		if err != nil || rc != 0 {
			t.Fatalf("%s(%.30q): rc %d, %v", c.fn, c.input, rc, err)
		}
		if string(out) != c.want {
			t.Fatalf("%s(%.30q) = %.200q, want %.200q", c.fn, c.input, out, c.want)
		}
	}
	_, out, err := p.Call("describe", nil)
	if err != nil || !bytes.Contains(out, []byte(`"name":"echoJSON"`)) {
		t.Fatalf("describe: %v %s", err, out)
	}
}

func TestRunsInExtismJS(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatal("node is required for this test (see .ci/testdeps)")
	}
	dir := "extismjs"
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@extism", "extism")); err != nil {
		t.Fatalf("@extism/extism is not installed: run `npm install` in host/wasm/crosshost/%s (make test does)", dir)
	}
	file := filepath.Join(t.TempDir(), "echo.wasm")
	if err := os.WriteFile(file, echoPlugin(t), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range crossCases {
		cmd := exec.Command(node, "--no-warnings", filepath.Join(dir, "run.mjs"), file, c.fn, c.input)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("node: %v\n%s", err, stderr.String())
		}
		if string(out) != c.want {
			t.Fatalf("%s(%.30q) = %.200q, want %.200q", c.fn, c.input, out, c.want)
		}
	}
}

// The HTTP-using built-in, webfetch, exactly as the server embeds it, in
// both Extism hosts. The PDK's HTTP imports are Extism's own
// (extism:host/env http_request, http_status_code and http_headers: Extism's
// Go SDK host.go, and @extism/extism 2.0's HttpContext), and each host
// enforces its own allow-list, as agenthost does its grants.

// webfetchWasm is the embedded built-in (make plugins builds it).
func webfetchWasm(t *testing.T) []byte {
	t.Helper()
	srcs, err := builtin.Sources()
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range srcs {
		if s.Origin == "builtin:webfetch" {
			return s.Module
		}
	}
	t.Fatal("no built-in webfetch: run make plugins")
	return nil
}

// pages is a site webfetch reads from: an HTML page, a plain text page
// (told apart only by their Content-Type headers, so a host that loses
// the headers fails the second), and a missing page.
func pages(t *testing.T) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/page":
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			fmt.Fprint(w, "<!doctype html><html><head><title>Lighthouse</title></head><body><nav>Home</nav><p>The keeper lights the lamp.</p></body></html>")
		case "/notes":
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			fmt.Fprint(w, "plain words")
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

type fetchCase struct{ name, input, want string }

func fetchCases(base string) []fetchCase {
	call := func(path string) string { return "fetchPage\n" + `{"url":"` + base + path + `"}` }
	return []fetchCase{
		{"html", call("/page"), "{\"ok\":true,\"body\":\"json\"}\n" + `{"url":"` + base + `/page","status":200,"title":"Lighthouse","text":"The keeper lights the lamp.","truncated":false}`},
		{"text by its header", call("/notes"), "{\"ok\":true,\"body\":\"json\"}\n" + `{"url":"` + base + `/notes","status":200,"title":"","text":"plain words","truncated":false}`},
		{"missing", call("/gone"), `{"ok":false,"error":{"code":"http_status","message":"` + base + `/gone answered 404"}}` + "\n"},
	}
}

func TestWebfetchRunsInExtismGoSDK(t *testing.T) {
	ctx := context.Background()
	srv := pages(t)
	p, err := extism.NewPlugin(ctx, extism.Manifest{Wasm: []extism.Wasm{extism.WasmData{Data: webfetchWasm(t)}}, AllowedHosts: []string{"127.0.0.1"}},
		extism.PluginConfig{EnableWasi: true, EnableHttpResponseHeaders: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close(ctx)
	for _, c := range fetchCases(srv.URL) {
		rc, out, err := p.Call("call", []byte(c.input))
		if err != nil || rc != 0 || string(out) != c.want {
			t.Errorf("%s: rc %d, %v, %q\nwant %q", c.name, rc, err, out, c.want)
		}
	}
	// The Extism host's own allow-list holds: a host it does not list is refused.
	if _, _, err := p.Call("call", []byte("fetchPage\n"+`{"url":"http://localhost:1/"}`)); err == nil || !strings.Contains(err.Error(), "not allowed") {
		t.Errorf("a host outside the allow-list: %v", err)
	}
}

// runJS calls the plugin in node with the host the environment chooses
// (extismjs/run.mjs).
func runJS(t *testing.T, wasmFile, fn, input string, env ...string) (string, error) {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatal("node is required for this test (see .ci/testdeps)")
	}
	cmd := exec.Command(node, "--no-warnings", filepath.Join("extismjs", "run.mjs"), wasmFile, fn, input)
	cmd.Env = append(os.Environ(), env...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return string(out), fmt.Errorf("%w: %s", err, stderr.String())
	}
	return string(out), nil
}

func TestWebfetchRunsInExtismJS(t *testing.T) {
	for _, pkg := range []string{"@extism/extism", "extism2"} {
		if _, err := os.Stat(filepath.Join("extismjs", "node_modules", pkg)); err != nil {
			t.Fatalf("%s is not installed: run `npm install` in host/wasm/crosshost/extismjs (make test does)", pkg)
		}
	}
	srv := pages(t)
	file := filepath.Join(t.TempDir(), "webfetch.wasm")
	if err := os.WriteFile(file, webfetchWasm(t), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := fetchCases(srv.URL)
	t.Run("2.0", func(t *testing.T) {
		for _, c := range cases {
			out, err := runJS(t, file, "call", c.input, "EXTISM_PACKAGE=extism2", "ALLOWED_HOSTS=127.0.0.1")
			if err != nil || out != c.want {
				t.Errorf("%s: %v, %q\nwant %q", c.name, err, out, c.want)
			}
		}
		if _, err := runJS(t, file, "call", "fetchPage\n"+`{"url":"http://localhost:1/"}`, "EXTISM_PACKAGE=extism2", "ALLOWED_HOSTS=127.0.0.1"); err == nil || !strings.Contains(err.Error(), "not allowed") {
			t.Errorf("a host outside the allow-list: %v", err)
		}
	})
	// 1.0.3, the stable release, has no http_headers: the plugin links
	// only when the application supplies it (createPlugin's functions),
	// and without headers webfetch still reads HTML (it sniffs the page)
	// but not a page that only its Content-Type says is text.
	t.Run("1.0.3", func(t *testing.T) {
		if _, err := runJS(t, file, "call", cases[0].input, "ALLOWED_HOSTS=127.0.0.1"); err == nil || !strings.Contains(err.Error(), `"http_headers"`) {
			t.Errorf("without http_headers: %v, want the LinkError naming it", err)
		}
		out, err := runJS(t, file, "call", cases[0].input, "ALLOWED_HOSTS=127.0.0.1", "STUB_HEADERS=1")
		if err != nil || out != cases[0].want {
			t.Errorf("html with the application's http_headers: %v, %q\nwant %q", err, out, cases[0].want)
		}
	})
}
