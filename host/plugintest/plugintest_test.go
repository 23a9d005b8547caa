package plugintest_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agenthost/agenthost/host/plugintest"
	"github.com/agenthost/agenthost/host/wasm/wasmtest"
)

// TestSimulatedCapabilities runs a real guest that uses files, model,
// knowledge and http against fixtures, allowed and hostile (a recorded
// answer for a host the manifest does not allow is still denied, a
// read-only tool may not POST), and every fixture must pass.
func TestSimulatedCapabilities(t *testing.T) {
	var out strings.Builder
	rep, err := plugintest.Run(context.Background(), plugintest.Options{Dir: "testdata/capsclient", Module: wasmtest.Module(t, "capsclient"), Out: &out})
	t.Log("\n" + out.String())
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Outcomes) != 12 {
		t.Errorf("ran %d fixtures, want 12", len(rep.Outcomes))
	}
	for _, o := range rep.Outcomes {
		if !o.Pass {
			t.Errorf("%s: %s", o.Fixture, o.Why)
		}
	}
	for _, want := range []string{"plugin capsclient 1.0.0 (tool)", "capabilities: files, model, knowledge, http", "tool shout (writes)", `input:  {"additionalProperties":false`, "12 passed, 0 failed"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the report lacks %q", want)
		}
	}
}

// TestFailuresAreReported: a fixture whose expectation is not met fails
// with what differed, and the report counts it.
func TestFailuresAreReported(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "wrong-text.json", `{"tool": "readText", "args": {"file": "a.txt"}, "files": {"a.txt": "x"}, "want": {"text": "y"}}`)
	write(t, dir, "expects-an-error.json", `{"tool": "readText", "args": {"file": "a.txt"}, "files": {"a.txt": "x"}, "wantError": "not_found"}`)
	write(t, dir, "missing-file-written.json", `{"tool": "shout", "args": {"file": "a.txt", "out": "b.txt"}, "files": {"a.txt": "x"}, "want": {"contains": ["b.txt"]}, "wantFiles": {"c.txt": "X"}}`)
	// The answer (the 401 the provider gives) is what the fixture wants,
	// but the request lacked the header its recording wants.
	write(t, dir, "missing-header.json", `{"tool": "fetch", "args": {"url": "https://api.allowed.test/v1/ping"},
		"http": [{"url": "https://api.allowed.test/v1/ping", "wantHeaders": {"X-Api-Key": "k1"}, "body": "pong"}], "want": {"contains": ["401"]}}`)
	var out strings.Builder
	rep, err := plugintest.Run(context.Background(), plugintest.Options{Dir: dir, Module: wasmtest.Module(t, "capsclient"), Out: &out})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Failed() != 4 || !strings.Contains(out.String(), "0 passed, 4 failed") {
		t.Fatalf("failed %d:\n%s", rep.Failed(), out.String())
	}
	for _, want := range []string{`want text "y", got "a.txt (text/plain, 1 bytes): x"`, `want error "not_found", the call succeeded`, `no file "c.txt" was written`,
		`GET https://api.allowed.test/v1/ping: the provider saw X-Api-Key "", want "k1"`} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the report lacks %q:\n%s", want, out.String())
		}
	}
}

// TestBadFixturesAreRefused: a fixture that cannot be run says why, naming
// its file, and nothing runs.
func TestBadFixturesAreRefused(t *testing.T) {
	cases := []struct{ name, body, want string }{
		{"unknown field", `{"tool": "x", "wnat": {"text": "y"}}`, `unknown field "wnat"`},
		{"no expectation", `{"tool": "x"}`, "says nothing it expects"},
		{"two expectations", `{"tool": "x", "want": {"text": "y"}, "wantError": "z"}`, "exclude each other"},
		{"no call", `{"want": {"text": "y"}}`, "names neither a tool nor an input"},
		{"input outside testdata", `{"input": "../../secret.txt", "wantText": ["x"]}`, "must lie in testdata/"},
		{"not JSON", `{"tool": `, "unexpected EOF"},
		{"http without url", `{"tool": "x", "http": [{"body": "y"}], "want": {"text": "y"}}`, "http[0] has no url"},
		{"connection without provider", `{"tool": "x", "connection": {"token": "abcd", "baseUrl": "https://a.test"}, "want": {"text": "y"}}`, "names no provider"},
		{"connection without credential", `{"tool": "x", "connection": {"provider": "p", "baseUrl": "https://a.test"}, "want": {"text": "y"}}`, "needs a fake credential"},
		{"connection of an unknown auth", `{"tool": "x", "connection": {"provider": "p", "auth": "saml", "token": "abcd", "baseUrl": "https://a.test"}, "want": {"text": "y"}}`, `auth "saml"`},
		{"basic connection without account", `{"tool": "x", "connection": {"provider": "p", "auth": "basic", "token": "abcd", "baseUrl": "https://a.test"}, "want": {"text": "y"}}`, "needs an account"},
		{"connection without a host", `{"tool": "x", "connection": {"provider": "p", "token": "abcd"}, "want": {"text": "y"}}`, "needs a baseUrl"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			write(t, dir, "case.json", c.body)
			_, err := plugintest.Load(dir)
			if err == nil || !strings.Contains(err.Error(), "case.json") || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v, want an error naming case.json and %q", err, c.want)
			}
		})
	}
	if _, err := plugintest.Run(context.Background(), plugintest.Options{Dir: t.TempDir()}); err == nil || !strings.Contains(err.Error(), "has no fixtures") {
		t.Errorf("a folder without fixtures: %v", err)
	}
}

func write(t *testing.T, dir, name, body string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Join(dir, "testdata"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "testdata", name), []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestSimulatedConnection runs the hostile connector connprobe (it puts its
// own Authorization header in every request and returns all it gets)
// against the simulated connection capability: the provider sees the
// fixture's credential, attached by the host, and the plugin's answer
// holds it nowhere; a host outside the connector's hosts, another site of
// the provider than the connection's, a connection of another provider or
// auth scheme, another connection id and a POST from a read-only tool are
// refused with the server's errors.
func TestSimulatedConnection(t *testing.T) {
	var out strings.Builder
	rep, err := plugintest.Run(context.Background(), plugintest.Options{Dir: "testdata/connprobe", Module: wasmtest.Module(t, "connprobe"), Out: &out})
	t.Log("\n" + out.String())
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Outcomes) != 11 {
		t.Errorf("ran %d fixtures, want 11", len(rep.Outcomes))
	}
	for _, o := range rep.Outcomes {
		if !o.Pass {
			t.Errorf("%s: %s", o.Fixture, o.Why)
		}
		if strings.Contains(string(o.Result.Data), "fixture-access-token-1") || strings.Contains(o.Result.Text, "fixture-access-token-1") {
			t.Errorf("%s: the credential reached the plugin: %s", o.Fixture, o.Result.Data)
		}
	}
	for _, want := range []string{"connector: provider acme, services files, hosts api.acme.test, *.acme.test, auth oauth2", "11 passed, 0 failed"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the report lacks %q", want)
		}
	}
}

// TestConnectionFailuresAreReported: a provider that did not see the
// credential its recording wants, and refusals a fixture did not expect,
// fail their fixtures with what differed.
func TestConnectionFailuresAreReported(t *testing.T) {
	dir := t.TempDir()
	conn := `"connection": {"provider": "acme", "auth": "oauth2", "token": "fixture-access-token-1", "baseUrl": "http://api.acme.test"}`
	write(t, dir, "wrong-credential.json", `{"tool": "fetch", "args": {"connection": "conn-1", "url": "http://api.acme.test/a"}, `+conn+`,
		"http": [{"url": "http://api.acme.test/a", "wantHeaders": {"Authorization": "Bearer smuggled-by-the-plugin"}, "body": "ok"}], "want": {"contains": ["ok"]}}`)
	write(t, dir, "foreign-host.json", `{"tool": "fetch", "args": {"connection": "conn-1", "url": "http://other.test/a"}, `+conn+`,
		"http": [{"url": "http://other.test/a", "body": "ok"}], "want": {"contains": ["ok"]}}`)
	write(t, dir, "wrong-provider.json", `{"tool": "fetch", "args": {"connection": "conn-1", "url": "http://api.acme.test/a"},
		"connection": {"provider": "jira", "auth": "oauth2", "token": "fixture-access-token-1", "baseUrl": "http://api.acme.test"},
		"http": [{"url": "http://api.acme.test/a", "body": "ok"}], "want": {"contains": ["ok"]}}`)
	var out strings.Builder
	rep, err := plugintest.Run(context.Background(), plugintest.Options{Dir: dir, Module: wasmtest.Module(t, "connprobe"), Out: &out})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Failed() != 3 {
		t.Fatalf("failed %d:\n%s", rep.Failed(), out.String())
	}
	for _, want := range []string{
		`the provider saw Authorization "Bearer fixture-access-token-1", want "Bearer smuggled-by-the-plugin"`,
		"host_refused: host not allowed for this connection: other.test", "wrong_provider", "connection_rejected",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the report lacks %q:\n%s", want, out.String())
		}
	}
}
