package connections_test

import (
	"context"
	"encoding/json"
	"net/url"
	"strings"
	"testing"

	"github.com/agenthost/agenthost/host/connections"
	"github.com/agenthost/agenthost/host/connections/connectionstest"
	"github.com/agenthost/agenthost/host/files"
	"github.com/agenthost/agenthost/host/toolcall"
	"github.com/agenthost/agenthost/host/wasm"
	"github.com/agenthost/agenthost/host/wasm/wasmtest"
	"github.com/agenthost/agenthost/pdk/connector/wire"
)

// TestThirdPartyConnector: a connector written only against pdk/connector
// and pdk/connection (host/wasm/testdata/plugins/thirdparty, built by the
// test) works through the same connection tools: its services are listed,
// its drive browsed, mail sent and listed through its mail service, with
// alice's OAuth connection attached by the host.
func TestThirdPartyConnector(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	c := e.connectOAuth(t, e.alice)
	u, _ := url.Parse(e.api.URL)
	opts := wasm.EgressOptions{AllowPrivateHosts: []string{"api.acme.test:" + u.Port()}, Resolver: connectionstest.DNS{"api.acme.test": "127.0.0.1"}}
	toolsCap := &connections.ToolsCapability{}
	h := wasmtest.NewHost(t, wasmtest.Options{Egress: opts, Capabilities: []wasm.Capability{(&connections.Capability{Service: e.svc, Egress: opts}).Wasm(), toolsCap.Wasm(),
		(&files.Capability{}).Wasm()}}, "connections", "thirdparty")
	res := &connections.Resolver{Plugins: h, Service: e.svc}
	toolsCap.Resolver = res
	// The connection is an OAuth one of acme, whose base URL is the
	// provider's API: the connector says where, the host checks.
	cctx := toolcall.With(ctx, toolcall.Caller{Principal: e.alice})
	tool := func(name string, args any) string {
		t.Helper()
		b, _ := json.Marshal(args)
		r := h.Call(cctx, name, b, &wasm.CallOptions{Tenant: e.alice.TenantID})
		if !r.OK {
			t.Fatalf("%s: %+v", name, r.Error)
		}
		return r.Text
	}
	if got := tool("listConnections", map[string]any{}); !strings.Contains(got, c.ID) || !strings.Contains(got, "services=drive,mail") {
		t.Fatalf("listConnections: %s", got)
	}
	if got := tool("externalBrowse", map[string]any{"connection": c.ID, "service": "drive"}); !strings.Contains(got, `"Quarterly report" path=q3`) {
		t.Fatalf("externalBrowse: %s", got)
	}
	if got := tool("sendMail", map[string]any{"connection": c.ID, "service": "mail", "to": []string{"bob@acme.example"}, "subject": "Q3", "body": "Revenue rose."}); !strings.Contains(got, `sent "Q3"`) {
		t.Fatalf("sendMail: %s", got)
	}
	list, err := res.ListMail(ctx, e.alice, wire.ListMailRequest{Connection: c.ID, Service: "mail"})
	if err != nil || len(list.Messages) != 1 || list.Messages[0].Subject != "Q3" || list.Messages[0].To[0] != "bob@acme.example" {
		t.Fatalf("listMail %+v %v", list, err)
	}
	// A service the connector lacks, and sendMail on a service that is not mail.
	if _, err := res.Browse(ctx, e.alice, wire.BrowseRequest{Connection: c.ID, Service: "calendar"}); err == nil || !strings.Contains(err.Error(), "no connector") {
		t.Fatalf("unknown service: %v", err)
	}
	if _, err := res.SendMail(ctx, e.alice, wire.SendMailRequest{Connection: c.ID, Service: "drive", Mail: wire.Mail{To: []string{"x@y"}}}); err == nil || !strings.Contains(err.Error(), "unsupported") {
		t.Fatalf("mail on drive: %v", err)
	}
	// Bob, with no connection of his own, cannot use alice's.
	bctx := toolcall.With(ctx, toolcall.Caller{Principal: e.bob})
	b, _ := json.Marshal(map[string]any{"connection": c.ID, "service": "drive"})
	if r := h.Call(bctx, "externalBrowse", b, &wasm.CallOptions{Tenant: e.bob.TenantID}); r.OK || !strings.Contains(r.Error.Error(), "not_found") {
		t.Fatalf("bob browses alice's drive: %+v", r)
	}
}
