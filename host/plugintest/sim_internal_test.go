package plugintest

import (
	"context"
	"strings"
	"testing"

	"github.com/agenthost/agenthost/host/builtin"
	"github.com/agenthost/agenthost/host/wasm"
)

// TestSimulationsReplaceRealFunctions: every simulated function replaces a
// function the host really links (a renamed host function would otherwise
// leave its simulation unused and the real one, unconnected, in its place),
// and the simulated list keeps every real import and signature.
func TestSimulationsReplaceRealFunctions(t *testing.T) {
	real := map[string]wasm.HostFunction{}
	for _, c := range builtin.NewCapabilities().List(wasm.EgressOptions{}) {
		for _, f := range c.Functions {
			real[c.Name+"."+f.Name] = f
		}
	}
	for _, key := range []string{"http.http_request", "files.read", "files.write", "model.info", "model.count", "model.complete", "knowledge.search", "connection.request", "connection.info"} {
		if _, ok := real[key]; !ok {
			t.Errorf("the host links no %s, which plugin test simulates", key)
		}
	}
	n := 0
	for _, c := range capabilities() {
		for _, f := range c.Functions {
			n++
			r, ok := real[c.Name+"."+f.Name]
			if !ok || r.Module != f.Module || r.Write != f.Write || len(r.Params) != len(f.Params) || len(r.Results) != len(f.Results) {
				t.Errorf("%s.%s differs from the host's", c.Name, f.Name)
			}
		}
	}
	if n != len(real) {
		t.Errorf("the simulation links %d functions, the host %d", n, len(real))
	}
}

// TestLeakedCredentialFails: a fixture whose call otherwise passes fails
// when the connection's credential, in any form the host sends it, is in
// the answer, the error or a file the call wrote (on a server the host
// scrubs answers, so only a simulation gap or a plugin getting it some
// other way could put it there; the check must still catch it).
func TestLeakedCredentialFails(t *testing.T) {
	conn := &Connection{ID: "conn-1", Provider: "acme", Auth: "basic", Account: "ada", Token: "tok-secret-1", BaseURL: "https://a.test"}
	f := Fixture{Name: "f.json", Tool: "x", Connection: conn, Want: &Want{Contains: []string{"ok"}}}
	cases := []struct {
		name  string
		res   wasm.Result
		files map[string][]byte
		leak  bool
	}{
		{"clean", wasm.Result{OK: true, Text: "ok"}, nil, false},
		{"plain in the text", wasm.Result{OK: true, Text: "ok tok-secret-1"}, nil, true},
		{"base64 in the data", wasm.Result{OK: true, Data: []byte(`{"v":"ok dG9rLXNlY3JldC0x"}`)}, nil, true},
		{"basic credential in the data", wasm.Result{OK: true, Data: []byte(`{"v":"ok YWRhOnRvay1zZWNyZXQtMQ=="}`)}, nil, true},
		{"in a written file", wasm.Result{OK: true, Text: "ok"}, map[string][]byte{"out.txt": []byte("tok-secret-1")}, true},
		{"in an error", wasm.Result{Error: &wasm.Error{Code: "x", Message: "tok-secret-1"}}, nil, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w := &world{files: map[string][]byte{}}
			for k, v := range c.files {
				w.files[k] = v
				w.written = append(w.written, k)
			}
			cw, err := newConnectionWorld(context.Background(), w, conn)
			if err != nil {
				t.Fatal(err)
			}
			w.conn = cw
			why := check(f, c.res, w)
			if got := strings.Contains(why, "credential reached"); got != c.leak {
				t.Fatalf("leak reported %v, want %v: %q", got, c.leak, why)
			}
		})
	}
}
