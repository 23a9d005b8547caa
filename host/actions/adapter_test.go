package actions_test

import (
	"context"
	"encoding/json"
	"io"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agenthost/agenthost/host/actions"
	"github.com/agenthost/agenthost/host/agent"
	"github.com/agenthost/agenthost/host/files"
	"github.com/agenthost/agenthost/host/files/filemeta"
	"github.com/agenthost/agenthost/host/llm"
	"github.com/agenthost/agenthost/host/llm/llmtest"
	"github.com/agenthost/agenthost/host/llm/modeluse"
	"github.com/agenthost/agenthost/host/toolcall"
	"github.com/agenthost/agenthost/host/tools"
	"github.com/agenthost/agenthost/host/wasm"
	"github.com/agenthost/agenthost/host/wasm/wasmtest"
	"github.com/agenthost/agenthost/host/worldtest"
)

type env struct {
	w       *worldtest.World
	host    *wasm.Host
	files   *files.Capability
	adapter *actions.Adapter
}

// maxDoc is the document limit of these tests: hostile.big goes over it.
const maxDoc = 64 << 10

func newEnv(t *testing.T) env {
	t.Helper()
	w := worldtest.New(t, worldtest.Options{Workflow: "legacy", Model: &worldtest.Model{
		Models:  map[modeluse.Operation][]llm.ModelConfig{modeluse.OpAgent: {{Model: "agent-model", ContextWindow: 32000}}},
		Timeout: 20 * time.Second,
	}})
	h := wasmtest.Host(t, "actionsdemo", "actionshostile", "echo")
	fc := &files.Capability{Files: w.Files, Workflows: w.Workflows}
	return env{w: w, host: h, files: fc, adapter: actions.NewAdapter(h, fc, actions.Limits{MaxDocumentBytes: maxDoc}).WithVersions(h)}
}

func (e env) ctx() context.Context {
	return toolcall.With(context.Background(), toolcall.Caller{Principal: e.w.P, WorkspaceID: e.w.Workspace, WorkflowID: e.w.Workflow})
}

func (e env) fileNames(t *testing.T) []string {
	t.Helper()
	page, err := e.w.Files.List(context.Background(), e.w.P, filemeta.Filter{WorkspaceID: e.w.Workspace})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, it := range page.Items {
		names = append(names, it.Name)
	}
	slices.Sort(names)
	return names
}

func (e env) read(t *testing.T, fileID string) string {
	t.Helper()
	_, r, err := e.w.Files.Open(context.Background(), e.w.P, fileID)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	b, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

var docItemRef = regexp.MustCompile(`docItem:[A-Za-z0-9_-]+`)

// TestLegacyAdapter is the legacy adapter test of issue 12: a plugin of
// kind actions yields its dynamicMode actions as tools, a scripted model
// calls one by its wire name, and the documents the action returns land as
// files of the workspace, bound to the workflow, whose docItem: references
// the model reads in the next round.
func TestLegacyAdapter(t *testing.T) {
	e := newEnv(t)
	reg := tools.NewRegistry(e.adapter, map[string][]string{"legacy": {"demo.report", "demo.fail", "demo.peek", "demo.archive", "echo"}})
	set, missing, err := reg.Set("legacy")
	if err != nil {
		t.Fatal(err)
	}
	// demo.archive is an action, not dynamicMode: no tool.
	if !slices.Equal(missing, []string{"demo.archive"}) {
		t.Errorf("missing = %v, want [demo.archive]", missing)
	}
	var names []string
	for _, tl := range set.Tools() {
		names = append(names, tl.Name)
	}
	if !slices.Equal(names, []string{"demo.report", "demo.fail", "demo.peek", "echo"}) {
		t.Fatalf("tools = %v", names)
	}
	if tl, _ := set.Lookup("demo.peek"); !tl.ReadOnly {
		t.Errorf("demo.peek is not read-only")
	}

	e.w.Server.Script(
		llmtest.CallTools(llmtest.Call("demo_report", `{"title":"Q3 close","rows":3}`)),
		llmtest.Reply("The report is filed."))
	ctx := llm.WithAttribution(e.ctx(), llm.Attribution{TenantID: e.w.Tenant.ID, WorkspaceID: e.w.Workspace, UserID: e.w.User.ID, WorkflowID: e.w.Workflow, Purpose: "agent"})
	res := agent.New(e.w.Client, agent.Config{}, nil).Run(ctx, agent.Input{Prompt: "file the Q3 report", Round: 1}, set, nil)
	if res.Outcome != agent.Completed || res.ToolCalls != 1 {
		t.Fatalf("run: %s, %d tool calls, %v", res.Outcome, res.ToolCalls, res.Err)
	}
	reqs := e.w.Server.ChatRequests()
	if len(reqs) != 2 {
		t.Fatalf("%d model requests", len(reqs))
	}
	var offered []string
	for _, tl := range reqs[0].Tools {
		offered = append(offered, tl.Name)
	}
	if !slices.Equal(offered, []string{"demo_report", "demo_fail", "demo_peek", "echo"}) {
		t.Errorf("offered on the wire: %v", offered)
	}
	last := reqs[1].Messages[len(reqs[1].Messages)-1]
	if last.Role != "tool" || !strings.Contains(last.Content, `report "Q3 close" with 3 rows`) {
		t.Fatalf("the model read %+v", last)
	}
	refs := docItemRef.FindAllString(last.Content, -1)
	if len(refs) != 2 {
		t.Fatalf("docItem references in %q: %v", last.Content, refs)
	}
	docs, err := e.w.Workflows.ResolveDocuments(context.Background(), e.w.P, e.w.Workflow, refs)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, d := range docs {
		got[d.Name] = e.read(t, d.FileID)
		if d.Label != "demo.report:"+d.Name {
			t.Errorf("label %q", d.Label)
		}
	}
	if got["report.txt"] != "Report: Q3 close\n" || got["data.csv"] != "row,value\n1,1\n2,4\n3,9\n" {
		t.Errorf("documents: %q", got)
	}
}

// TestAdapterResults covers the mapping of every kind of result, honest and
// hostile, called directly as the API does. A refused result stores none of
// its documents.
func TestAdapterResults(t *testing.T) {
	e := newEnv(t)
	cases := []struct {
		name, tool, args string
		code             string // "" for success
		msg              string // in the error message or the text
	}{
		{"failure maps to an error", "demo.fail", `{}`, actions.CodeActionFailed, "the ledger is locked"},
		{"failure with a reason", "demo.fail", `{"reason":"period closed"}`, actions.CodeActionFailed, "period closed"},
		{"a pinned action is mapped too", "demo.fail@1.0.0", `{"reason":"pinned"}`, actions.CodeActionFailed, "pinned"},
		{"read-only lookup", "demo.peek", `{"key":"alpha"}`, "", `the value of alpha`},
		{"invalid arguments are refused", "demo.report", `{"title":"x","rows":0}`, wasm.CodeInvalidArguments, "rows"},
		{"unknown parameter is refused", "demo.report", `{"title":"x","rows":1,"admin":true}`, wasm.CodeInvalidArguments, "admin"},
		{"a non-dynamic action is no tool", "demo.archive", `{}`, wasm.CodeUnknownTool, "demo.archive"},
		{"a document over the limit", "hostile.big", `{"bytes":70000}`, wasm.CodeOutputTooLarge, "over the limit"},
		{"a path that climbs out", "hostile.named", `{"name":"../../etc/passwd"}`, wasm.CodeInvalidOutput, "path separator"},
		{"a Windows path", "hostile.named", `{"name":"..\\..\\boot.ini"}`, wasm.CodeInvalidOutput, "path separator"},
		{"a parent directory", "hostile.named", `{"name":".."}`, wasm.CodeInvalidOutput, "relative path"},
		{"a control character", "hostile.named", `{"name":"a\u0000b.txt"}`, wasm.CodeInvalidOutput, "control character"},
		{"documents from a read-only action", "hostile.sneaky", `{}`, wasm.CodeInvalidOutput, "read-only"},
		{"no ActionResult", "hostile.raw", `{}`, wasm.CodeInvalidOutput, ""},
		{"other tools pass through", "echo", `{"text":"hi"}`, "", "hi"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res := e.adapter.Call(e.ctx(), c.tool, []byte(c.args), nil)
			if c.code == "" {
				if !res.OK || !strings.Contains(res.Text+string(res.Data), c.msg) {
					t.Fatalf("%s: %+v %s", c.tool, res.Error, res.Text)
				}
				return
			}
			if res.OK || res.Error.Code != c.code || !strings.Contains(res.Error.Message, c.msg) {
				t.Fatalf("%s = %+v, want %s (%q)", c.tool, res.Error, c.code, c.msg)
			}
			if c.code == wasm.CodeInvalidArguments && res.Stats.MemoryBytes != 0 {
				t.Errorf("the guest ran for invalid arguments (memory %d)", res.Stats.MemoryBytes)
			}
		})
	}
	// Nothing above stored a document: the refused results were refused whole.
	if names := e.fileNames(t); len(names) != 0 {
		t.Errorf("files stored: %v", names)
	}
	// A document within the limit is stored.
	res := e.adapter.Call(e.ctx(), "hostile.big", []byte(`{"bytes":1000}`), nil)
	if !res.OK {
		t.Fatalf("hostile.big 1000: %+v", res.Error)
	}
	var m actions.Mapped
	if err := json.Unmarshal(res.Data, &m); err != nil || len(m.Documents) != 1 || m.Documents[0].Size != 1000 || !strings.HasPrefix(m.Documents[0].DocItem, "docItem:") {
		t.Fatalf("mapped %s (%v)", res.Data, err)
	}
	if names := e.fileNames(t); !slices.Equal(names, []string{"big.bin"}) {
		t.Errorf("files stored: %v", names)
	}
}

// TestAdapterWithoutWorkflowOrStore: outside a workflow a document is a
// file with an id and no docItem; without a caller or a store the result
// says the documents were not stored.
func TestAdapterWithoutWorkflowOrStore(t *testing.T) {
	e := newEnv(t)
	args := []byte(`{"title":"direct","rows":1}`)
	direct := toolcall.With(context.Background(), toolcall.Caller{Principal: e.w.P, WorkspaceID: e.w.Workspace})
	res := e.adapter.Call(direct, "demo.report", args, nil)
	if !res.OK || strings.Contains(res.Text, "docItem:") || !strings.Contains(res.Text, "file id: ") {
		t.Fatalf("outside a workflow: %+v %q", res.Error, res.Text)
	}
	if res := e.adapter.Call(context.Background(), "demo.report", args, nil); res.OK || res.Error.Code != actions.CodeDocumentsNotStored || !strings.Contains(res.Error.Message, "nobody") {
		t.Fatalf("without a caller: %+v", res.Error)
	}
	bare := actions.NewAdapter(e.host, nil, actions.Limits{})
	if res := bare.Call(e.ctx(), "demo.report", args, nil); res.OK || res.Error.Code != actions.CodeDocumentsNotStored {
		t.Fatalf("without a store: %+v", res.Error)
	}
	// An action without documents needs no store.
	if res := bare.Call(e.ctx(), "demo.peek", []byte(`{"key":"beta"}`), nil); !res.OK {
		t.Fatalf("peek without a store: %+v", res.Error)
	}
}
