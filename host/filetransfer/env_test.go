package filetransfer_test

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/agenthost/agenthost/host/connections"
	"github.com/agenthost/agenthost/host/filetransfer"
	"github.com/agenthost/agenthost/host/secrets"
	"github.com/agenthost/agenthost/host/store"
	"github.com/agenthost/agenthost/host/tenancy"
	"github.com/agenthost/agenthost/host/toolcall"
	"github.com/agenthost/agenthost/host/wasm"
	"github.com/agenthost/agenthost/host/wasm/wasmtest"
	"github.com/agenthost/agenthost/pdk/connector/wire"
)

type fakeDNS map[string]string

func (d fakeDNS) LookupIPAddr(_ context.Context, host string) ([]net.IPAddr, error) {
	if a, ok := d[host]; ok {
		return []net.IPAddr{{IP: net.ParseIP(a)}}, nil
	}
	return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
}

// logSink keeps every log record's text.
type logSink struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *logSink) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *logSink) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

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
	logs       *logSink
	probe      *wasm.Plugin
	n          int // connections made
}

func newEnv(t *testing.T, allowed ...string) *env {
	t.Helper()
	ctx := context.Background()
	db, err := store.Open(ctx, store.Config{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if err := db.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	tn, err := db.CreateTenant(ctx, "Acme")
	if err != nil {
		t.Fatal(err)
	}
	user := func(email string) tenancy.Principal {
		u, err := db.CreateUser(ctx, tenancy.User{TenantID: tn.ID, Email: email, Name: email})
		if err != nil {
			t.Fatal(err)
		}
		return tenancy.Principal{TenantID: tn.ID, UserID: u.ID}
	}
	e := &env{db: db, alice: user("alice@acme"), bob: user("bob@acme"), logs: &logSink{}}
	sealer, err := secrets.NewSealer(bytes.Repeat([]byte{9}, 32))
	if err != nil {
		t.Fatal(err)
	}
	e.svc, err = connections.New(connections.Options{Store: db, Sealer: sealer, Providers: connections.DefaultProviders()})
	if err != nil {
		t.Fatal(err)
	}
	var hosts []string
	for _, p := range allowed {
		hosts = append(hosts, "files.test:"+p)
	}
	opts := wasm.EgressOptions{AllowPrivateHosts: hosts, Resolver: fakeDNS{"files.test": "127.0.0.1", "public.test": "127.0.0.1"}}
	e.ft = &filetransfer.Capability{Logins: e.svc, Egress: opts, Timeout: 10 * time.Second}
	e.svc.OnRevoke(e.ft.Forget)
	t.Cleanup(e.ft.Close)
	reg, err := wasm.NewRegistry(append(wasm.StandardCapabilities(opts), e.ft.Wasm())...)
	if err != nil {
		t.Fatal(err)
	}
	h, err := wasm.New(ctx, wasm.NewConfig().WithCapabilities(reg).
		WithLogger(slog.New(slog.NewTextHandler(e.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))).WithPluginLogLevel(slog.LevelDebug).
		WithCompilationCacheDir(filepath.Join(os.TempDir(), "agenthost-test-wasm-cache")))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close(context.Background()) })
	if _, err := h.Load(ctx, wasm.Source{Origin: "test:ftp", Module: wasmtest.Module(t, "ftp"), Builtin: true}); err != nil {
		t.Fatal(err)
	}
	if e.probe, err = h.Load(ctx, wasm.Source{Origin: "test:ftpprobe", Module: wasmtest.Module(t, "ftpprobe"), Builtin: true}); err != nil {
		t.Fatal(err)
	}
	e.host = h
	e.resolver = &connections.Resolver{Plugins: h, Service: e.svc}
	return e
}

// connect stores who's file server connection to url.
func (e *env) connect(t *testing.T, who tenancy.Principal, url, account, password, hostKey string) connections.Connection {
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
