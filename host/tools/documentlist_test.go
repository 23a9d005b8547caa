package tools_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/agenthost/agenthost/host/files"
	"github.com/agenthost/agenthost/host/toolcall"
	"github.com/agenthost/agenthost/host/workflows"
	"github.com/agenthost/agenthost/host/worldtest"

	"github.com/agenthost/agenthost/host/tools"
	"github.com/agenthost/agenthost/host/wasm"
	"github.com/agenthost/agenthost/host/wasm/manifest"
)

// recorder is a runner with one tool taking a document list; it keeps the
// arguments the tool would receive.
type recorder struct{ got []byte }

func (r *recorder) Tools() []wasm.ToolInfo {
	return []wasm.ToolInfo{{Tool: manifest.Tool{Name: "summarize", InputSchema: json.RawMessage(`{"type":"object","properties":{
		"documents":{"type":"array","items":{"type":"string"}},"length":{"type":"string"}}}`)}}}
}

func (r *recorder) Call(_ context.Context, _ string, args []byte, _ *wasm.CallOptions) wasm.Result {
	r.got = args
	return wasm.Result{OK: true}
}

// TestFailureModeInvalidDocumentListTypeDict is the file bridge's failure
// mode "Invalid documentList type: <class 'dict'>" (docs/files.md: the
// tolerant parser was bypassed): every call of a tool goes through the set,
// which normalises the document list in each shape a model sends before the tool (and its
// schema check) sees it.
func TestFailureModeInvalidDocumentListTypeDict(t *testing.T) {
	const id = "0192f1a0-7b3c-7def-8a12-3456789abcde"
	r := &recorder{}
	set, _, err := tools.NewRegistry(r, map[string][]string{"core": {"summarize"}}).Set("core")
	if err != nil {
		t.Fatal(err)
	}
	for _, in := range []string{
		`{"documents":["docItem:` + id + `"],"length":"short"}`,
		`{"documents":[{"id":"docItem:` + id + `","name":"memo.md"}],"length":"short"}`,
		`{"documents":{"documents":[{"id":"docItem:` + id + `"}]},"length":"short"}`,
		`{"documents":"docItem:` + id + `","length":"short"}`,
	} {
		if res := set.Call(context.Background(), "summarize", []byte(in), nil); !res.OK {
			t.Fatalf("%s: %+v", in, res.Error)
		}
		var got struct {
			Documents []string `json:"documents"`
			Length    string   `json:"length"`
		}
		if err := json.Unmarshal(r.got, &got); err != nil || len(got.Documents) != 1 || got.Length != "short" ||
			(got.Documents[0] != "docItem:"+id && got.Documents[0] != "docItem:"+id+":memo.md") {
			t.Errorf("%s reached the tool as %s", in, r.got)
		}
	}
}

// TestDocumentListsExpanded: a docList in a tool's document list reaches
// the tool as the docItem references of the caller's workflow's documents;
// what cannot be expanded is an invalid_arguments error naming what to
// pass instead, and the tool does not run.
func TestDocumentListsExpanded(t *testing.T) {
	ctx := context.Background()
	w := worldtest.New(t, worldtest.Options{Workflow: "docs"})
	var docs []workflows.Document
	for _, name := range []string{"a.pdf", "b.pdf", "c.pdf"} {
		f, _, err := w.Files.Upload(ctx, w.P, files.Upload{WorkspaceID: w.Workspace, Name: name, Content: strings.NewReader(name), NoDedupe: true})
		if err != nil {
			t.Fatal(err)
		}
		docs = append(docs, workflows.Document{FileID: f.ID, Label: "upload"})
	}
	m, err := w.Workflows.AddMessage(ctx, w.P, workflows.Message{WorkflowID: w.Workflow, Status: workflows.MessageStep, Role: workflows.RoleUser, Documents: docs})
	if err != nil {
		t.Fatal(err)
	}
	a, b, c := m.Documents[0].Ref(), m.Documents[1].Ref(), m.Documents[2].Ref()
	r := &limitedRecorder{}
	reg := tools.NewRegistry(r, map[string][]string{"core": {"summarize", "pick2"}}).WithDocumentLists(w.Workflows)
	set, _, err := reg.Set("core")
	if err != nil {
		t.Fatal(err)
	}
	inFlow := toolcall.With(ctx, toolcall.Caller{Principal: w.P, WorkspaceID: w.Workspace, WorkflowID: w.Workflow})
	direct := toolcall.With(ctx, toolcall.Caller{Principal: w.P, WorkspaceID: w.Workspace})
	for _, tc := range []struct {
		name, tool string
		ctx        context.Context
		args       string
		want       []string // the documents the tool receives; nil: refused
		says       string
	}{
		{"list", "summarize", inFlow, `{"documents":["docList:upload"]}`, []string{a, b, c}, ""},
		{"list in an object", "summarize", inFlow, `{"documents":[{"label":"upload","messageId":"` + m.ID + `"}]}`, []string{a, b, c}, ""},
		{"list in a wrapper, deduplicated", "summarize", inFlow, `{"documents":{"documents":["` + b + `","docList:upload"]}}`, []string{b, a, c}, ""},
		{"no list: untouched", "summarize", inFlow, `{"documents":["` + c + `"]}`, []string{c}, ""},
		{"unknown label", "summarize", inFlow, `{"documents":["docList:results"]}`, nil, "its labels are docList:upload (3 documents)"},
		{"more than maxItems", "pick2", inFlow, `{"documentList":["docList:upload"]}`, nil, "name 3 documents and this tool takes at most 2"},
		{"within maxItems", "pick2", inFlow, `{"documentList":["docList:upload","` + a + `"]}`, nil, "at most 2"},
		{"outside a workflow", "summarize", direct, `{"documents":["docList:upload"]}`, nil, "pass file ids"},
		{"no caller", "summarize", ctx, `{"documents":["docList:upload"]}`, nil, "pass file ids"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r.got = nil
			res := set.Call(tc.ctx, tc.tool, []byte(tc.args), nil)
			if tc.want == nil {
				if res.OK || res.Error == nil || res.Error.Code != wasm.CodeInvalidArguments || !strings.Contains(res.Error.Message, tc.says) || r.got != nil {
					t.Fatalf("%s: %+v %+v, tool got %s; want invalid_arguments saying %q and no call", tc.args, res, res.Error, r.got, tc.says)
				}
				return
			}
			var got map[string][]string
			if !res.OK || json.Unmarshal(r.got, &got) != nil {
				t.Fatalf("%s: %+v, tool got %s", tc.args, res.Error, r.got)
			}
			if g := append(got["documents"], got["documentList"]...); !slices.Equal(g, tc.want) {
				t.Fatalf("%s reached the tool as %q; want %q", tc.args, g, tc.want)
			}
		})
	}
	// Without a resolver the reference reaches the tool as written (the
	// files capability then refuses it).
	plain, _, _ := tools.NewRegistry(r, map[string][]string{"core": {"summarize"}}).Set("core")
	if res := plain.Call(inFlow, "summarize", []byte(`{"documents":["docList:upload"]}`), nil); !res.OK || !strings.Contains(string(r.got), `"docList:upload"`) {
		t.Fatalf("without WithDocumentLists: %+v, tool got %s", res.Error, r.got)
	}
}

// limitedRecorder offers summarize (documents) and pick2 (documentList,
// at most 2) and keeps the arguments a call receives.
type limitedRecorder struct{ got []byte }

func (r *limitedRecorder) Tools() []wasm.ToolInfo {
	return []wasm.ToolInfo{
		{Tool: manifest.Tool{Name: "summarize", InputSchema: json.RawMessage(`{"type":"object","properties":{
		"documents":{"type":"array","items":{"type":"string"}}}}`)}},
		{Tool: manifest.Tool{Name: "pick2", InputSchema: json.RawMessage(`{"type":"object","properties":{
		"documentList":{"type":"array","items":{"type":"string"},"maxItems":2}}}`)}},
	}
}

func (r *limitedRecorder) Call(_ context.Context, _ string, args []byte, _ *wasm.CallOptions) wasm.Result {
	r.got = args
	return wasm.Result{OK: true}
}
