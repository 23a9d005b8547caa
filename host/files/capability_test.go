package files_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/agenthost/agenthost/host/files"
	"github.com/agenthost/agenthost/host/store"
	"github.com/agenthost/agenthost/host/tenancy"
	"github.com/agenthost/agenthost/host/toolcall"
	"github.com/agenthost/agenthost/host/wasm"
	"github.com/agenthost/agenthost/host/workflows"
	"github.com/agenthost/agenthost/host/worldtest"
)

// capEnv is a migrated embedded store, the file and workflow services, one
// user who is a member of two workspaces, and a running workflow in the
// first.
type capEnv struct {
	db       *store.DB
	svc      *files.Service
	wf       *workflows.Service
	cap      *files.Capability
	p        tenancy.Principal
	ws, ws2  string
	workflow string
}

func newCapEnv(t *testing.T) capEnv {
	t.Helper()
	w := worldtest.New(t, worldtest.Options{Workspaces: []string{"w1", "w2"}, Workflow: "report"})
	return capEnv{db: w.DB, svc: w.Files, wf: w.Workflows, cap: &files.Capability{Files: w.Files, Workflows: w.Workflows}, p: w.P, ws: w.Workspaces[0], ws2: w.Workspaces[1], workflow: w.Workflow}
}

func (e capEnv) ctx(workflowID string) context.Context {
	return toolcall.With(context.Background(), toolcall.Caller{Principal: e.p, WorkspaceID: e.ws, WorkflowID: workflowID})
}

func writeReq(name, mimeType string, data []byte) string {
	b, _ := json.Marshal(map[string]string{"name": name, "mimeType": mimeType, "data": base64.StdEncoding.EncodeToString(data)})
	return string(b)
}

func capCode(err error) string {
	var ce *wasm.CapabilityError
	if errors.As(err, &ce) {
		return ce.Code
	}
	return ""
}

func TestFilesCapabilityRefusesWithoutCaller(t *testing.T) {
	e := newCapEnv(t)
	ctx := context.Background()
	if _, err := files.CapWrite(e.cap, ctx, "generateDocument", writeReq("a.txt", "text/plain", []byte("x"))); capCode(err) != "no_caller" {
		t.Fatalf("write without caller: %v, want no_caller", err)
	}
	if _, err := files.CapRead(e.cap, ctx, "readFile", `{"file":"x"}`); capCode(err) != "no_caller" {
		t.Fatalf("read without caller: %v, want no_caller", err)
	}
	// A capability not yet connected to its services says so.
	idle := &files.Capability{}
	if _, err := files.CapRead(idle, e.ctx(""), "readFile", `{"file":"x"}`); capCode(err) != "unavailable" {
		t.Fatalf("read on an unconnected capability: %v, want unavailable", err)
	}
}

// TestFilesCapabilityBridge: a write in a workflow stores the file, adds a
// message carrying it as a document and appends a fileCreated event; the
// docItem reference it returns reads the file back.
func TestFilesCapabilityBridge(t *testing.T) {
	e := newCapEnv(t)
	ctx := e.ctx(e.workflow)
	data := []byte("# Report\n\nQuarterly figures.\n")
	out, err := files.CapWrite(e.cap, ctx, "generateDocument", writeReq("report.md", "text/markdown", data))
	if err != nil {
		t.Fatal(err)
	}
	res := out.(files.WriteResult)
	if res.FileID == "" || !strings.HasPrefix(res.DocItem, "docItem:") || res.MessageID == "" || res.Size != int64(len(data)) {
		t.Fatalf("write result %+v", res)
	}
	msgs, err := e.wf.Messages(context.Background(), e.p, e.workflow, workflows.After{}, 0)
	if err != nil {
		t.Fatal(err)
	}
	var doc *workflows.Document
	for _, m := range msgs {
		for i, d := range m.Documents {
			if d.Ref() == res.DocItem {
				doc = &m.Documents[i]
				if m.ID != res.MessageID || m.Role != workflows.RoleAssistant || m.Status != workflows.MessageStep {
					t.Fatalf("bridge message %+v", m)
				}
			}
		}
	}
	if doc == nil || doc.FileID != res.FileID || doc.Label != "generateDocument:report.md" {
		t.Fatalf("no document %s with file %s in the workflow's messages: %+v", res.DocItem, res.FileID, msgs)
	}
	evs, err := e.wf.Events(context.Background(), e.p, e.workflow, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	var created *workflows.FileCreatedData
	for _, ev := range evs {
		if ev.Type == workflows.EventFileCreated {
			var d workflows.FileCreatedData
			if err := json.Unmarshal(ev.Data, &d); err != nil {
				t.Fatal(err)
			}
			created = &d
		}
	}
	if created == nil || created.FileID != res.FileID || created.DocumentID != doc.ID || created.MessageID != res.MessageID || created.Tool != "generateDocument" {
		t.Fatalf("fileCreated event %+v, want file %s document %s", created, res.FileID, doc.ID)
	}
	// Both references read the same bytes back.
	for _, ref := range []string{res.FileID, res.DocItem} {
		out, err := files.CapRead(e.cap, ctx, "readFile", `{"file":"`+ref+`"}`)
		if err != nil {
			t.Fatalf("read %s: %v", ref, err)
		}
		got, _ := base64.StdEncoding.DecodeString(out.(files.ReadResult).Data)
		if !bytes.Equal(got, data) {
			t.Fatalf("read %s: %q", ref, got)
		}
	}
}

func TestFilesCapabilityWithoutWorkflow(t *testing.T) {
	e := newCapEnv(t)
	out, err := files.CapWrite(e.cap, e.ctx(""), "createChart", writeReq("chart.png", "image/png", []byte("\x89PNG fake")))
	if err != nil {
		t.Fatal(err)
	}
	res := out.(files.WriteResult)
	if res.FileID == "" || res.DocItem != "" || res.MessageID != "" {
		t.Fatalf("outside a workflow a write names only the file: %+v", res)
	}
	if _, err := e.svc.Get(context.Background(), e.p, res.FileID); err != nil {
		t.Fatalf("the file is not stored: %v", err)
	}
}

func TestFilesCapabilityReadScopeAndBadInput(t *testing.T) {
	e := newCapEnv(t)
	ctx := context.Background()
	other, _, err := e.svc.Upload(ctx, e.p, files.Upload{WorkspaceID: e.ws2, Name: "other.txt", Content: strings.NewReader("elsewhere")})
	if err != nil {
		t.Fatal(err)
	}
	mine, _, err := e.svc.Upload(ctx, e.p, files.Upload{WorkspaceID: e.ws, Name: "mine.txt", Content: strings.NewReader("0123456789")})
	if err != nil {
		t.Fatal(err)
	}
	stranger := toolcall.With(ctx, toolcall.Caller{Principal: tenancy.Principal{TenantID: e.p.TenantID, UserID: "nobody"}, WorkspaceID: e.ws})
	tests := []struct {
		name string
		ctx  context.Context
		req  string
		code string
	}{
		{"a file of another workspace", e.ctx(""), `{"file":"` + other.ID + `"}`, "not_found"},
		{"a user without access", stranger, `{"file":"` + mine.ID + `"}`, "not_found"},
		{"an unknown file", e.ctx(""), `{"file":"nope"}`, "not_found"},
		{"docItem outside a workflow", e.ctx(""), `{"file":"docItem:abc"}`, "invalid_request"},
		{"a docItem not in the workflow", e.ctx(e.workflow), `{"file":"docItem:abc"}`, "not_found"},
		{"an empty reference", e.ctx(""), `{"file":" "}`, "invalid_request"},
		{"a foreign scheme", e.ctx(""), `{"file":"http://x"}`, "invalid_request"},
		{"negative maxBytes", e.ctx(""), `{"file":"` + mine.ID + `","maxBytes":-1}`, "invalid_request"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := files.CapRead(e.cap, tc.ctx, "readFile", tc.req)
			if capCode(err) != tc.code {
				t.Fatalf("err = %v, want code %s", err, tc.code)
			}
		})
	}
	out, err := files.CapRead(e.cap, e.ctx(""), "readFile", `{"file":"`+mine.ID+`","maxBytes":4}`)
	if err != nil {
		t.Fatal(err)
	}
	r := out.(files.ReadResult)
	if got, _ := base64.StdEncoding.DecodeString(r.Data); string(got) != "0123" || !r.Truncated || r.Size != 10 {
		t.Fatalf("maxBytes read: %+v", r)
	}

	writes := []struct{ name, req, code string }{
		{"data not base64", `{"name":"a.txt","data":"%%%"}`, "invalid_request"},
		{"no name", writeReq("", "text/plain", []byte("x")), "invalid_request"},
		{"a name with a slash", writeReq("a/b.txt", "text/plain", []byte("x")), "invalid_request"},
	}
	for _, tc := range writes {
		t.Run("write "+tc.name, func(t *testing.T) {
			if _, err := files.CapWrite(e.cap, e.ctx(""), "writeFile", tc.req); capCode(err) != tc.code {
				t.Fatalf("err = %v, want code %s", err, tc.code)
			}
		})
	}
}
