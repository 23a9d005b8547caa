package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
)

// TestPluginCallExplainsADenial: `plugin call` of the webfetch built-in to a
// host outside its allow-list answers http_denied naming the host, what the
// plugin may reach, and the grant that would allow it; the flag the hint
// gives, passed as it is, lets the same call through.
func TestPluginCallExplainsADenial(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a plugin")
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		fmt.Fprint(w, "the pier is open")
	}))
	defer srv.Close()
	hostPort := strings.TrimPrefix(srv.URL, "http://")
	host := strings.Split(hostPort, ":")[0]
	// The test server is on loopback, which egress refuses unless allowed:
	// that is -allow-host's business, the allow-list's is the grant.
	args := []string{"plugin", "call", "-allow-host", hostPort, "../../host/builtin/wasm/webfetch.wasm", "fetchPage", `{"url":"` + srv.URL + `/pier"}`}

	out, _, err := run0(t, args...)
	if err == nil || !strings.Contains(out, `"code": "http_denied"`) {
		t.Fatalf("want http_denied, got %v\n%s", err, out)
	}
	for _, want := range []string{
		`request to \"` + host + `\" refused`,
		"the plugin may reach *.wikipedia.org",
		`plugins.webfetch.hosts: [\"` + host + `\"]`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the denial lacks %q:\n%s", want, out)
		}
	}
	hint := regexp.MustCompile(`-grant-host (\S+)\)`).FindStringSubmatch(out)
	if hint == nil {
		t.Fatalf("the denial names no -grant-host:\n%s", out)
	}
	out, stderr, err := run0(t, append([]string{"plugin", "call", "-grant-host", hint[1]}, args[2:]...)...)
	if err != nil || !strings.Contains(out, "the pier is open") {
		t.Fatalf("with -grant-host %s: %v\n%s%s", hint[1], err, out, stderr)
	}
}
