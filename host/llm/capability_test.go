package llm_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"image/png"
	"strings"
	"testing"
	"time"

	"github.com/agenthost/agenthost/host/llm"
	"github.com/agenthost/agenthost/host/llm/llmtest"
	"github.com/agenthost/agenthost/host/llm/modeluse"
	"github.com/agenthost/agenthost/host/money"
	"github.com/agenthost/agenthost/host/store"
	"github.com/agenthost/agenthost/host/tenancy"
	"github.com/agenthost/agenthost/host/toolcall"
	"github.com/agenthost/agenthost/host/wasm"
	"github.com/agenthost/agenthost/host/workflows"
	"github.com/agenthost/agenthost/host/worldtest"
)

// capEnv: a migrated store metering into usage_records, a client on a
// scripted server (a 1,024-token summary model and an image model, both
// priced), a member of a workspace and a running workflow of theirs.
type capEnv struct {
	db       *store.DB
	srv      *llmtest.Server
	wf       *workflows.Service
	cap      *llm.Capabilities
	p        tenancy.Principal
	ws       string
	workflow string
}

func newCapEnv(t *testing.T) capEnv {
	t.Helper()
	w := worldtest.New(t, worldtest.Options{Workflow: "w", Model: &worldtest.Model{
		Models: map[modeluse.Operation][]llm.ModelConfig{
			modeluse.OpSummary: {{Model: "small-model", ContextWindow: 1024, InputCHFPer1M: 1000, OutputCHFPer1M: 2000}},
			modeluse.OpImage:   {{Model: "dall-e-3", CHFPerImage: 0.04}},
		},
		Retry:   fastRetry,
		Timeout: 10 * time.Second,
	}})
	return capEnv{db: w.DB, srv: w.Server, wf: w.Workflows, cap: &llm.Capabilities{Client: w.Client, Workflows: w.Workflows}, p: w.P, ws: w.Workspace, workflow: w.Workflow}
}

func (e capEnv) ctx() context.Context {
	return toolcall.With(context.Background(), toolcall.Caller{Principal: e.p, WorkspaceID: e.ws, WorkflowID: e.workflow})
}

// purposes lists the usage records' purposes, oldest first.
func (e capEnv) purposes(t *testing.T) []string {
	t.Helper()
	rows, err := e.db.SQL().Query(`SELECT purpose FROM usage_records WHERE workflow_id = ? ORDER BY created_at`, e.workflow)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		out = append(out, s)
	}
	return out
}

func code(err error) string {
	var ce *wasm.CapabilityError
	if errors.As(err, &ce) {
		return ce.Code
	}
	return ""
}

func TestModelCapabilityRefusals(t *testing.T) {
	e := newCapEnv(t)
	noAgent, err := llm.New(llm.Config{Providers: []llm.ProviderConfig{{Name: "test", BaseURL: e.srv.URL()}}}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name      string
		cap       *llm.Capabilities
		ctx       context.Context
		fn, req   string
		code      string
		inMessage string
	}{
		{"no caller", e.cap, context.Background(), "complete", `{"messages":[{"role":"user","content":"hi"}]}`, "no_caller", ""},
		{"no caller, images", e.cap, context.Background(), "generate", `{"prompt":"a cat"}`, "no_caller", ""},
		{"no client", &llm.Capabilities{}, e.ctx(), "info", `{}`, "no_model", "AGENTHOST_MODEL_SUMMARY"},
		{"no chain", &llm.Capabilities{Client: noAgent}, e.ctx(), "complete", `{"messages":[{"role":"user","content":"hi"}]}`, "no_model", "no model configured"},
		{"no image chain", &llm.Capabilities{Client: noAgent}, e.ctx(), "generate", `{"prompt":"a cat"}`, "no_model", "AGENTHOST_MODEL_IMAGE"},
		{"no messages", e.cap, e.ctx(), "complete", `{"messages":[]}`, "invalid_request", ""},
		{"a tool role", e.cap, e.ctx(), "complete", `{"messages":[{"role":"tool","content":"x"}]}`, "invalid_request", "role"},
		{"too many output tokens", e.cap, e.ctx(), "complete", `{"messages":[{"role":"user","content":"hi"}],"maxTokens":100000}`, "invalid_request", "maxTokens"},
		{"over the context", e.cap, e.ctx(), "complete", `{"messages":[{"role":"user","content":"` + strings.Repeat("word ", 2000) + `"}]}`, "context_exceeded", "1024"},
		{"count without text", e.cap, e.ctx(), "count", `{}`, "invalid_request", ""},
		{"image without prompt", e.cap, e.ctx(), "generate", `{"prompt":" "}`, "invalid_request", ""},
		{"image of a bad size", e.cap, e.ctx(), "generate", `{"prompt":"a cat","size":"huge"}`, "invalid_request", "size"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := llm.CapCall(tc.cap, tc.ctx, tc.fn, "summarizeContent", tc.req)
			if code(err) != tc.code || !strings.Contains(err.Error(), tc.inMessage) {
				t.Fatalf("err = %v, want code %s mentioning %q", err, tc.code, tc.inMessage)
			}
		})
	}
	// Refused requests reach no provider and cost nothing.
	if n := len(e.srv.Requests()); n != 0 {
		t.Fatalf("%d requests reached the provider", n)
	}
	if p := e.purposes(t); len(p) != 0 {
		t.Fatalf("usage recorded for refused calls: %v", p)
	}
}

func TestModelCapabilityInfoAndCount(t *testing.T) {
	e := newCapEnv(t)
	out, err := llm.CapCall(e.cap, e.ctx(), "info", "summarizeContent", `{}`)
	if err != nil {
		t.Fatal(err)
	}
	if got := out.(llm.ModelInfoResult); got != (llm.ModelInfoResult{Model: "small-model", ContextTokens: 1024, MaxOutputTokens: 256}) {
		t.Fatalf("info %+v", got)
	}
	out, err = llm.CapCall(e.cap, e.ctx(), "count", "summarizeContent", `{"text":"one two three four"}`)
	if err != nil {
		t.Fatal(err)
	}
	if n := out.(struct {
		Tokens int `json:"tokens"`
	}).Tokens; n != llm.CountTokens("small-model", "one two three four") || n == 0 {
		t.Fatalf("count %d", n)
	}
}

// TestModelCapabilityBilling: a completion is billed to the caller with the
// tool's purpose, and its cost counts in the workflow's statistics, which
// the workflow's budget then refuses further calls on.
func TestModelCapabilityBilling(t *testing.T) {
	e := newCapEnv(t)
	e.srv.Script(llmtest.Reply("The summary.").WithUsage(400, 100))
	out, err := llm.CapCall(e.cap, e.ctx(), "complete", "summarizeContent", `{"messages":[{"role":"system","content":"Summarise."},{"role":"user","content":"Some text."}],"maxTokens":200,"purpose":"map"}`)
	if err != nil {
		t.Fatal(err)
	}
	res := out.(llm.CompleteResult)
	wantCost := (400*1000.0 + 100*2000.0) / 1e6
	if res.Content != "The summary." || res.PromptTokens != 400 || res.CompletionTokens != 100 || res.CostCHF != money.FromCHF(wantCost) {
		t.Fatalf("complete %+v, want cost %g", res, wantCost)
	}
	reqs := e.srv.ChatRequests()
	if len(reqs) != 1 || reqs[0].Model != "small-model" || reqs[0].MaxTokens+reqs[0].MaxCompletionTokens != 200 {
		t.Fatalf("requests %+v", reqs)
	}
	if p := e.purposes(t); len(p) != 1 || p[0] != "tool:summarizeContent/map" {
		t.Fatalf("usage purposes %v", p)
	}
	tot, err := e.db.UsageTotals(context.Background(), e.p, e.workflow)
	if err != nil {
		t.Fatal(err)
	}
	if tot.Calls != 1 || tot.Cost != money.FromCHF(wantCost) {
		t.Fatalf("usage totals %+v", tot)
	}
	w, err := e.wf.Get(context.Background(), e.p, e.workflow)
	if err != nil {
		t.Fatal(err)
	}
	if w.Stats.CostCHF != money.FromCHF(wantCost) || w.Stats.TokensUsed != 500 {
		t.Fatalf("workflow statistics %+v", w.Stats)
	}

	// The workflow has spent 0.6 CHF: a budget of 0.5 refuses the next call
	// before it reaches the provider.
	e.cap.MaxWorkflowCost = money.FromCHF(0.5)
	_, err = llm.CapCall(e.cap, e.ctx(), "complete", "summarizeContent", `{"messages":[{"role":"user","content":"more"}]}`)
	if code(err) != "budget_exceeded" {
		t.Fatalf("over budget: %v", err)
	}
	if n := len(e.srv.ChatRequests()); n != 1 {
		t.Fatalf("%d chat requests, want the first only", n)
	}
}

func TestImagesCapability(t *testing.T) {
	e := newCapEnv(t)
	out, err := llm.CapCall(e.cap, e.ctx(), "generate", "generateImage", `{"prompt":"a red bicycle","size":"256x128"}`)
	if err != nil {
		t.Fatal(err)
	}
	imgs := out.(struct {
		Images  []llm.GeneratedImage `json:"images"`
		CostCHF money.Amount         `json:"costCHF"`
		Model   string               `json:"model"`
	})
	if len(imgs.Images) != 1 || imgs.Images[0].MIMEType != "image/png" || imgs.CostCHF != 4*money.Rappen {
		t.Fatalf("images %+v", imgs)
	}
	raw, _ := base64.StdEncoding.DecodeString(imgs.Images[0].Data)
	img, err := png.Decode(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	if b := img.Bounds(); b.Dx() != 256 || b.Dy() != 128 {
		t.Fatalf("image %v, want 256x128", b)
	}
	reqs := e.srv.Requests()
	if len(reqs) != 1 || reqs[0].Image == nil || reqs[0].Image.ResponseFormat != "b64_json" || reqs[0].Image.Prompt != "a red bicycle" {
		t.Fatalf("image request %+v", reqs)
	}
	if p := e.purposes(t); len(p) != 1 || p[0] != "tool:generateImage" {
		t.Fatalf("usage purposes %v", p)
	}
	// A provider error reaches the plugin with its kind.
	e.srv.ScriptEndpoint(llmtest.EndpointImages, llmtest.Fail(400, "Your request was rejected by the safety system."))
	if _, err := llm.CapCall(e.cap, e.ctx(), "generate", "generateImage", `{"prompt":"something"}`); err == nil || !strings.Contains(err.Error(), "safety") {
		t.Fatalf("provider refusal: %v", err)
	}
}

// TestModelCapabilityRunCost: inside an agent run the budget is judged by
// the run's tally (which holds the loop's own calls, not yet in the
// workflow's statistics), and a call's cost is added to both the tally and
// the workflow, once each.
func TestModelCapabilityRunCost(t *testing.T) {
	e := newCapEnv(t)
	e.cap.MaxWorkflowCost = money.FromCHF(0.5)
	req := `{"messages":[{"role":"user","content":"Some text."}],"maxTokens":100}`
	step := llmtest.Reply("ok").WithUsage(100, 50)
	e.srv.Script(step, step, step)
	wantCost := (100*1000.0 + 50*2000.0) / 1e6 // 0.2 CHF

	// The workflow has spent nothing; the run's loop has spent 0.25 CHF.
	tally := llm.NewRunCost(25 * money.Rappen)
	ctx := llm.WithRunCost(e.ctx(), tally)
	if _, err := llm.CapCall(e.cap, ctx, "complete", "summarizeContent", req); err != nil {
		t.Fatal(err)
	}
	if got := tally.Spent(); got != 25*money.Rappen+money.FromCHF(wantCost) {
		t.Fatalf("tally %s, want %g", got, 0.25+wantCost)
	}
	w, err := e.wf.Get(context.Background(), e.p, e.workflow)
	if err != nil || w.Stats.CostCHF != money.FromCHF(wantCost) {
		t.Fatalf("workflow cost %s (%v), want %g", w.Stats.CostCHF, err, wantCost)
	}
	// 0.45 < 0.5: one more call is allowed, and then the tally (0.65) is
	// over budget, although the workflow's statistics (0.4) are not.
	if _, err := llm.CapCall(e.cap, ctx, "complete", "summarizeContent", req); err != nil {
		t.Fatal(err)
	}
	_, err = llm.CapCall(e.cap, ctx, "complete", "summarizeContent", req)
	if code(err) != "budget_exceeded" || !strings.Contains(err.Error(), "CHF 0.6500") {
		t.Fatalf("over the run's budget: %v", err)
	}
	if n := len(e.srv.ChatRequests()); n != 2 {
		t.Fatalf("%d chat requests, want 2", n)
	}
	// Outside a run the workflow's recorded cost (0.4) is the figure.
	if _, err := llm.CapCall(e.cap, e.ctx(), "complete", "summarizeContent", req); err != nil {
		t.Fatalf("outside the run: %v", err)
	}
}
