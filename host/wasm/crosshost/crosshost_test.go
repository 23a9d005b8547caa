//go:build !wasip1

package crosshost_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	extism "github.com/extism/go-sdk"

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
