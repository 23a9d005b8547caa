package filetransfer_test

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/agenthost/agenthost/host/connections"
	"github.com/agenthost/agenthost/host/connections/connectionstest"
	"github.com/agenthost/agenthost/host/filetransfer"
	"github.com/agenthost/agenthost/host/store"
	"github.com/agenthost/agenthost/host/tenancy"
	"github.com/agenthost/agenthost/host/toolcall"
	"github.com/agenthost/agenthost/host/wasm"
	"github.com/agenthost/agenthost/host/wasm/wasmtest"
	"github.com/agenthost/agenthost/pdk/connector/wire"
)

// env is a SQLite store with two users of one tenant, their connections
// service, the filetransfer capability and a plugin host with the ftp
// connector and the hostile ftpprobe loaded. files.test resolves to
// loopback; the operator allows it on the ports in allowed.
type env struct {
	db         *store.DB
	svc        *connections.Service
	alice, bob tenancy.Principal
	ft         *filetransfer.Capability
	host       *wasm.Host
	resolver   *connections.Resolver
	logs       *connectionstest.LogSink
	probe      *wasm.Plugin
	n          int // connections made
}

func newEnv(t testing.TB, allowed ...string) *env {
	t.Helper()
	us := connectionstest.NewUsers(t)
	e := &env{db: us.DB, alice: us.Alice, bob: us.Bob, logs: &connectionstest.LogSink{}}
	var err error
	e.svc, err = connections.New(connections.Options{Store: e.db, Sealer: connectionstest.Sealer(t), Providers: connections.DefaultProviders()})
	if err != nil {
		t.Fatal(err)
	}
	var hosts []string
	for _, p := range allowed {
		hosts = append(hosts, "files.test:"+p)
	}
	opts := wasm.EgressOptions{AllowPrivateHosts: hosts, Resolver: connectionstest.DNS{"files.test": "127.0.0.1", "public.test": "127.0.0.1"}}
	e.ft = &filetransfer.Capability{Logins: e.svc, Egress: opts, Timeout: 10 * time.Second}
	e.svc.OnRevoke(e.ft.Forget)
	t.Cleanup(e.ft.Close)
	h := wasmtest.NewHost(t, wasmtest.Options{Egress: opts, Capabilities: []wasm.Capability{e.ft.Wasm()}, Logs: e.logs}, "ftp", "ftpprobe")
	e.probe = wasmtest.Plugin(t, h, "ftpprobe")
	e.host = h
	e.resolver = &connections.Resolver{Plugins: h, Service: e.svc}
	return e
}

// connect stores who's file server connection to url.
func (e *env) connect(t testing.TB, who tenancy.Principal, url, account, password, hostKey string) connections.Connection {
	t.Helper()
	e.n++
	c, err := e.svc.AddToken(context.Background(), who, connections.NewToken{Provider: "ftp", Label: fmt.Sprintf("files %d", e.n), Auth: "basic",
		BaseURL: url, Account: account, Token: password, HostKey: hostKey})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func (e *env) browse(who tenancy.Principal, c connections.Connection, path string, limit int, cursor string) (wire.Listing, error) {
	return e.resolver.Browse(context.Background(), who, wire.BrowseRequest{Connection: c.ID, Service: "files", Path: path, Limit: limit, Cursor: cursor})
}

func (e *env) download(who tenancy.Principal, c connections.Connection, path string, max int64) (wire.File, error) {
	return e.resolver.Download(context.Background(), who, wire.DownloadRequest{Connection: c.ID, Service: "files", Path: path, MaxBytes: max})
}

func (e *env) upload(who tenancy.Principal, c connections.Connection, dir, name string, data []byte) (wire.Entry, error) {
	return e.resolver.Upload(context.Background(), who, wire.UploadRequest{Connection: c.ID, Service: "files", Path: dir, Name: name, Data: data})
}

func (e *env) search(who tenancy.Principal, c connections.Connection, q string) (wire.Listing, error) {
	return e.resolver.Search(context.Background(), who, wire.SearchRequest{Connection: c.ID, Service: "files", Query: q})
}

// op calls the probe's op tool as who.
func (e *env) op(who tenancy.Principal, args map[string]any) wasm.Result {
	b, _ := json.Marshal(args)
	ctx := toolcall.With(context.Background(), toolcall.Caller{Principal: who})
	return e.probe.Call(ctx, "op", b, &wasm.CallOptions{Tenant: who.TenantID})
}

func (e *env) probeCall(who tenancy.Principal, tool string, args any) wasm.Result {
	b, _ := json.Marshal(args)
	ctx := toolcall.With(context.Background(), toolcall.Caller{Principal: who})
	return e.probe.Call(ctx, tool, b, &wasm.CallOptions{Tenant: who.TenantID})
}

func mask(s string) string {
	b := []byte(s)
	for i := range b {
		b[i] ^= 0x5a
	}
	return hex.EncodeToString(b)
}
