package tools_test

import (
	"context"
	"encoding/json"
	"testing"

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

// TestFailureModeInvalidDocumentListTypeDict is seed 001's failure mode
// "Invalid documentList type: <class 'dict'>" (the tolerant coercer was
// bypassed): every call of a tool goes through the set, which normalises
// the document list in each shape a model sends before the tool (and its
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
