package agent_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agenthost/agenthost/host/agent"
	"github.com/agenthost/agenthost/host/llm"
	"github.com/agenthost/agenthost/host/llm/llmtest"
	"github.com/agenthost/agenthost/host/llm/modeluse"
	"github.com/agenthost/agenthost/host/tools"
	"github.com/agenthost/agenthost/host/wasm"
	"github.com/agenthost/agenthost/host/workflows"
)

// memKeeper keeps results in memory under docItem references, as the
// files capability keeps them as workflow documents.
type memKeeper struct {
	mu   sync.Mutex
	docs map[string][]byte
	mime map[string]string
}

func (k *memKeeper) KeepResult(_ context.Context, tool, name, mimeType string, data []byte) (agent.KeptResult, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.docs == nil {
		k.docs, k.mime = map[string][]byte{}, map[string]string{}
	}
	id := fmt.Sprintf("0190c0de-0000-7000-8000-%012d", len(k.docs)+1)
	k.docs[id], k.mime[id] = data, mimeType
	return agent.KeptResult{Ref: "docItem:" + id, FileID: "file-" + id, Name: name}, nil
}

func (k *memKeeper) get(ref string) []byte {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.docs[strings.TrimPrefix(ref, "docItem:")]
}

// bigTools is the plugin tool set plus two tools of the host's own:
// exportInvoices, which returns a CSV table of the rows asked for (a
// connector download of megabytes), and readContentObjects, which reads a
// kept document in byte ranges as the documents plugin reads files.
type bigTools struct {
	inner  agent.Tools
	keeper *memKeeper
}

var (
	exportTool = tools.Tool{Name: "exportInvoices", Description: "exports the invoice table as CSV", ReadOnly: true,
		Parameters: json.RawMessage(`{"type":"object","properties":{"rows":{"type":"integer"}},"required":["rows"]}`)}
	readTool = tools.Tool{Name: "readContentObjects", Description: "reads a document in parts", ReadOnly: true,
		Parameters: json.RawMessage(`{"type":"object","properties":{"file":{"type":"string"},"offset":{"type":"integer"},"maxBytes":{"type":"integer"}},"required":["file"]}`)}
)

func (b bigTools) Tools() []tools.Tool {
	return append(slices.Clone(b.inner.Tools()), exportTool, readTool)
}

func (b bigTools) Lookup(name string) (tools.Tool, bool) {
	switch name {
	case exportTool.Name:
		return exportTool, true
	case readTool.Name:
		return readTool, true
	}
	return b.inner.Lookup(name)
}

func invoices(rows int) string {
	var s strings.Builder
	s.WriteString("invoice,customer,amount,currency\n")
	for i := 1; i < rows; i++ {
		fmt.Fprintf(&s, "INV-%07d,Customer %d AG,%d.%02d,CHF\n", i, i%977, i%10000, i%100)
	}
	return s.String()
}

func (b bigTools) Call(ctx context.Context, name string, args []byte, opts *wasm.CallOptions) wasm.Result {
	switch name {
	case exportTool.Name:
		var a struct{ Rows int }
		_ = json.Unmarshal(args, &a)
		return wasm.Result{OK: true, Text: invoices(a.Rows)}
	case readTool.Name:
		var a struct {
			File     string
			Offset   int
			MaxBytes int
		}
		_ = json.Unmarshal(args, &a)
		doc := b.keeper.get(a.File)
		if doc == nil {
			return wasm.Result{Error: &wasm.Error{Code: "not_found", Message: "no document " + a.File}}
		}
		end := min(len(doc), a.Offset+max(1000, a.MaxBytes))
		return wasm.Result{OK: true, Text: string(doc[min(a.Offset, len(doc)):end])}
	}
	return b.inner.Call(ctx, name, args, opts)
}

// TestToolResultOf10MB: a 10 MB tool result, against a model whose server
// enforces its 32,000-token window, is kept whole as a document; the model
// gets a bounded head with its shape and the reference, reads on with the
// document tool, and answers. No request passes the window (the server
// refused none) and the UI event carries a bounded preview with a link.
func TestToolResultOf10MB(t *testing.T) {
	const rows = 250_000 // some 10 MB
	e := newEnv(t, llm.ModelConfig{ContextWindow: 32000}, llmtest.WithContextWindow("scripted", 32000))
	refIn := regexp.MustCompile(`docItem:[0-9a-f-]{36}`)
	e.srv.SetDefault(llmtest.EndpointChat, llmtest.Decide(func(r llmtest.ChatRequest) llmtest.Step {
		last := r.Messages[len(r.Messages)-1]
		switch {
		case last.Role == "user":
			return llmtest.CallTools(llmtest.Call("exportInvoices", fmt.Sprintf(`{"rows":%d}`, rows)))
		case last.Role == "tool" && last.Name == "exportInvoices":
			ref := refIn.FindString(last.Content)
			return llmtest.CallTools(llmtest.Call("readContentObjects", fmt.Sprintf(`{"file":%q,"offset":9000000,"maxBytes":2000}`, ref)))
		default:
			return llmtest.Reply("Read: " + strings.SplitN(last.Content, "\n", 3)[1])
		}
	}))
	keeper := &memKeeper{}
	rec := &recorder{}
	res := agent.New(e.model, agent.Config{Results: keeper}, nil).Run(context.Background(),
		agent.Input{Prompt: "sum the invoices", Round: 1}, bigTools{inner: e.tools, keeper: keeper}, rec.sink)
	if res.Outcome != agent.Completed || !strings.HasPrefix(res.Answer, "Read: ") {
		t.Fatalf("result: %+v", res)
	}
	whole := invoices(rows)
	if len(whole) < 10<<20-1<<20 {
		t.Fatalf("the result is %d bytes, want some 10 MB", len(whole))
	}
	settled(e.srv)
	for i, r := range e.srv.Requests() {
		if r.Status != http.StatusOK {
			t.Errorf("request %d: status %d (the server refused it)", i, r.Status)
		}
		if n := len(r.Chat.Raw); n > 200_000 {
			t.Errorf("request %d is %d bytes", i, n)
		}
	}
	reqs := e.srv.ChatRequests()
	if len(reqs) != 3 {
		t.Fatalf("%d model requests, want 3", len(reqs))
	}
	var got string
	for _, m := range reqs[1].Messages {
		if m.Role == "tool" {
			got = m.Content
		}
	}
	ref := refIn.FindString(got)
	if ref == "" || string(keeper.get(ref)) != whole {
		t.Fatalf("the whole result is not kept under %q", ref)
	}
	for _, want := range []string{"too large for the model's context", "a table of 250000 rows", "4 columns",
		"invoice,customer,amount,currency\nINV-0000001", `readContentObjects {"file":"` + ref + `"`} {
		if !strings.Contains(got, want) {
			t.Errorf("the model's tool message does not say %q:\n%s", want, clip(got))
		}
	}
	if n := llm.CountTokens("scripted", got); n > 4000 {
		t.Errorf("the head the model got is %d tokens", n)
	}
	if keeper.mime[strings.TrimPrefix(ref, "docItem:")] != "text/csv" {
		t.Errorf("kept as %q", keeper.mime)
	}
	var ev workflows.ToolResultData
	for _, r := range rec.results() {
		if r.Tool == "exportInvoices" {
			ev = r
		}
	}
	if !ev.Fitted || ev.Document != ref || ev.FileID == "" || ev.Bytes != int64(len(whole)) || len(ev.Content) > 4200 {
		t.Errorf("toolResult event: fitted %v document %q file %q bytes %d content %d bytes", ev.Fitted, ev.Document, ev.FileID, ev.Bytes, len(ev.Content))
	}
}

func clip(s string) string {
	if len(s) > 1500 {
		return s[:1500] + "…"
	}
	return s
}

// TestContextErrorCompacted: the model's provider has a smaller window than
// configured (4,000 tokens, configured 32,000): a tool result that fits the
// configured window makes the next request too long. The provider's
// context_length_exceeded is not retried (three attempts are allowed; the
// server counts one refusal); the agent takes the window the provider
// named, fits the result to it (kept as a document) and calls once more,
// within the window, and the round is answered.
func TestContextErrorCompacted(t *testing.T) {
	srv := llmtest.New(t, llmtest.WithContextWindow("small", 4000))
	client, err := llm.New(llm.Config{
		Providers: []llm.ProviderConfig{{Name: "test", BaseURL: srv.URL(), Timeout: 10 * time.Second}},
		Models:    map[modeluse.Operation][]llm.ModelConfig{modeluse.OpAgent: {{Provider: "test", Model: "small", ContextWindow: 32000}}},
		Retry:     llm.RetryConfig{Attempts: 3, BaseDelay: time.Millisecond},
	}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	base := newEnv(t, llm.ModelConfig{})
	srv.SetDefault(llmtest.EndpointChat, llmtest.Decide(func(r llmtest.ChatRequest) llmtest.Step {
		last := r.Messages[len(r.Messages)-1]
		if last.Role == "user" {
			return llmtest.CallTools(llmtest.Call("exportInvoices", `{"rows":400}`))
		}
		return llmtest.Reply("The export has " + regexp.MustCompile(`\d+ rows`).FindString(last.Content))
	}))
	keeper := &memKeeper{}
	rec := &recorder{}
	res := agent.New(client, agent.Config{Results: keeper}, nil).Run(context.Background(),
		agent.Input{Prompt: "how many invoices?", Round: 1}, bigTools{inner: base.tools, keeper: keeper}, rec.sink)
	if res.Outcome != agent.Completed || res.Answer != "The export has 400 rows" {
		t.Fatalf("result: %+v", res)
	}
	statuses := settled(srv)
	if want := []int{200, 400, 200}; !slices.Equal(statuses, want) {
		t.Errorf("the server answered %v, want %v (one refusal, not retried, then one call within the window)", statuses, want)
	}
	if len(keeper.docs) != 1 {
		t.Errorf("%d documents kept, want the export", len(keeper.docs))
	}
}

// TestFallbackModelShown: the first model of the chain answers 429 and
// then 500; the second answers, and the events say which model did.
func TestFallbackModelShown(t *testing.T) {
	srv := llmtest.New(t)
	client, err := llm.New(llm.Config{
		Providers: []llm.ProviderConfig{{Name: "p1", BaseURL: srv.URL(), Timeout: 10 * time.Second}, {Name: "p2", BaseURL: srv.URL(), Timeout: 10 * time.Second}},
		Models: map[modeluse.Operation][]llm.ModelConfig{modeluse.OpAgent: {{Provider: "p1", Model: "primary", InputCHFPer1M: 2, OutputCHFPer1M: 8},
			{Provider: "p2", Model: "backup", InputCHFPer1M: 1, OutputCHFPer1M: 4}}},
		Retry: llm.RetryConfig{Attempts: 2, BaseDelay: time.Millisecond, MaxDelay: 2 * time.Millisecond},
	}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	srv.Script(llmtest.RateLimited(0), llmtest.Fail(500, "The server had an error"), llmtest.Reply("from the backup"))
	base := newEnv(t, llm.ModelConfig{})
	rec := &recorder{}
	res := agent.New(client, agent.Config{}, nil).Run(context.Background(), agent.Input{Prompt: "hi", Round: 1}, base.tools, rec.sink)
	if res.Outcome != agent.Completed || res.Answer != "from the backup" || res.Model != "backup" || res.Cost <= 0 {
		t.Fatalf("result: %+v", res)
	}
	if got := models(srv.ChatRequests()); !slices.Equal(got, []string{"primary", "primary", "backup"}) {
		t.Errorf("requests went to %v", got)
	}
	var summary workflows.AgentSummaryData
	var progress workflows.AgentProgressData
	for _, e := range rec.events {
		switch d := e.Data.(type) {
		case workflows.AgentSummaryData:
			summary = d
		case workflows.AgentProgressData:
			progress = d
		}
	}
	if summary.Model != "backup" || progress.Model != "backup" {
		t.Errorf("events name %q and %q, want backup", progress.Model, summary.Model)
	}
}

func models(reqs []llmtest.ChatRequest) []string {
	var out []string
	for _, r := range reqs {
		out = append(out, r.Model)
	}
	return out
}

// settled is the statuses of the server's requests once every handler
// has finished (a streamed reply's status is set after its last chunk,
// which the client may have read already).
func settled(srv *llmtest.Server) []int {
	deadline := time.Now().Add(2 * time.Second)
	for {
		var statuses []int
		done := true
		for _, r := range srv.Requests() {
			statuses = append(statuses, r.Status)
			done = done && r.Status != 0
		}
		if done || time.Now().After(deadline) {
			return statuses
		}
		time.Sleep(5 * time.Millisecond)
	}
}
