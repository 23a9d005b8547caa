//go:build !wasip1

// The plugin host and the store run natively; these tests drive the built
// plugin through them.

package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/agenthost/agenthost/host/files"
	"github.com/agenthost/agenthost/host/files/filemeta"
	"github.com/agenthost/agenthost/host/knowledge"
	"github.com/agenthost/agenthost/host/knowledge/kindex"
	"github.com/agenthost/agenthost/host/knowledge/ondemand"
	"github.com/agenthost/agenthost/host/knowledge/search"
	"github.com/agenthost/agenthost/host/store"
	"github.com/agenthost/agenthost/host/tenancy"
	"github.com/agenthost/agenthost/host/toolcall"
	"github.com/agenthost/agenthost/host/wasm"
	"github.com/agenthost/agenthost/host/wasm/wasmtest"
	"github.com/agenthost/agenthost/host/workflows"
	"github.com/agenthost/agenthost/host/worldtest"
	"github.com/agenthost/agenthost/pdk/content"
)

// maxUpload is the env's upload (and version) limit.
const maxUpload = 64 << 10

// env is the plugin in a real plugin host whose files and knowledge
// capabilities reach a migrated embedded store: a tenant with the user p (a
// member of workspaces ws and ws2, running workflow wf), a colleague bob
// (a member of ws), and another tenant's user eve.
type env struct {
	w    *worldtest.World
	db   *store.DB
	svc  *files.Service
	wf   *workflows.Service
	host *wasm.Host
	fc   *files.Capability
	p    tenancy.Principal
	bob  tenancy.Principal
	eve  tenancy.Principal
	ws   string
	ws2  string
	evWS string
	flow string
}

func newEnv(t testing.TB, model *worldtest.Model) *env {
	t.Helper()
	ctx := context.Background()
	w := worldtest.New(t, worldtest.Options{Workspaces: []string{"w", "w2"}, Workflow: "run", Model: model})
	svc := files.NewService(w.DB, w.Blobs, maxUpload)
	fc := &files.Capability{Files: svc, Workflows: w.Workflows}
	kc := &knowledge.Capability{Files: svc, Documents: w.Workflows, Search: search.New(w.DB, nil, nil),
		Reader: ondemand.NewReader(w.DB, w.Blobs, nil), Folders: svc}
	h := wasmtest.HostWith(t, []wasm.Capability{fc.Wasm(), kc.Wasm()}, "filetools")
	e := &env{w: w, db: w.DB, svc: svc, wf: w.Workflows, host: h, fc: fc, p: w.P, ws: w.Workspaces[0], ws2: w.Workspaces[1], flow: w.Workflow}
	bob, err := w.DB.CreateUser(ctx, tenancy.User{TenantID: w.Tenant.ID, Email: "bob@t"})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.DB.SetMembership(ctx, tenancy.Membership{WorkspaceID: e.ws, UserID: bob.ID, Role: tenancy.RoleMember}); err != nil {
		t.Fatal(err)
	}
	e.bob = tenancy.Principal{TenantID: w.Tenant.ID, UserID: bob.ID}
	tn, err := w.DB.CreateTenant(ctx, "other")
	if err != nil {
		t.Fatal(err)
	}
	eve, err := w.DB.CreateUser(ctx, tenancy.User{TenantID: tn.ID, Email: "eve@other"})
	if err != nil {
		t.Fatal(err)
	}
	evWS, err := w.DB.CreateWorkspace(ctx, tenancy.Workspace{TenantID: tn.ID, Name: "eve"})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.DB.SetMembership(ctx, tenancy.Membership{WorkspaceID: evWS.ID, UserID: eve.ID, Role: tenancy.RoleMember}); err != nil {
		t.Fatal(err)
	}
	e.eve, e.evWS = tenancy.Principal{TenantID: tn.ID, UserID: eve.ID}, evWS.ID
	return e
}

// call runs a tool as p in workspace ws (and the env's workflow when ws is
// the env's first workspace and p its user).
func (e *env) callAs(t testing.TB, p tenancy.Principal, ws, tool string, args any) wasm.Result {
	t.Helper()
	raw, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}
	c := toolcall.Caller{Principal: p, WorkspaceID: ws}
	if p == e.p && ws == e.ws {
		c.WorkflowID = e.flow
	}
	return e.host.Call(toolcall.With(context.Background(), c), tool, raw, nil)
}

func (e *env) call(t testing.TB, tool string, args any) wasm.Result {
	t.Helper()
	return e.callAs(t, e.p, e.ws, tool, args)
}

// text is a successful tool result's text; anything else ends the test.
func text(t testing.TB, res wasm.Result) string {
	t.Helper()
	if !res.OK {
		t.Fatalf("tool failed: %+v", res.Error)
	}
	return res.Text
}

// failed is a failed tool result's message; a success ends the test.
func failed(t testing.TB, res wasm.Result) string {
	t.Helper()
	if res.OK || res.Error == nil {
		t.Fatalf("tool succeeded: %s", res.Data)
	}
	return res.Error.Code + ": " + res.Error.Message
}

func (e *env) upload(t testing.TB, p tenancy.Principal, ws, name, body string, tags ...string) filemeta.Item {
	t.Helper()
	f, _, err := e.svc.Upload(context.Background(), p, files.Upload{WorkspaceID: ws, Name: name, Content: strings.NewReader(body), Tags: tags, NoDedupe: true})
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// indexed records text chunks for a file as its extracted content, as the
// ingestion job would.
func (e *env) indexed(t testing.TB, f filemeta.Item, texts ...string) {
	t.Helper()
	ctx := context.Background()
	chunks := make([]kindex.Chunk, len(texts))
	for i, s := range texts {
		chunks[i] = kindex.Chunk{ID: f.ID + "-" + string(rune('a'+i)), Seq: i, ObjectID: "o" + string(rune('a'+i)), ContentType: content.Text,
			Text: s, Ref: content.Ref{PageIndex: i + 1}, Tokens: len(strings.Fields(s))}
	}
	if _, err := e.db.ClaimContent(ctx, f.TenantID, f.SHA256, false); err != nil {
		t.Fatal(err)
	}
	if err := e.db.SaveContent(ctx, f.TenantID, f.SHA256, content.Index{FileName: f.Name, MIMEType: f.MIMEType, TotalObjects: len(texts)}, chunks,
		kindex.StatusIndexed); err != nil {
		t.Fatal(err)
	}
}

func (e *env) current(t testing.TB, id string) (filemeta.Item, string) {
	t.Helper()
	it, err := e.svc.Get(context.Background(), e.p, id)
	if err != nil {
		t.Fatal(err)
	}
	_, s, err := e.svc.Text(context.Background(), e.p, id, 0)
	if err != nil {
		return it, ""
	}
	return it, s
}

// events are the workflow's events of one type, decoded.
func events[T any](t testing.TB, e *env, typ workflows.EventType) []T {
	t.Helper()
	evs, err := e.wf.Events(context.Background(), e.p, e.flow, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	var out []T
	for _, ev := range evs {
		if ev.Type == typ {
			var v T
			if err := json.Unmarshal(ev.Data, &v); err != nil {
				t.Fatal(err)
			}
			out = append(out, v)
		}
	}
	return out
}
