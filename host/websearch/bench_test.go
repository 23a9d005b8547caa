package websearch_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/agenthost/agenthost/host/figure"
	"github.com/agenthost/agenthost/host/tenancy"
	"github.com/agenthost/agenthost/host/toolcall"
	"github.com/agenthost/agenthost/host/wasm"
	"github.com/agenthost/agenthost/host/wasm/wasmtest"
	"github.com/agenthost/agenthost/host/websearch"
)

// BenchmarkWebSearchCall measures one webSearch tool call through the
// built-in plugin on the real host against a SearXNG instance on loopback
// answering 10 results at once: what agenthost adds to the provider's own
// time (the guest, the capability, egress checks, decoding, normalising).
func BenchmarkWebSearchCall(b *testing.B) {
	var items []string
	for i := range 10 {
		items = append(items, fmt.Sprintf(`{"url":"https://example.org/%d","title":"Result %d","content":"About <b>agents</b> %d","engine":"bing","publishedDate":null}`, i, i, i))
	}
	body := `{"query":"agents","number_of_results":0,"results":[` + strings.Join(items, ",") + `],"answers":[],"suggestions":[]}`
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, body)
	}))
	defer srv.Close()
	u, _ := url.Parse(srv.URL)
	s, err := websearch.New(websearch.Config{Provider: websearch.SearXNG, URL: srv.URL}, nil, wasm.EgressOptions{AllowPrivateHosts: []string{u.Host}})
	if err != nil {
		b.Fatal(err)
	}
	h := wasmtest.HostWith(b, []wasm.Capability{(&websearch.Capability{Searcher: s}).Wasm()}, "websearch")
	ctx := toolcall.With(context.Background(), toolcall.Caller{Principal: tenancy.Principal{TenantID: "t", UserID: "u"}, WorkspaceID: "w"})
	args := []byte(`{"query":"agents","count":10}`)
	for range 20 {
		if res := h.Call(ctx, "webSearch", args, nil); !res.OK {
			b.Fatal(res.Error)
		}
	}
	for b.Loop() {
		d := make([]time.Duration, 0, 200)
		for range 200 {
			t0 := time.Now()
			if res := h.Call(ctx, "webSearch", args, nil); !res.OK {
				b.Fatal(res.Error)
			}
			d = append(d, time.Since(t0))
		}
		figure.Report("websearch.call.p50.ms", figure.Millis(figure.Percentile(d, 50)), "ms")
	}
}
