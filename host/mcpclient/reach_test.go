package mcpclient_test

import (
	"context"
	"strings"
	"testing"

	"github.com/agenthost/agenthost/host/mcpclient"
	"github.com/agenthost/agenthost/host/mcpclient/mcpconfig"
	"github.com/agenthost/agenthost/host/wasm"
)

// An HTTP server that goes down keeps its tools in the list, each marked
// unavailable with the reason, instead of vanishing from the workspace's
// set (and its agent runs) without a word; a call says the server is not
// reachable, in words a person reads, not the transport's layers.
func TestServerDownListsItsToolsAsUnavailable(t *testing.T) {
	ts := sdkServer(t, "tok-1", true)
	s, sealer := remote(t, ts.URL, mcpconfig.Secrets{Headers: map[string]string{"Authorization": "Bearer tok-1"}}, mcpconfig.Config{ReadOnly: []string{"*"}})
	src, _ := source(t, s, mcpclient.Options{Sealer: sealer, AllowPrivateHosts: []string{hostPort(ts.URL)}})
	ctx := context.Background()
	if list, err := src.Tools(ctx); err != nil || len(list) != 2 || list[0].Unavailable != "" {
		t.Fatalf("while up: %+v %v", list, err)
	}
	// The server goes down: its connections cut, its port closed.
	ts.CloseClientConnections()
	ts.Close()

	r := src.Call(ctx, "remote_echo", []byte(`{"message":"x"}`))
	if r.OK || r.Error.Code != wasm.CodeNotReachable || !strings.Contains(r.Error.Message, `"remote" is not reachable`) ||
		strings.Contains(r.Error.Message, "rejected by transport") {
		t.Fatalf("a call while down: %+v", r.Error)
	}
	list, err := src.Tools(ctx)
	if err != nil || len(list) != 2 {
		t.Fatalf("while down: %+v %v", list, err)
	}
	for _, tl := range list {
		if !strings.Contains(tl.Unavailable, "not reachable since") || tl.UnavailableSince == nil {
			t.Errorf("%s while down: unavailable %q since %v", tl.Name, tl.Unavailable, tl.UnavailableSince)
		}
	}
	r = src.Call(ctx, "remote_echo", []byte(`{"message":"x"}`))
	if r.OK || r.Error.Code != wasm.CodeNotReachable || !strings.Contains(r.Error.Message, "not reachable") {
		t.Fatalf("a call while held off: %+v", r.Error)
	}
}
