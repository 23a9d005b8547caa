//go:build !wasip1

// The failure modes a file bridge is known for (docs/files.md), one test
// each (the dict-typed document list is host/tools'
// TestFailureModeInvalidDocumentListTypeDict): each shows the failure
// cannot happen here.

package main

import (
	"context"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/agenthost/agenthost/host/agent"
	"github.com/agenthost/agenthost/host/files"
	"github.com/agenthost/agenthost/host/files/filemeta"
	"github.com/agenthost/agenthost/host/llm"
	"github.com/agenthost/agenthost/host/llm/llmtest"
	"github.com/agenthost/agenthost/host/llm/modeluse"
	"github.com/agenthost/agenthost/host/rounds"
	"github.com/agenthost/agenthost/host/tenancy"
	"github.com/agenthost/agenthost/host/tools"
	"github.com/agenthost/agenthost/host/workflows"
	"github.com/agenthost/agenthost/host/worldtest"
)

var docItemRe = regexp.MustCompile(`docItem:[0-9a-f-]{36}`)

func agentModel() *worldtest.Model {
	return &worldtest.Model{Models: map[modeluse.Operation][]llm.ModelConfig{
		modeluse.OpAgent: {{Model: "agent-model", ContextWindow: 32768, InputCHFPer1M: 1, OutputCHFPer1M: 2}},
	}}
}

// toolResults are the tool messages the model has seen so far.
func toolResults(r llmtest.ChatRequest) []string {
	var out []string
	for _, m := range r.Messages {
		if m.Role == "tool" {
			out = append(out, m.Content)
		}
	}
	return out
}

// round runs one workspace round with prompt in a new workflow (the env's
// workflow from then on) and waits for it to end.
func (e *env) round(t *testing.T, prompt string) workflows.Workflow {
	t.Helper()
	ag := agent.New(e.w.Client, agent.Config{MaxRounds: 8}, nil)
	runner := rounds.New(e.wf, e.svc, ag, tools.NewRegistry(e.host, nil), e.db, rounds.Config{}, nil)
	t.Cleanup(runner.Close)
	w, err := runner.Start(context.Background(), e.p, e.ws, rounds.StartRequest{Prompt: prompt})
	if err != nil {
		t.Fatal(err)
	}
	e.flow = w.ID // the round's workflow is the one whose events count
	for deadline := time.Now().Add(2 * time.Minute); ; time.Sleep(20 * time.Millisecond) {
		if w, err = e.wf.Get(context.Background(), e.p, w.ID); err != nil {
			t.Fatal(err)
		}
		if w.Status != workflows.StatusRunning || time.Now().After(deadline) {
			break
		}
	}
	if w.Status != workflows.StatusCompleted {
		t.Fatalf("workflow %s", w.Status)
	}
	return w
}

// writeThenRead is a round in which the agent writes a file and hands the
// reference from the tool's result to another tool.
func writeThenRead(t *testing.T) (*env, []string) {
	e := newEnv(t, agentModel())
	e.w.Server.SetDefault(llmtest.EndpointChat, llmtest.Decide(func(r llmtest.ChatRequest) llmtest.Step {
		res := toolResults(r)
		switch len(res) {
		case 0:
			return llmtest.CallTools(llmtest.Call("writeFile", `{"name":"download.md","content":"Revenue grew by twelve percent."}`))
		case 1:
			return llmtest.CallTools(llmtest.Call("readFile", `{"file":"`+docItemRe.FindString(res[0])+`"}`))
		}
		return llmtest.Reply("Read: " + res[1])
	}))
	e.round(t, "Store the download, then read it back.")
	evs, err := e.wf.Events(context.Background(), e.p, e.flow, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	var results []string
	for _, ev := range evs {
		if ev.Type == workflows.EventToolResult {
			results = append(results, string(ev.Data))
		}
	}
	if len(results) != 2 {
		t.Fatalf("tool results: %q", results)
	}
	return e, results
}

// TestFailureModeNoWorkflowAvailable is "getChatDocumentsFromDocumentList:
// No workflow available": a tool of an agent round runs with the round's
// workflow, so the file it makes is bound to it and named by a docItem
// reference that resolves there.
func TestFailureModeNoWorkflowAvailable(t *testing.T) {
	e, results := writeThenRead(t)
	ref := docItemRe.FindString(results[0])
	if ref == "" || !strings.Contains(results[0], "documentList ref: ") {
		t.Fatalf("the tool ran without the workflow: %s", results[0])
	}
	docs, err := e.wf.ResolveDocuments(context.Background(), e.p, e.flow, []string{ref})
	if err != nil || len(docs) != 1 || docs[0].Name != "download.md" {
		t.Fatalf("%s in the workflow: %+v %v", ref, docs, err)
	}
	created := events[workflows.FileCreatedData](t, e, workflows.EventFileCreated)
	if len(created) != 1 || created[0].DocumentID != strings.TrimPrefix(ref, "docItem:") || created[0].Tool != "writeFile" {
		t.Fatalf("fileCreated: %+v", created)
	}
}

// TestFailureModeZeroContentPartsAfterDownload is "Building structure
// prompt with 0 valid ContentParts despite a successful download": the
// file a tool stored is bridged to the workflow, so the next tool given its
// docItem reference gets its content.
func TestFailureModeZeroContentPartsAfterDownload(t *testing.T) {
	_, results := writeThenRead(t)
	if !strings.Contains(results[1], "Revenue grew by twelve percent.") {
		t.Fatalf("the consumer got no content: %s", results[1])
	}
}

// TestFailureModeListFilesDictHasNoFileName is "'dict' object has no
// attribute 'fileName'" from listFiles: results are typed, so every file,
// whatever it carries (tags, a folder, a description, none), is listed by
// name with its id.
func TestFailureModeListFilesDictHasNoFileName(t *testing.T) {
	e := newEnv(t, nil)
	ctx := context.Background()
	fo, err := e.svc.CreateFolder(ctx, e.p, filemeta.Folder{WorkspaceID: e.ws, Name: "In"})
	if err != nil {
		t.Fatal(err)
	}
	var all []filemeta.Item
	all = append(all, e.upload(t, e.p, e.ws, "plain.txt", "a"))
	all = append(all, e.upload(t, e.p, e.ws, "tagged.txt", "b", "x", "y"))
	f, _, err := e.svc.Upload(ctx, e.p, files.Upload{WorkspaceID: e.ws, Name: "foldered.pdf", FolderID: fo.ID, Description: "d",
		Content: strings.NewReader("%PDF-1.7")})
	if err != nil {
		t.Fatal(err)
	}
	all = append(all, f)
	all = append(all, e.upload(t, e.bob, e.ws, "colleague's file.md", "c"))
	got := text(t, e.call(t, "listFiles", map[string]any{}))
	for _, f := range all {
		if !strings.Contains(got, f.Name+" (file "+f.ID) {
			t.Errorf("%s missing: %s", f.Name, got)
		}
	}
}

// TestFailureModeGhostDuplicate is "File with ID … not found directly after
// Duplicate detected": the duplicate check runs in the writer's scope, so
// writing bytes that exist as a file the writer cannot see (another
// workspace's, or a colleague's that a personal member cannot read) makes a
// fresh file the writer can read, never returns the invisible one.
func TestFailureModeGhostDuplicate(t *testing.T) {
	e := newEnv(t, nil)
	ctx := context.Background()
	const body = "the same bytes"
	elsewhere := e.upload(t, e.p, e.ws2, "same.txt", body)
	out := text(t, e.call(t, "writeFile", map[string]any{"name": "same.txt", "content": body}))
	id := regexp.MustCompile(`file id: ([0-9a-f-]{36})`).FindStringSubmatch(out)
	if id == nil || id[1] == elsewhere.ID {
		t.Fatalf("write returned the other workspace's file: %s", out)
	}
	if got := text(t, e.call(t, "readFile", map[string]any{"file": id[1]})); !strings.HasSuffix(got, body) {
		t.Fatalf("read back: %s", got)
	}

	// A personal member sees only their own files: the colleague's copy of
	// the same bytes and name must not come back.
	pat, err := e.db.CreateUser(ctx, tenancy.User{TenantID: e.p.TenantID, Email: "pat@t"})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.db.SetMembership(ctx, tenancy.Membership{WorkspaceID: e.ws, UserID: pat.ID, Role: tenancy.RolePersonal}); err != nil {
		t.Fatal(err)
	}
	pp := tenancy.Principal{TenantID: e.p.TenantID, UserID: pat.ID}
	res := e.callAs(t, pp, e.ws, "writeFile", map[string]any{"name": "same.txt", "content": body})
	out = text(t, res)
	pid := regexp.MustCompile(`file id: ([0-9a-f-]{36})`).FindStringSubmatch(out)
	if pid == nil || pid[1] == id[1] {
		t.Fatalf("pat got the colleague's file: %s", out)
	}
	if got := text(t, e.callAs(t, pp, e.ws, "getFileInfo", map[string]any{"file": pid[1]})); !strings.Contains(got, "same.txt") {
		t.Fatalf("pat reads the new file: %s", got)
	}
	var n int
	if err := e.db.SQL().QueryRow(`SELECT COUNT(*) FROM files WHERE name = 'same.txt'`).Scan(&n); err != nil || n != 3 {
		t.Fatalf("%d files named same.txt, want 3 (one per scope): %v", n, err)
	}
}
