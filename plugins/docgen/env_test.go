//go:build !wasip1

// The plugin host and the store run natively; this test drives the built
// plugin through them.

package main

import (
	"context"
	"encoding/json"
	"io"
	"testing"

	"github.com/agenthost/agenthost/host/files"
	"github.com/agenthost/agenthost/host/files/filemeta"
	"github.com/agenthost/agenthost/host/knowledge"
	"github.com/agenthost/agenthost/host/llm"
	"github.com/agenthost/agenthost/host/llm/llmtest"
	"github.com/agenthost/agenthost/host/llm/modeluse"
	"github.com/agenthost/agenthost/host/store"
	"github.com/agenthost/agenthost/host/tenancy"
	"github.com/agenthost/agenthost/host/toolcall"
	"github.com/agenthost/agenthost/host/wasm"
	"github.com/agenthost/agenthost/host/wasm/wasmtest"
	"github.com/agenthost/agenthost/host/workflows"
	"github.com/agenthost/agenthost/host/worldtest"
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
	w := worldtest.New(t, worldtest.Options{Workflow: "w", Model: &worldtest.Model{Models: map[modeluse.Operation][]llm.ModelConfig{
		modeluse.OpAgent:   {{Model: "agent-model", ContextWindow: 16384, InputCHFPer1M: 1, OutputCHFPer1M: 2}},
		modeluse.OpSummary: {{Model: "small-model", ContextWindow: 1024, InputCHFPer1M: 1, OutputCHFPer1M: 2}},
		modeluse.OpImage:   {{Model: "dall-e-3", CHFPerImage: 0.04}},
	}}})
	fc := &files.Capability{Files: w.Files, Workflows: w.Workflows}
	mc := &llm.Capabilities{Client: w.Client, Workflows: w.Workflows}
	// The knowledge capability is offered but not connected (the analysis
	// plugin then reads text files through files.read).
	kc := &knowledge.Capability{}
	h := wasmtest.HostWith(t, []wasm.Capability{fc.Wasm(), mc.ModelCapability(), mc.ImagesCapability(), kc.Wasm()}, plugins...)
	return env{db: w.DB, svc: w.Files, wf: w.Workflows, srv: w.Server, client: w.Client, host: h, p: w.P, ws: w.Workspace, workflow: w.Workflow}
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
func (e env) content(t testing.TB, id string) (filemeta.Item, []byte) {
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
