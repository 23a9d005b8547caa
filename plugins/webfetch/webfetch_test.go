package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/agenthost/agenthost/host/wasm"
	"github.com/agenthost/agenthost/host/wasm/build"
)

const article = `<!doctype html><html><head><title>Zürich – Wikipedia</title>
<style>body{color:red}</style><script>alert("x")</script></head>
<body><nav><a href="/">Home</a> | <a href="/about">About</a></nav>
<main><h1>Zürich</h1><p>Zürich is the <b>largest city</b> in
   Switzerland.</p>
<h2>History</h2><ul><li>Roman <a href="https://example.org/turicum">Turicum</a></li><li>Reformation</li></ul>
<table><tr><th>Year</th><th>Population</th></tr><tr><td>2020</td><td>434,335</td></tr></table>
<pre>line one
  line two</pre></main>
<footer>© Wikipedia</footer></body></html>`

func TestReadable(t *testing.T) {
	title, text := readable([]byte(article), true)
	if title != "Zürich – Wikipedia" {
		t.Errorf("title = %q", title)
	}
	want := []string{
		"# Zürich",
		"Zürich is the largest city in Switzerland.",
		"## History",
		"- Roman Turicum (https://example.org/turicum)",
		"- Reformation",
		"| Year | Population",
		"| 2020 | 434,335",
		"line one\n  line two",
	}
	for _, w := range want {
		if !strings.Contains(text, w) {
			t.Errorf("text lacks %q:\n%s", w, text)
		}
	}
	for _, bad := range []string{"alert", "color:red", "Home", "About", "© Wikipedia"} {
		if strings.Contains(text, bad) {
			t.Errorf("text keeps %q:\n%s", bad, text)
		}
	}
	if _, text := readable([]byte(article), false); strings.Contains(text, "https://example.org") {
		t.Error("links kept although not asked for")
	}
}

// TestPluginEndToEnd builds the plugin and fetches a page through the real
// host: a server on 127.0.0.1 that the operator allows by the name
// de.wikipedia.org (resolved by a test resolver), inside the manifest's list.
func TestPluginEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the plugin")
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/missing" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, article)
	}))
	defer srv.Close()
	u, _ := url.Parse(srv.URL)
	ctx := context.Background()
	module, _, err := build.Build(ctx, ".", build.Options{})
	if err != nil {
		t.Fatal(err)
	}
	reg, err := wasm.NewRegistry(wasm.StandardCapabilities(wasm.EgressOptions{
		AllowPrivateHosts: []string{"de.wikipedia.org:" + u.Port()},
		Resolver:          resolver{"de.wikipedia.org": "127.0.0.1", "evil.example": "127.0.0.1"},
	})...)
	if err != nil {
		t.Fatal(err)
	}
	h, err := wasm.New(ctx, wasm.NewConfig().WithCapabilities(reg))
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close(ctx)
	p, err := h.Load(ctx, wasm.Source{Origin: "webfetch", Module: module, Builtin: true})
	if err != nil {
		t.Fatal(err)
	}
	call := func(args string) wasm.Result { return p.Call(ctx, "fetchPage", json.RawMessage(args), nil) }

	r := call(`{"url":"http://de.wikipedia.org:` + u.Port() + `/wiki/Zürich","maxChars":120}`)
	if !r.OK {
		t.Fatalf("fetchPage: %+v", r.Error)
	}
	var pg page
	if err := json.Unmarshal(r.Data, &pg); err != nil {
		t.Fatal(err)
	}
	if pg.Title != "Zürich – Wikipedia" || !strings.HasPrefix(pg.Text, "# Zürich") || !pg.Truncated || len([]rune(pg.Text)) != 120 {
		t.Fatalf("page = %+v", pg)
	}
	if r := call(`{"url":"http://evil.example:` + u.Port() + `/"}`); r.OK || r.Error.Code != wasm.CodeHTTPDenied {
		t.Fatalf("host outside the allow-list: %+v", r)
	}
	if r := call(`{"url":"http://de.wikipedia.org:` + u.Port() + `/missing"}`); r.OK || r.Error.Code != "http_status" {
		t.Fatalf("404: %+v", r)
	}
	if r := call(`{"url":"ftp://de.wikipedia.org/"}`); r.OK || r.Error.Code != wasm.CodeInvalidArguments {
		t.Fatalf("ftp URL: %+v", r)
	}
}

type resolver map[string]string

func (r resolver) LookupIPAddr(_ context.Context, host string) ([]net.IPAddr, error) {
	if ip, ok := r[host]; ok {
		return []net.IPAddr{{IP: net.ParseIP(ip)}}, nil
	}
	return nil, fmt.Errorf("no such host %s", host)
}
