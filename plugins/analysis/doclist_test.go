//go:build !wasip1

package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/agenthost/agenthost/host/llm/llmtest"
	"github.com/agenthost/agenthost/host/toolcall"
	"github.com/agenthost/agenthost/host/tools"
	"github.com/agenthost/agenthost/host/wasm"
	"github.com/agenthost/agenthost/host/workflows"
)

// TestSummarizeDocList: summarizeContent called as an agent calls it (through
// the tool set, in a workflow) with docList:upload reads every document the
// user uploaded with the message, once each; an unknown label is refused
// with the labels there are, before the plugin or the model runs.
func TestSummarizeDocList(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	a := e.upload(t, "minutes.txt", "The meeting moved to Tuesday.", false)
	b := e.upload(t, "budget.txt", "The budget is CHF 12,000.", false)
	m, err := e.wf.AddMessage(ctx, e.p, workflows.Message{WorkflowID: e.workflow, Status: workflows.MessageFirst, Role: workflows.RoleUser,
		Content: "summarise my uploads", Documents: []workflows.Document{{FileID: a.ID, Label: "upload"}, {FileID: b.ID, Label: "upload"}}})
	if err != nil {
		t.Fatal(err)
	}
	set, _, err := tools.NewRegistry(e.host, map[string][]string{"core": {"summarizeContent"}}).WithDocumentLists(e.wf).Set("core")
	if err != nil {
		t.Fatal(err)
	}
	in := toolcall.With(ctx, toolcall.Caller{Principal: e.p, WorkspaceID: e.ws, WorkflowID: e.workflow})
	e.srv.SetDefault(llmtest.EndpointChat, scripted(false))

	r := set.Call(in, "summarizeContent", []byte(`{"documents":["docList:upload","docItem:`+m.Documents[1].ID+`"]}`), nil)
	if !r.OK {
		t.Fatalf("%+v", r.Error)
	}
	var res Result
	if err := json.Unmarshal(r.Data, &res); err != nil {
		t.Fatal(err)
	}
	if len(res.Sources) != 2 || res.Sources[0].Name != "minutes.txt" || res.Sources[1].Name != "budget.txt" ||
		res.Sources[0].Ref != m.Documents[0].Ref() || res.Sources[1].Ref != m.Documents[1].Ref() {
		t.Fatalf("sources %+v", res.Sources)
	}
	q := e.srv.ChatRequests()[0].LastUser()
	if !strings.Contains(q, "Tuesday") || !strings.Contains(q, "CHF 12,000") {
		t.Fatalf("the model read %q", q)
	}

	calls := len(e.srv.ChatRequests())
	r = set.Call(in, "summarizeContent", []byte(`{"documents":["docList:uploads-2"]}`), nil)
	if r.OK || r.Error.Code != wasm.CodeInvalidArguments || !strings.Contains(r.Error.Message, "docList:upload (2 documents)") {
		t.Fatalf("unknown label: %+v", r.Error)
	}
	if n := len(e.srv.ChatRequests()); n != calls {
		t.Fatalf("%d model calls for a refused list", n-calls)
	}
}
