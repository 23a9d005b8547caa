package websearch_test

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/agenthost/agenthost/host/tenancy"
	"github.com/agenthost/agenthost/host/toolcall"
	"github.com/agenthost/agenthost/host/wasm"
	"github.com/agenthost/agenthost/host/wasm/wasmtest"
	"github.com/agenthost/agenthost/host/websearch"
)

const key = "BSA-very-secret-subscription-token"

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestWebSearchPlugin runs the built-in plugin plugins/websearch on the real
// host against a fake Brave API: the results arrive normalised, and the key
// the host sent is in no result and no log line, also when the provider
// echoes it back in an error.
func TestWebSearchPlugin(t *testing.T) {
	var echo bool
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.Header.Get("X-Subscription-Token") != key {
			w.WriteHeader(422)
			_, _ = io.WriteString(w, `{"type":"ErrorResponse","error":{"id":"1","status":422,"code":"SUBSCRIPTION_TOKEN_INVALID","detail":"The provided subscription token is invalid."}}`)
			return
		}
		if echo {
			w.WriteHeader(400)
			_, _ = io.WriteString(w, `{"type":"ErrorResponse","error":{"id":"2","status":400,"code":"VALIDATION","detail":"token `+r.Header.Get("X-Subscription-Token")+` cannot search for `+r.URL.Query().Get("q")+`"}}`)
			return
		}
		_, _ = io.WriteString(w, `{"type":"search","query":{"original":"`+r.URL.Query().Get("q")+`"},"web":{"type":"search","results":[`+
			`{"title":"Zürich <strong>Wikipedia</strong>","url":"https://en.wikipedia.org/wiki/Z%C3%BCrich","description":"Zürich is the largest city in Switzerland.","page_age":"2024-05-02T08:00:00"},`+
			`{"title":"not a web page","url":"javascript:alert(1)","description":"dropped"}]}}`)
	}))
	defer srv.Close()
	u, _ := url.Parse(srv.URL)
	s, err := websearch.New(websearch.Config{Provider: websearch.Brave, URL: srv.URL, APIKey: key}, nil, wasm.EgressOptions{AllowPrivateHosts: []string{u.Host}})
	if err != nil {
		t.Fatal(err)
	}
	logs := &lockedBuffer{}
	ctx := context.Background()
	capability := &websearch.Capability{Searcher: s}
	reg, err := wasm.NewRegistry(append(wasm.StandardCapabilities(wasm.EgressOptions{}), capability.Wasm())...)
	if err != nil {
		t.Fatal(err)
	}
	h, err := wasm.New(ctx, wasm.NewConfig().WithCapabilities(reg).WithLogger(slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))).
		WithPluginLogLevel(slog.LevelDebug).WithCompilationCacheDir(filepath.Join(os.TempDir(), "agenthost-test-wasm-cache")))
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close(ctx)
	if _, err := h.Load(ctx, wasm.Source{Origin: "test:websearch", Module: wasmtest.Module(t, "websearch"), Builtin: true}); err != nil {
		t.Fatal(err)
	}
	caller := toolcall.With(ctx, toolcall.Caller{Principal: tenancy.Principal{TenantID: "t1", UserID: "u1"}, WorkspaceID: "w1"})

	res := h.Call(caller, "webSearch", []byte(`{"query":"Zürich","count":3}`), nil)
	if !res.OK {
		t.Fatalf("%+v", res.Error)
	}
	data := string(res.Data)
	for _, want := range []string{`"provider":"brave"`, `"title":"Zürich Wikipedia"`, `"url":"https://en.wikipedia.org/wiki/Z%C3%BCrich"`, `"published":"2024-05-02T08:00:00Z"`} {
		if !strings.Contains(data, want) {
			t.Errorf("result lacks %s: %s", want, data)
		}
	}
	if strings.Contains(data, "javascript:") {
		t.Errorf("a non-web URL came through: %s", data)
	}

	echo = true
	res = h.Call(caller, "webSearch", []byte(`{"query":"echo"}`), nil)
	if res.OK || res.Error == nil || !strings.Contains(res.Error.Message, "[redacted]") {
		t.Fatalf("echoed key: %+v", res)
	}
	// A call that acts for nobody is refused before the provider is asked.
	if res := h.Call(ctx, "webSearch", []byte(`{"query":"x"}`), nil); res.OK || res.Error.Code != "no_caller" {
		t.Fatalf("no caller: %+v", res)
	}
	// Schema: the tool refuses what its arguments do not allow.
	if res := h.Call(caller, "webSearch", []byte(`{"query":"x","timeRange":"decade"}`), nil); res.OK {
		t.Fatal("timeRange decade accepted")
	}
	for _, where := range []string{string(res.Data), res.Text, res.Error.Message, logs.String()} {
		if strings.Contains(where, key) {
			t.Fatalf("the key reached the guest's side or the logs: %s", where)
		}
	}
	// Unconfigured: a clear error.
	capability.Searcher = nil
	if res := h.Call(caller, "webSearch", []byte(`{"query":"x"}`), nil); res.OK || !strings.Contains(res.Error.Message, "no search API is configured") {
		t.Fatalf("unconfigured: %+v", res)
	}
}
