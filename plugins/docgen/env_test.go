//go:build !wasip1

// The plugin host and the store run natively; this test drives the built
// plugin through them.

package main

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/agenthost/agenthost/host/billing"
	"github.com/agenthost/agenthost/host/blob"
	"github.com/agenthost/agenthost/host/files"
	"github.com/agenthost/agenthost/host/knowledge"
	"github.com/agenthost/agenthost/host/llm"
	"github.com/agenthost/agenthost/host/llm/llmtest"
	"github.com/agenthost/agenthost/host/store"
	"github.com/agenthost/agenthost/host/tenancy"
	"github.com/agenthost/agenthost/host/toolcall"
	"github.com/agenthost/agenthost/host/wasm"
	"github.com/agenthost/agenthost/host/wasm/wasmtest"
	"github.com/agenthost/agenthost/host/workflows"
)

// env runs the built plugin in a real plugin host whose files, model and
// images capabilities reach a migrated embedded store, its file and
// workflow services and a scripted model provider.
type env struct {
	db       *store.DB
	svc      *files.Service
	wf       *workflows.Service
	srv      *llmtest.Server
	client   *llm.Client
	host     *wasm.Host
	p        tenancy.Principal
	ws       string
	workflow string
}

func newEnv(t testing.TB, plugins ...string) env {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	db, err := store.Open(ctx, store.Config{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if err := db.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	blobs, err := blob.NewDir(filepath.Join(dir, "blobs"))
	if err != nil {
		t.Fatal(err)
	}
	tn, _ := db.CreateTenant(ctx, "t")
	u, _ := db.CreateUser(ctx, tenancy.User{TenantID: tn.ID, Email: "u@t"})
	ws, _ := db.CreateWorkspace(ctx, tenancy.Workspace{TenantID: tn.ID, Name: "w"})
	if err := db.SetMembership(ctx, tenancy.Membership{WorkspaceID: ws.ID, UserID: u.ID, Role: tenancy.RoleMember}); err != nil {
		t.Fatal(err)
	}
	p := tenancy.Principal{TenantID: tn.ID, UserID: u.ID}
	svc := files.NewService(db, blobs, 0)
	wf := workflows.NewService(db, workflows.NewBroker(db, workflows.BrokerConfig{}), nil)
	w, err := wf.Start(ctx, p, workflows.NewWorkflow{WorkspaceID: ws.ID, Name: "w"})
	if err != nil {
		t.Fatal(err)
	}
	srv := llmtest.New(t)
	client, err := llm.New(llm.Config{
		Providers: []llm.ProviderConfig{{Name: "test", BaseURL: srv.URL(), Timeout: 20 * time.Second}},
		Models: map[llm.Operation][]llm.ModelConfig{
			llm.OpAgent:   {{Provider: "test", Model: "agent-model", ContextWindow: 16384, InputCHFPer1M: 1, OutputCHFPer1M: 2}},
			llm.OpSummary: {{Provider: "test", Model: "small-model", ContextWindow: 1024, InputCHFPer1M: 1, OutputCHFPer1M: 2}},
			llm.OpImage:   {{Provider: "test", Model: "dall-e-3", CHFPerImage: 0.04}},
		},
	}, billing.NewMeter(db), nil)
	if err != nil {
		t.Fatal(err)
	}
	fc := &files.Capability{Files: svc, Workflows: wf}
	mc := &llm.Capabilities{Client: client, Workflows: wf}
	// The knowledge capability is offered but not connected (the analysis
	// plugin then reads text files through files.read).
	kc := &knowledge.Capability{}
	reg, err := wasm.NewRegistry(append(wasm.StandardCapabilities(wasm.EgressOptions{}), fc.Wasm(), mc.ModelCapability(), mc.ImagesCapability(), kc.Wasm())...)
	if err != nil {
		t.Fatal(err)
	}
	h, err := wasm.New(ctx, wasm.NewConfig().WithCapabilities(reg).WithCompilationCacheDir(filepath.Join(os.TempDir(), "agenthost-test-wasm-cache")))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close(context.Background()) })
	for _, plugin := range plugins {
		if _, err := h.Load(ctx, wasm.Source{Origin: "test:" + plugin, Module: wasmtest.Module(t, plugin), Builtin: true}); err != nil {
			t.Fatal(err)
		}
	}
	wctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	if err := h.Warm(wctx); err != nil {
		t.Fatal(err)
	}
	return env{db: db, svc: svc, wf: wf, srv: srv, client: client, host: h, p: p, ws: ws.ID, workflow: w.ID}
}

// call runs a tool for the env's user in its workflow and decodes a
// successful result into out.
func (e env) call(t testing.TB, tool string, args any, out any) wasm.Result {
	t.Helper()
	raw, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}
	ctx := toolcall.With(context.Background(), toolcall.Caller{Principal: e.p, WorkspaceID: e.ws, WorkflowID: e.workflow})
	res := e.host.Call(ctx, tool, raw, nil)
	if res.OK && out != nil {
		if err := json.Unmarshal(res.Data, out); err != nil {
			t.Fatalf("%s result %s: %v", tool, res.Data, err)
		}
	}
	return res
}

// content returns a stored file's bytes and metadata.
func (e env) content(t testing.TB, id string) (files.Item, []byte) {
	t.Helper()
	item, r, err := e.svc.Open(context.Background(), e.p, id)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	b, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	return item, b
}
