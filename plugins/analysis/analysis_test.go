//go:build !wasip1

// The plugin host and the store run natively; this test drives the built
// plugin through them.

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/agenthost/agenthost/host/blob"
	"github.com/agenthost/agenthost/host/files"
	"github.com/agenthost/agenthost/host/files/filemeta"
	"github.com/agenthost/agenthost/host/knowledge"
	"github.com/agenthost/agenthost/host/knowledge/extract"
	"github.com/agenthost/agenthost/host/knowledge/ingest"
	"github.com/agenthost/agenthost/host/knowledge/ondemand"
	"github.com/agenthost/agenthost/host/knowledge/search"
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

// env runs the analysis plugin, with the office extractor for ingestion, in
// a plugin host whose knowledge, files and model capabilities reach a
// migrated embedded store and a scripted provider whose summary model has a
// context of 1,024 tokens.
type env struct {
	db       *store.DB
	blobs    *blob.Dir
	svc      *files.Service
	srv      *llmtest.Server
	host     *wasm.Host
	ex       *extract.Set
	p        tenancy.Principal
	ws       string
	workflow string
	wf       *workflows.Service
}

func newEnv(t testing.TB) env {
	t.Helper()
	w := worldtest.New(t, worldtest.Options{Workflow: "w", Model: &worldtest.Model{Models: map[modeluse.Operation][]llm.ModelConfig{
		modeluse.OpSummary: {{Model: "small-model", ContextWindow: 1024, InputCHFPer1M: 1, OutputCHFPer1M: 2}},
	}}})
	kc := &knowledge.Capability{}
	fc := &files.Capability{Files: w.Files, Workflows: w.Workflows}
	mc := &llm.Capabilities{Client: w.Client, Workflows: w.Workflows}
	h := wasmtest.HostWith(t, []wasm.Capability{fc.Wasm(), mc.ModelCapability(), kc.Wasm()}, "analysis", "office")
	ex := extract.New(h)
	*kc = knowledge.Capability{Files: w.Files, Documents: w.Workflows, Search: search.New(w.DB, nil, nil), Reader: ondemand.NewReader(w.DB, w.Blobs, ex)}
	return env{db: w.DB, blobs: w.Blobs, svc: w.Files, srv: w.Server, host: h, ex: ex, p: w.P, ws: w.Workspace, workflow: w.Workflow, wf: w.Workflows}
}

// upload stores a file; indexed runs the knowledge store's ingestion on it.
func (e env) upload(t testing.TB, name, text string, indexed bool) filemeta.Item {
	t.Helper()
	f, _, err := e.svc.Upload(context.Background(), e.p, files.Upload{WorkspaceID: e.ws, Name: name, Content: strings.NewReader(text)})
	if err != nil {
		t.Fatal(err)
	}
	if indexed {
		if _, err := ingest.New(e.db, e.blobs, e.ex, nil).Ingest(context.Background(), f.ID, false); err != nil {
			t.Fatal(err)
		}
	}
	return f
}

func (e env) call(t testing.TB, tool string, args any) (Result, wasm.Result) {
	t.Helper()
	raw, _ := json.Marshal(args)
	ctx := toolcall.With(context.Background(), toolcall.Caller{Principal: e.p, WorkspaceID: e.ws, WorkflowID: e.workflow})
	r := e.host.Call(ctx, tool, raw, nil)
	var res Result
	if r.OK {
		if err := json.Unmarshal(r.Data, &res); err != nil {
			t.Fatal(err)
		}
	}
	return res, r
}

// purposes counts the usage records by purpose.
func (e env) purposes(t *testing.T) map[string]int {
	t.Helper()
	rows, err := e.db.SQL().Query(`SELECT purpose FROM usage_records WHERE workflow_id = ?`, e.workflow)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[string]int{}
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		out[s]++
	}
	return out
}

// scripted answers map calls with "finding N" (or long findings) and
// reduce calls with "merged".
func scripted(longFindings bool) llmtest.Step {
	n := 0
	return llmtest.Decide(func(r llmtest.ChatRequest) llmtest.Step {
		sys := r.Messages[0].Content
		switch {
		case strings.Contains(sys, "one part of a larger input"):
			n++
			if longFindings {
				return llmtest.Reply(fmt.Sprintf("finding %d: %s", n, strings.Repeat("a detailed observation about the part ", 20)))
			}
			return llmtest.Reply(fmt.Sprintf("finding %d", n))
		case strings.Contains(sys, "merge partial results"):
			return llmtest.Reply("merged: " + strings.Join(strings.Fields(r.LastUser())[:6], " "))
		}
		return llmtest.Reply("direct answer")
	})
}

// report is a Markdown document of about 2,500 tokens, over twice the test
// model's 1,024-token context; each paragraph carries its number.
func report() (string, int) {
	var b strings.Builder
	b.WriteString("# Annual report\n\n")
	const paras = 60
	for i := range paras {
		fmt.Fprintf(&b, "Paragraph marker%03d. The committee reviewed the budget of department %d, its staffing, the open risks and the plans for the next quarter, and recorded its decisions in detail for the minutes of the meeting.\n\n", i, i)
		if i%15 == 14 {
			fmt.Fprintf(&b, "## Part %d\n\n", i/15+2)
		}
	}
	return b.String(), paras
}

func TestSummarizeLargerThanContext(t *testing.T) {
	e := newEnv(t)
	text, paras := report()
	f := e.upload(t, "report.md", text, true)
	e.srv.SetDefault(llmtest.EndpointChat, scripted(false))

	res, r := e.call(t, "summarizeContent", SummarizeArgs{Documents: []string{f.ID}})
	if !r.OK {
		t.Fatalf("%+v", r.Error)
	}
	if len(res.Sources) != 1 || res.Sources[0].Via != "knowledge" || res.Sources[0].Name != "report.md" || res.InputTokens < 2000 {
		t.Fatalf("sources %+v, input %d tokens", res.Sources, res.InputTokens)
	}
	reqs := e.srv.ChatRequests()
	var maps, reduces []llmtest.ChatRequest
	for _, q := range reqs {
		if strings.Contains(q.Messages[0].Content, "one part of a larger input") {
			maps = append(maps, q)
		} else if strings.Contains(q.Messages[0].Content, "merge partial results") {
			reduces = append(reduces, q)
		}
	}
	if res.Parts < 3 || res.MapCalls != res.Parts || len(maps) != res.Parts || res.ReduceCalls != 1 || len(reduces) != 1 || res.Calls != len(reqs) || res.Calls != res.Parts+1 {
		t.Fatalf("parts %d, map calls %d (seen %d), reduce calls %d (seen %d), calls %d of %d requests",
			res.Parts, res.MapCalls, len(maps), res.ReduceCalls, len(reduces), res.Calls, len(reqs))
	}
	// Every map request fits the context; together they carry every
	// paragraph once, in order.
	var carried strings.Builder
	for _, q := range maps {
		if n := llm.CountTokens("small-model", q.Messages[0].Content+q.LastUser()); n+q.MaxTokens+q.MaxCompletionTokens > 1024 {
			t.Fatalf("a map request takes %d tokens and asks %d for the answer", n, q.MaxTokens+q.MaxCompletionTokens)
		}
		carried.WriteString(q.LastUser() + "\n")
	}
	last := -1
	for i := range paras {
		at := strings.Index(carried.String(), fmt.Sprintf("marker%03d", i))
		if at < 0 || at < last || strings.Count(carried.String(), fmt.Sprintf("marker%03d", i)) != 1 {
			t.Fatalf("paragraph %d is missing, repeated or out of order in the map requests", i)
		}
		last = at
	}
	for i := 1; i <= res.Parts; i++ {
		if !strings.Contains(reduces[0].LastUser(), fmt.Sprintf("Partial result %d:\nfinding %d", i, i)) {
			t.Fatalf("the reduce request lacks partial result %d:\n%s", i, reduces[0].LastUser())
		}
	}
	if !strings.HasPrefix(res.Result, "merged:") || !strings.Contains(res.Note, fmt.Sprintf("split into %d parts", res.Parts)) {
		t.Fatalf("result %q, note %q", res.Result, res.Note)
	}
	// Billed to the caller with the tool's purpose, per step.
	if p := e.purposes(t); p["tool:summarizeContent/map"] != res.Parts || p["tool:summarizeContent/reduce"] != 1 {
		t.Fatalf("usage purposes %v", p)
	}
}

// TestAnalyzeReducesRecursively: partial results too long to merge in one
// call are merged in groups, then the groups' results.
func TestAnalyzeReducesRecursively(t *testing.T) {
	e := newEnv(t)
	text, _ := report()
	e.srv.SetDefault(llmtest.EndpointChat, scripted(true))
	res, r := e.call(t, "analyzeContent", AnalyzeArgs{Text: text, Instruction: "List every decision."})
	if !r.OK {
		t.Fatalf("%+v", r.Error)
	}
	if res.ReduceCalls < 2 || res.Calls != res.MapCalls+res.ReduceCalls || len(e.srv.ChatRequests()) != res.Calls {
		t.Fatalf("map %d, reduce %d, calls %d, requests %d", res.MapCalls, res.ReduceCalls, res.Calls, len(e.srv.ChatRequests()))
	}
	if res.Sources[0].Via != "argument" {
		t.Fatalf("sources %+v", res.Sources)
	}
}

func TestSummarizeSmallInputOneCall(t *testing.T) {
	e := newEnv(t)
	// Not indexed: a text file is read as it is.
	f := e.upload(t, "note.txt", "The meeting moved to Tuesday.\n\nBring the budget.", false)
	e.srv.SetDefault(llmtest.EndpointChat, scripted(false))
	res, r := e.call(t, "summarizeContent", SummarizeArgs{Documents: []string{f.ID}, Length: "short"})
	if !r.OK {
		t.Fatalf("%+v", r.Error)
	}
	if res.Parts != 1 || res.Calls != 1 || res.ReduceCalls != 0 || res.Result != "direct answer" || res.Sources[0].Via != "file" {
		t.Fatalf("%+v", res)
	}
	q := e.srv.ChatRequests()[0]
	if !strings.Contains(q.LastUser(), "The meeting moved to Tuesday.") || !strings.Contains(q.Messages[0].Content, "in a few sentences") {
		t.Fatalf("request %+v", q)
	}
}

func TestAnalysisRefusals(t *testing.T) {
	e := newEnv(t)
	png := e.upload(t, "pic.png", "\x89PNG\r\n\x1a\nnot really", false)
	tests := []struct {
		name string
		tool string
		args any
		code string
	}{
		{"nothing to read", "summarizeContent", SummarizeArgs{}, "invalid_arguments"},
		{"an unknown document", "analyzeContent", AnalyzeArgs{Documents: []string{"nope"}, Instruction: "x"}, "not_found"},
		{"a binary file without text", "summarizeContent", SummarizeArgs{Documents: []string{png.ID}}, "not_ready"},
		{"an instruction larger than the context", "analyzeContent", AnalyzeArgs{Text: "x", Instruction: strings.Repeat("word ", 1500)}, "context_too_small"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, r := e.call(t, tc.tool, tc.args)
			if r.OK || r.Error == nil || r.Error.Code != tc.code {
				t.Fatalf("%+v, want error code %s", r, tc.code)
			}
		})
	}
	if n := len(e.srv.ChatRequests()); n != 0 {
		t.Fatalf("%d model calls for refused requests", n)
	}
	_ = bytes.MinRead
}
