//go:build !wasip1

// The plugin host and the store run natively; these tests drive the built
// plugin through them and through the legacy action adapter.

package main

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/agenthost/agenthost/host/actions"
	"github.com/agenthost/agenthost/host/agent"
	"github.com/agenthost/agenthost/host/files"
	"github.com/agenthost/agenthost/host/llm"
	"github.com/agenthost/agenthost/host/llm/llmtest"
	"github.com/agenthost/agenthost/host/llm/modeluse"
	"github.com/agenthost/agenthost/host/toolcall"
	"github.com/agenthost/agenthost/host/tools"
	"github.com/agenthost/agenthost/host/wasm"
	"github.com/agenthost/agenthost/host/wasm/wasmtest"
	"github.com/agenthost/agenthost/host/worldtest"
	"github.com/agenthost/agenthost/plugins/legacyactions/neutralize"
)

const letter = `Sehr geehrte Frau Keller

Bitte überweisen Sie den Betrag auf IBAN CH93 0076 2011 6238 5295 7. Rückfragen an peter.frei@example.ch
oder +41 (0)44 123 45 67. Meine AHV-Nummer: 756.1234.5678.97.

Freundliche Grüsse
Peter Frei`

type env struct {
	w       *worldtest.World
	host    *wasm.Host
	adapter *actions.Adapter
}

func newEnv(t *testing.T) env {
	t.Helper()
	w := worldtest.New(t, worldtest.Options{Workflow: "neutralize", Model: &worldtest.Model{
		Models:  map[modeluse.Operation][]llm.ModelConfig{modeluse.OpAgent: {{Model: "agent-model", ContextWindow: 32000}}},
		Timeout: 20 * time.Second,
	}})
	fc := &files.Capability{Files: w.Files, Workflows: w.Workflows}
	h := wasmtest.HostWith(t, []wasm.Capability{fc.Wasm()}, "legacyactions")
	return env{w: w, host: h, adapter: actions.NewAdapter(h, fc, actions.Limits{})}
}

func (e env) ctx() context.Context {
	ctx := toolcall.With(context.Background(), toolcall.Caller{Principal: e.w.P, WorkspaceID: e.w.Workspace, WorkflowID: e.w.Workflow})
	return llm.WithAttribution(ctx, llm.Attribution{TenantID: e.w.Tenant.ID, WorkspaceID: e.w.Workspace, UserID: e.w.User.ID, WorkflowID: e.w.Workflow, Purpose: "agent"})
}

func (e env) content(t *testing.T, fileID string) string {
	t.Helper()
	_, r, err := e.w.Files.Open(context.Background(), e.w.P, fileID)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	b, _ := io.ReadAll(r)
	return string(b)
}

var docItemRE = regexp.MustCompile(`docItem:[A-Za-z0-9_-]+`)

// TestNeutralizeDocumentsThroughTheAgent: a workflow document goes into
// context.neutralizeData by its docItem: reference (the model calls
// context_neutralizeData on the wire); the neutralized document comes back
// as a new workflow document whose reference the model passes on in the
// next round; neutralizing it again replaces nothing.
func TestNeutralizeDocumentsThroughTheAgent(t *testing.T) {
	e := newEnv(t)
	item, _, err := e.w.Files.Upload(context.Background(), e.w.P, files.Upload{WorkspaceID: e.w.Workspace, Name: "brief.txt", Content: strings.NewReader(letter)})
	if err != nil {
		t.Fatal(err)
	}
	doc, _, err := files.Attach(context.Background(), e.w.Workflows, toolcall.Caller{Principal: e.w.P, WorkspaceID: e.w.Workspace, WorkflowID: e.w.Workflow}, item, "upload", "upload")
	if err != nil {
		t.Fatal(err)
	}
	set, _, err := tools.NewRegistry(e.adapter, map[string][]string{"legacy": {"context.neutralizeData"}}).Set("legacy")
	if err != nil {
		t.Fatal(err)
	}
	var second string
	e.w.Server.Script(
		llmtest.CallTools(llmtest.Call("context_neutralizeData", `{"documentList":["`+doc.Ref()+`"],"returnMapping":true}`)),
		llmtest.Decide(func(req llmtest.ChatRequest) llmtest.Step {
			last := req.Messages[len(req.Messages)-1].Content
			refs := docItemRE.FindAllString(last, -1)
			if len(refs) != 2 {
				return llmtest.Reply("no references in: " + last)
			}
			second = refs[0]
			return llmtest.CallTools(llmtest.Call("context_neutralizeData", `{"documentList":["`+refs[0]+`"]}`))
		}),
		llmtest.Reply("Done."))
	res := agent.New(e.w.Client, agent.Config{}, nil).Run(e.ctx(), agent.Input{Prompt: "neutralize " + doc.Ref(), Round: 1}, set, nil)
	if res.Outcome != agent.Completed || res.ToolCalls != 2 {
		t.Fatalf("run: %s, %d calls, %v, %q", res.Outcome, res.ToolCalls, res.Err, res.Answer)
	}
	docs, err := e.w.Workflows.ResolveDocuments(context.Background(), e.w.P, e.w.Workflow, []string{second, "docList:context.neutralizeData:neutralization-mapping.json"})
	if err != nil || len(docs) != 2 {
		t.Fatalf("documents: %v %+v", err, docs)
	}
	got := e.content(t, docs[0].FileID)
	want, _ := neutralize.New().Neutralize(letter)
	if docs[0].Name != "brief.neutralized.txt" || got != want {
		t.Fatalf("%s:\n%s\nwant\n%s", docs[0].Name, got, want)
	}
	for _, secret := range []string{"Keller", "CH93", "peter.frei", "123 45 67", "756.1234", "Peter Frei"} {
		if strings.Contains(got, secret) {
			t.Errorf("%q survived:\n%s", secret, got)
		}
	}
	var mapping []neutralize.Entry
	if err := json.Unmarshal([]byte(e.content(t, docs[1].FileID)), &mapping); err != nil || len(mapping) != 6 {
		t.Fatalf("mapping %v: %+v", err, mapping)
	}
	reqs := e.w.Server.ChatRequests()
	if last := reqs[2].Messages[len(reqs[2].Messages)-1].Content; !strings.Contains(last, "replaced 0 name(s), 0 e-mail") {
		t.Errorf("the second pass replaced something: %s", last)
	}
}

// TestNeutralizeRefusals: what the action refuses, and the host before it.
func TestNeutralizeRefusals(t *testing.T) {
	e := newEnv(t)
	pdf, _, err := e.w.Files.Upload(context.Background(), e.w.P, files.Upload{WorkspaceID: e.w.Workspace, Name: "scan.pdf", Content: strings.NewReader("%PDF-1.4\n\x00\x01binary")})
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct{ name, args, code, msg string }{
		{"nothing to do", `{}`, actions.CodeActionFailed, "give text or documentList"},
		{"unknown kind", `{"text":"x","kinds":["ADDRESS"]}`, actions.CodeActionFailed, "unknown kind"},
		{"not a text document", `{"documentList":["` + pdf.ID + `"]}`, actions.CodeActionFailed, "not a text document"},
		{"a document of nobody's", `{"documentList":["docItem:nope"]}`, actions.CodeActionFailed, "docItem:nope"},
		{"a wrong argument type", `{"text":42}`, wasm.CodeInvalidArguments, "text"},
		{"an unknown argument", `{"text":"x","mode":"all"}`, wasm.CodeInvalidArguments, "mode"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res := e.adapter.Call(e.ctx(), "context.neutralizeData", []byte(c.args), nil)
			if res.OK || res.Error.Code != c.code || !strings.Contains(res.Error.Message, c.msg) {
				t.Fatalf("%+v", res.Error)
			}
		})
	}
}

// TestPluginRunsTheLibrary: the plugin's answer for each held-out corpus
// document is the library's, so the corpus figures measured on the library
// (neutralize.BenchmarkNeutralizeCorpus) are the action's.
func TestPluginRunsTheLibrary(t *testing.T) {
	e := newEnv(t)
	paths, _ := filepath.Glob("neutralize/testdata/corpus/test/*.txt")
	if len(paths) == 0 {
		t.Fatal("no held-out corpus documents")
	}
	marks := regexp.MustCompile(`\[\[[NEIAP]:(.*?)\]\]`)
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		text := marks.ReplaceAllString(string(b), "$1")
		args, _ := json.Marshal(map[string]string{"text": text})
		res := e.adapter.Call(e.ctx(), "context.neutralizeData", args, nil)
		if !res.OK {
			t.Fatalf("%s: %+v", p, res.Error)
		}
		var m actions.Mapped
		if err := json.Unmarshal(res.Data, &m); err != nil {
			t.Fatal(err)
		}
		want, _ := neutralize.New().Neutralize(text)
		if _, got, ok := strings.Cut(m.Text, "\n\n"); !ok || got != want {
			t.Errorf("%s: the plugin's text differs from the library's", p)
		}
	}
}

// TestExtractFromFiles: two workflow documents in, one CSV document out
// (stored and bound to the workflow), the same rows as data.
func TestExtractFromFiles(t *testing.T) {
	e := newEnv(t)
	caller := toolcall.Caller{Principal: e.w.P, WorkspaceID: e.w.Workspace, WorkflowID: e.w.Workflow}
	var refs []string
	for name, text := range map[string]string{
		"rechnung.txt": "Rechnung Nr. 2025-044\nWinterthur, 08.04.2025\nTotal zu bezahlen: CHF 1'780.50\nIBAN CH63 0070 0655 1521 4426 5\nUID CHE-116.281.710",
		"notiz.txt":    "Liebe Anna, bis morgen!",
	} {
		item, _, err := e.w.Files.Upload(context.Background(), e.w.P, files.Upload{WorkspaceID: e.w.Workspace, Name: name, Content: strings.NewReader(text)})
		if err != nil {
			t.Fatal(err)
		}
		doc, _, err := files.Attach(context.Background(), e.w.Workflows, caller, item, "upload", "upload")
		if err != nil {
			t.Fatal(err)
		}
		refs = append(refs, doc.Ref())
	}
	args, _ := json.Marshal(map[string]any{"documentList": refs})
	res := e.adapter.Call(e.ctx(), "trustee.extractFromFiles", args, nil)
	if !res.OK {
		t.Fatalf("%+v", res.Error)
	}
	var m actions.Mapped
	if err := json.Unmarshal(res.Data, &m); err != nil || len(m.Documents) != 1 || !strings.HasPrefix(m.Documents[0].DocItem, "docItem:") {
		t.Fatalf("mapped %s (%v)", res.Data, err)
	}
	csv := e.content(t, m.Documents[0].FileID)
	if !strings.Contains(csv, "rechnung.txt;2025-044;08.04.2025;1780.50;CHF;CH6300700655152144265;CHE-116.281.710;") ||
		!strings.Contains(csv, "notiz.txt;;;;;;;no invoice data found") {
		t.Errorf("csv:\n%s", csv)
	}
	if !strings.Contains(res.Text, "read 1 of 2 document(s) as invoices") {
		t.Errorf("text: %s", res.Text)
	}
	if res := e.adapter.Call(e.ctx(), "trustee.extractFromFiles", []byte(`{"documentList":[]}`), nil); res.OK || res.Error.Code != wasm.CodeInvalidArguments {
		t.Errorf("an empty list: %+v", res.Error)
	}
}
