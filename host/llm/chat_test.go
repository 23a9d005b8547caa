package llm_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agenthost/agenthost/host/llm"
	"github.com/agenthost/agenthost/host/llm/llmtest"
	"github.com/agenthost/agenthost/host/llm/modeluse"
	"github.com/agenthost/agenthost/host/money"
)

var tools = []llm.ToolDef{
	{Name: "read_file", Description: "Reads a file.", Parameters: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`)},
	{Name: "search", Description: "Searches the knowledge store.", Parameters: json.RawMessage(`{"type":"object","properties":{"query":{"type":"string"},"limit":{"type":"integer"}}}`)},
	{Name: "now", Description: "The time."}, // no parameters
}

func TestChat(t *testing.T) {
	twoCalls := llmtest.CallTools(
		llmtest.Call("read_file", `{"path":"reports/2025/q3.pdf"}`),
		llmtest.Call("search", `{"query":"Zürich tax rates","limit":5}`),
	)
	tests := []struct {
		name       string
		step       llmtest.Step
		stream     bool
		tools      []llm.ToolDef
		wantText   string
		wantCalls  []llm.ToolCall // IDs not compared
		wantFinish string
	}{
		{name: "text", step: llmtest.Reply("Grüezi! How can I help with the Q3 report today?"),
			wantText: "Grüezi! How can I help with the Q3 report today?", wantFinish: "stop"},
		{name: "text streamed", stream: true, step: llmtest.Reply("Grüezi! How can I help with the Q3 report today?"),
			wantText: "Grüezi! How can I help with the Q3 report today?", wantFinish: "stop"},
		{name: "tool calls", tools: tools, step: twoCalls, wantFinish: "tool_calls",
			wantCalls: []llm.ToolCall{{Name: "read_file", Arguments: `{"path":"reports/2025/q3.pdf"}`}, {Name: "search", Arguments: `{"query":"Zürich tax rates","limit":5}`}}},
		{name: "tool calls streamed", stream: true, tools: tools, step: twoCalls, wantFinish: "tool_calls",
			wantCalls: []llm.ToolCall{{Name: "read_file", Arguments: `{"path":"reports/2025/q3.pdf"}`}, {Name: "search", Arguments: `{"query":"Zürich tax rates","limit":5}`}}},
		{name: "text and a tool call streamed", stream: true, tools: tools, wantFinish: "tool_calls",
			step:     llmtest.Step{Content: "Let me look.", ToolCalls: []llmtest.ToolCall{llmtest.Call("now", `{}`)}},
			wantText: "Let me look.", wantCalls: []llm.ToolCall{{Name: "now", Arguments: `{}`}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := newSetup(t, 5*time.Second, agentChain())
			s.srv.Script(tc.step)
			var deltas []llm.Delta
			var onDelta func(llm.Delta)
			if tc.stream {
				onDelta = func(d llm.Delta) { deltas = append(deltas, d) }
			}
			resp, err := s.client.Chat(context.Background(), llm.ChatRequest{Messages: userMsg("What is in the Q3 report?"), Tools: tc.tools}, onDelta)
			if err != nil {
				t.Fatal(err)
			}
			if resp.Message.Role != llm.RoleAssistant || resp.Message.Content != tc.wantText || resp.FinishReason != tc.wantFinish {
				t.Fatalf("got %+v, finish %q", resp.Message, resp.FinishReason)
			}
			if len(resp.Message.ToolCalls) != len(tc.wantCalls) {
				t.Fatalf("tool calls %+v, want %+v", resp.Message.ToolCalls, tc.wantCalls)
			}
			for i, want := range tc.wantCalls {
				got := resp.Message.ToolCalls[i]
				if got.Name != want.Name || got.Arguments != want.Arguments || got.ID == "" {
					t.Errorf("call %d = %+v, want %+v with an ID", i, got, want)
				}
			}
			req := s.srv.ChatRequests()[0]
			if req.Stream != tc.stream || req.IncludeUsage != tc.stream || req.Model != "m-a" {
				t.Errorf("request stream=%v includeUsage=%v model=%s", req.Stream, req.IncludeUsage, req.Model)
			}
			if len(req.Tools) != len(tc.tools) {
				t.Fatalf("request offered %d tools, want %d", len(req.Tools), len(tc.tools))
			}
			for i, td := range tc.tools {
				want := string(td.Parameters)
				if want == "" {
					want = `{"type":"object","properties":{}}`
				}
				if req.Tools[i].Name != td.Name || req.Tools[i].Description != td.Description || string(req.Tools[i].Parameters) != want {
					t.Errorf("tool %d sent as %+v", i, req.Tools[i])
				}
			}
			if !tc.stream {
				return
			}
			// The deltas rebuild exactly the response, arrive in several
			// pieces, and each tool call's arguments in several fragments.
			var text strings.Builder
			args := map[int]*strings.Builder{}
			names := map[int]string{}
			ids := map[int]string{}
			textDeltas, fragments := 0, map[int]int{}
			for _, d := range deltas {
				if !d.IsToolCall() {
					text.WriteString(d.Content)
					textDeltas++
					continue
				}
				if d.Content != "" {
					t.Errorf("delta mixes text and tool call: %+v", d)
				}
				if args[d.ToolCallIndex] == nil {
					args[d.ToolCallIndex] = &strings.Builder{}
				}
				args[d.ToolCallIndex].WriteString(d.ToolCallArguments)
				names[d.ToolCallIndex] += d.ToolCallName
				ids[d.ToolCallIndex] += d.ToolCallID
				if d.ToolCallArguments != "" {
					fragments[d.ToolCallIndex]++
				}
			}
			if text.String() != tc.wantText || (tc.wantText != "" && textDeltas < 2) {
				t.Errorf("text deltas %q in %d pieces", text.String(), textDeltas)
			}
			for i, call := range resp.Message.ToolCalls {
				if args[i] == nil || args[i].String() != call.Arguments || names[i] != call.Name || ids[i] != call.ID {
					t.Errorf("deltas of call %d do not rebuild %+v", i, call)
				}
				if len(call.Arguments) > 6 && fragments[i] < 2 {
					t.Errorf("call %d arguments came in %d fragments; the server splits them", i, fragments[i])
				}
			}
		})
	}
}

// A conversation with a tool round trip reaches the provider intact.
func TestChatSendsToolRoundTrip(t *testing.T) {
	s := newSetup(t, 5*time.Second, agentChain())
	s.srv.Script(llmtest.Reply("The report says revenue grew."))
	zero := float32(0)
	msgs := []llm.Message{
		{Role: llm.RoleSystem, Content: "You are careful."},
		{Role: llm.RoleUser, Content: "Summarise q3.pdf", Name: "ada"},
		{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: "call_1", Name: "read_file", Arguments: `{"path":"q3.pdf"}`}}},
		{Role: llm.RoleTool, ToolCallID: "call_1", Content: "Revenue grew 4%."},
	}
	if _, err := s.client.Chat(context.Background(), llm.ChatRequest{Messages: msgs, Tools: tools, MaxTokens: 300, Temperature: &zero}, nil); err != nil {
		t.Fatal(err)
	}
	req := s.srv.ChatRequests()[0]
	if len(req.Messages) != 4 {
		t.Fatalf("sent %d messages", len(req.Messages))
	}
	if m := req.Messages[1]; m.Name != "ada" || m.Content != "Summarise q3.pdf" {
		t.Errorf("user message sent as %+v", m)
	}
	if m := req.Messages[2]; m.Role != "assistant" || len(m.ToolCalls) != 1 || m.ToolCalls[0] != (llmtest.ToolCall{ID: "call_1", Name: "read_file", Arguments: `{"path":"q3.pdf"}`}) {
		t.Errorf("assistant message sent as %+v", m)
	}
	if m := req.Messages[3]; m.Role != "tool" || m.ToolCallID != "call_1" || m.Content != "Revenue grew 4%." {
		t.Errorf("tool message sent as %+v", m)
	}
	if req.MaxTokens != 300 {
		t.Errorf("max_tokens = %d", req.MaxTokens)
	}
	// A temperature of 0 must reach the provider (go-openai would drop it).
	if req.Temperature == nil || *req.Temperature > 1e-30 {
		t.Errorf("temperature = %v, want ~0", req.Temperature)
	}
}

func TestChatUsageAndCost(t *testing.T) {
	tests := []struct {
		name          string
		stream        bool
		step          llmtest.Step
		opts          []llmtest.Option
		wantPrompt    int // 0: any positive
		wantComplete  int
		wantEstimated bool
	}{
		{name: "reported", step: llmtest.Reply("Forty-two.").WithUsage(1200, 300), wantPrompt: 1200, wantComplete: 300},
		{name: "reported in the stream's usage chunk", stream: true, step: llmtest.Reply("Forty-two.").WithUsage(1200, 300), wantPrompt: 1200, wantComplete: 300},
		{name: "not reported: counted", step: llmtest.Reply("Forty-two."), opts: []llmtest.Option{llmtest.WithoutUsage()}, wantComplete: 4, wantEstimated: true},
		{name: "not reported in a stream: counted", stream: true, step: llmtest.Reply("Forty-two."), opts: []llmtest.Option{llmtest.WithoutUsage()}, wantComplete: 4, wantEstimated: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := newSetup(t, 5*time.Second, agentChain(), tc.opts...)
			s.srv.Script(tc.step)
			attr := llm.Attribution{TenantID: "t-1", WorkspaceID: "ws-2", UserID: "u-3", WorkflowID: "wf-4", Purpose: "agent.round"}
			ctx := llm.WithAttribution(context.Background(), attr)
			var onDelta func(llm.Delta)
			if tc.stream {
				onDelta = func(llm.Delta) {}
			}
			resp, err := s.client.Chat(ctx, llm.ChatRequest{Messages: userMsg("What is the answer?")}, onDelta)
			if err != nil {
				t.Fatal(err)
			}
			u := resp.Usage
			if u.Operation != modeluse.OpAgent || u.Provider != "a" || u.Model != "m-a" || u.Attempts != 1 || u.Duration <= 0 {
				t.Errorf("usage %+v", u)
			}
			if u.Estimated != tc.wantEstimated || u.CompletionTokens != tc.wantComplete ||
				(tc.wantPrompt != 0 && u.PromptTokens != tc.wantPrompt) || u.PromptTokens <= 0 {
				t.Errorf("usage %+v, want prompt %d completion %d estimated %v", u, tc.wantPrompt, tc.wantComplete, tc.wantEstimated)
			}
			// 2 and 8 CHF per million: 2000 and 8000 nano-francs a token.
			if want := money.Amount(u.PromptTokens*2000 + u.CompletionTokens*8000); u.Cost != want {
				t.Errorf("cost %d nCHF, want %d", u.Cost, want)
			}
			got := s.meter.records()
			if len(got) != 1 || got[0].usage != u || got[0].attr != attr {
				t.Fatalf("meter got %+v, want one record of %+v for %+v", got, u, attr)
			}
		})
	}
}

func TestChatFallback(t *testing.T) {
	// backoff is fastRetry's first wait: 10 ms jittered over its upper half.
	backoff := [2]time.Duration{5 * time.Millisecond, 10 * time.Millisecond}
	exactly := func(d time.Duration) [2]time.Duration { return [2]time.Duration{d, d} }
	tests := []struct {
		name       string
		timeoutA   time.Duration
		script     []llmtest.Step
		wantModels []string
		wantWaits  [][2]time.Duration // each retry's wait, within [lo, hi]
		minElapsed time.Duration      // a lower bound holds on any machine
		maxElapsed time.Duration      // only where the wrong behaviour takes far longer
	}{
		{name: "429 with Retry-After: waits, then the second model",
			script:     []llmtest.Step{llmtest.RateLimited(time.Second), llmtest.RateLimited(time.Second), llmtest.Reply("from b")},
			wantModels: []string{"m-a", "m-a", "m-b"}, wantWaits: [][2]time.Duration{exactly(time.Second)}, minElapsed: time.Second},
		{name: "429 with retry-after-ms",
			script:     []llmtest.Step{llmtest.RateLimited(300 * time.Millisecond), llmtest.RateLimited(300 * time.Millisecond), llmtest.Reply("from b")},
			wantModels: []string{"m-a", "m-a", "m-b"}, wantWaits: [][2]time.Duration{exactly(300 * time.Millisecond)}, minElapsed: 300 * time.Millisecond},
		{name: "500 with backoff, then the second model",
			script:     []llmtest.Step{llmtest.Fail(500, "The server had an error"), llmtest.Fail(502, "Bad gateway"), llmtest.Reply("from b")},
			wantModels: []string{"m-a", "m-a", "m-b"}, wantWaits: [][2]time.Duration{backoff}, minElapsed: 5 * time.Millisecond},
		{name: "time-out, then the second model", timeoutA: 150 * time.Millisecond,
			script:     []llmtest.Step{llmtest.Reply("slow").WithDelay(time.Minute), llmtest.Reply("slow").WithDelay(time.Minute), llmtest.Reply("from b")},
			wantModels: []string{"m-a", "m-a", "m-b"}, wantWaits: [][2]time.Duration{backoff}, minElapsed: 300 * time.Millisecond,
			maxElapsed: 30 * time.Second}, // not waiting for the minute-late answers
		{name: "503 once, then the same model answers",
			script:     []llmtest.Step{llmtest.Fail(503, "overloaded"), llmtest.Reply("from a")},
			wantModels: []string{"m-a", "m-a"}, wantWaits: [][2]time.Duration{backoff}},
		{name: "Retry-After beyond the cap: next model at once",
			script:     []llmtest.Step{llmtest.RateLimited(time.Minute), llmtest.Reply("from b")},
			wantModels: []string{"m-a", "m-b"}, maxElapsed: 30 * time.Second},
	}
	for _, tc := range tests {
		for _, stream := range []bool{false, true} {
			name := tc.name
			if stream {
				name += " (streamed)"
			}
			t.Run(name, func(t *testing.T) {
				timeout := tc.timeoutA
				if timeout == 0 {
					timeout = 5 * time.Second
				}
				s := newSetup(t, timeout, agentChain())
				s.srv.Script(tc.script...)
				var deltas []string
				var onDelta func(llm.Delta)
				if stream {
					onDelta = func(d llm.Delta) { deltas = append(deltas, d.Content) }
				}
				start := time.Now()
				resp, err := s.client.Chat(context.Background(), llm.ChatRequest{Messages: userMsg("hi")}, onDelta)
				elapsed := time.Since(start)
				if err != nil {
					t.Fatal(err)
				}
				if got := models(s.srv.ChatRequests()); !slices.Equal(got, tc.wantModels) {
					t.Errorf("requests went to %v, want %v", got, tc.wantModels)
				}
				waits := s.waits.list()
				if len(waits) != len(tc.wantWaits) {
					t.Errorf("waited %v before retries, want %v", waits, tc.wantWaits)
				}
				for i, w := range waits {
					if i < len(tc.wantWaits) && (w < tc.wantWaits[i][0] || w > tc.wantWaits[i][1]) {
						t.Errorf("retry %d waited %v, want %v..%v", i+1, w, tc.wantWaits[i][0], tc.wantWaits[i][1])
					}
				}
				if elapsed < tc.minElapsed || (tc.maxElapsed > 0 && elapsed > tc.maxElapsed) {
					t.Errorf("took %v, want at least %v (and under %v when set)", elapsed, tc.minElapsed, tc.maxElapsed)
				}
				wantModel := tc.wantModels[len(tc.wantModels)-1]
				if resp.Message.Content != "from "+wantModel[2:] || resp.Usage.Model != wantModel || resp.Usage.Attempts != len(tc.wantModels) {
					t.Errorf("response %q, usage %+v", resp.Message.Content, resp.Usage)
				}
				if stream && strings.Join(deltas, "") != resp.Message.Content {
					t.Errorf("deltas %q, want only the answer's", deltas)
				}
				if recs := s.meter.records(); len(recs) != 1 || recs[0].usage.Model != wantModel {
					t.Errorf("meter got %+v, want one record for %s", recs, wantModel)
				}
			})
		}
	}
}

func TestChatErrors(t *testing.T) {
	tests := []struct {
		name       string
		chains     map[modeluse.Operation][]llm.ModelConfig
		opts       []llmtest.Option
		script     []llmtest.Step
		tools      []llm.ToolDef
		wantModels []string
		wantStatus int
		wantIs     error
		wantText   []string
	}{
		{name: "400 is not retried and says what the provider said", chains: agentChain(),
			script:     []llmtest.Step{llmtest.Fail(400, "Invalid schema for function 'read_file': 'object' is not valid under any of the given schemas.")},
			wantModels: []string{"m-a"}, wantStatus: 400,
			wantText: []string{"HTTP 400", "invalid_request_error", "Invalid schema for function 'read_file'", `"m-a"`}},
		{name: "401 is not retried", chains: agentChain(),
			script:     []llmtest.Step{llmtest.Fail(401, "Incorrect API key provided.")},
			wantModels: []string{"m-a"}, wantStatus: 401, wantText: []string{"invalid_api_key"}},
		{name: "every model fails", chains: agentChain(),
			script:     []llmtest.Step{llmtest.Fail(500, "a1"), llmtest.Fail(500, "a2"), llmtest.Fail(500, "b1"), llmtest.Fail(503, "b2")},
			wantModels: []string{"m-a", "m-a", "m-b", "m-b"}, wantStatus: 503, wantIs: llm.ErrUnavailable,
			wantText: []string{"a/m-a ×2", "b/m-b ×2", "b2"}},
		{name: "a model without function calling refuses tools (server side)", tools: tools,
			chains:     map[modeluse.Operation][]llm.ModelConfig{modeluse.OpAgent: {{Provider: "a", Model: "plain"}}},
			opts:       []llmtest.Option{llmtest.WithNoFunctionCalling("plain")},
			wantModels: []string{"plain"}, wantStatus: 400, wantText: []string{"does not support tools", "param tools"}},
		{name: "models flagged without function calling are skipped for tools", tools: tools,
			chains: map[modeluse.Operation][]llm.ModelConfig{modeluse.OpAgent: {{Provider: "a", Model: "plain", NoFunctionCalling: true}}},
			wantIs: llm.ErrNoFunctionCalling, wantText: []string{"a/plain", "text protocol"}},
		{name: "no model configured", chains: nil,
			wantIs: llm.ErrNotConfigured, wantText: []string{"AGENTHOST_MODEL_AGENT", "docs/configuration.md"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := newSetup(t, 5*time.Second, tc.chains, tc.opts...)
			s.srv.Script(tc.script...)
			_, err := s.client.Chat(context.Background(), llm.ChatRequest{Messages: userMsg("hi"), Tools: tc.tools}, nil)
			if err == nil {
				t.Fatal("no error")
			}
			if got := models(s.srv.ChatRequests()); !slices.Equal(got, tc.wantModels) {
				t.Errorf("requests went to %v, want %v", got, tc.wantModels)
			}
			if tc.wantIs != nil && !errors.Is(err, tc.wantIs) {
				t.Errorf("error %v is not %v", err, tc.wantIs)
			}
			var pe *llm.ProviderError
			if tc.wantStatus != 0 && (!errors.As(err, &pe) || pe.StatusCode != tc.wantStatus) {
				t.Errorf("error %v: want a ProviderError with status %d", err, tc.wantStatus)
			}
			for _, want := range tc.wantText {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not say %q", err, want)
				}
			}
			if n := len(s.meter.records()); n != 0 {
				t.Errorf("meter got %d records for a failed call", n)
			}
		})
	}
}

// A model flagged without function calling is skipped for a request with
// tools, and used for one without.
func TestChatSkipsModelsWithoutFunctionCalling(t *testing.T) {
	chains := map[modeluse.Operation][]llm.ModelConfig{modeluse.OpAgent: {
		{Provider: "a", Model: "plain", NoFunctionCalling: true},
		{Provider: "b", Model: "fc"},
	}}
	s := newSetup(t, 5*time.Second, chains, llmtest.WithNoFunctionCalling("plain"))
	s.srv.Script(llmtest.CallTools(llmtest.Call("now", "{}")), llmtest.Reply("text protocol answer"))
	if _, err := s.client.Chat(context.Background(), llm.ChatRequest{Messages: userMsg("hi"), Tools: tools}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := s.client.Chat(context.Background(), llm.ChatRequest{Messages: userMsg("hi")}, nil); err != nil {
		t.Fatal(err)
	}
	if got := models(s.srv.ChatRequests()); !slices.Equal(got, []string{"fc", "plain"}) {
		t.Errorf("requests went to %v", got)
	}
	if info, _ := s.client.Model(modeluse.OpAgent); info.FunctionCalling || info.Name != "plain" {
		t.Errorf("Model(agent) = %+v", info)
	}
}

// Once deltas reached the caller, a broken stream is not restarted.
func TestChatStreamInterrupted(t *testing.T) {
	tests := []struct {
		name        string
		cutAfter    int // chunks: 1 is the role chunk, then 6 characters each
		wantErr     bool
		wantDeltas  string
		wantModels  []string
		wantPending int
	}{
		{name: "cut before any delta: retried", cutAfter: 1, wantDeltas: "second answer", wantModels: []string{"m-a", "m-a"}},
		{name: "cut after deltas: returned, not retried", cutAfter: 3, wantErr: true, wantDeltas: "abcdefghijkl", wantModels: []string{"m-a"}, wantPending: 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := newSetup(t, 5*time.Second, agentChain())
			s.srv.Script(llmtest.Reply("abcdefghijklmnopqrstuvwxyz").WithCutAfter(tc.cutAfter), llmtest.Reply("second answer"))
			var got strings.Builder
			resp, err := s.client.Chat(context.Background(), llm.ChatRequest{Messages: userMsg("alphabet")}, func(d llm.Delta) { got.WriteString(d.Content) })
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v", err)
			}
			if tc.wantErr && !errors.Is(err, llm.ErrStreamInterrupted) {
				t.Errorf("error %v is not ErrStreamInterrupted", err)
			}
			if got.String() != tc.wantDeltas || resp.Message.Content != tc.wantDeltas {
				t.Errorf("deltas %q, response %q, want %q", got.String(), resp.Message.Content, tc.wantDeltas)
			}
			if m := models(s.srv.ChatRequests()); !slices.Equal(m, tc.wantModels) {
				t.Errorf("requests went to %v, want %v", m, tc.wantModels)
			}
			if p := s.srv.Pending(llmtest.EndpointChat); p != tc.wantPending {
				t.Errorf("%d steps left, want %d", p, tc.wantPending)
			}
			recs := s.meter.records()
			if len(recs) != 1 || recs[0].usage.Estimated != tc.wantErr || recs[0].usage.CompletionTokens == 0 {
				t.Errorf("meter got %+v", recs)
			}
		})
	}
}

func TestChatCancellation(t *testing.T) {
	tests := []struct {
		name      string
		step      llmtest.Step
		stream    bool
		cancelAt  time.Duration // 0: at the first delta
		wantDelta bool
	}{
		// Uncancelled, each step takes a minute or more, or (the Retry-After,
		// within the 5 s cap) makes a second request, which the request count
		// catches; so a bound that holds however busy the machine is tells
		// "stopped" from "ran on".
		{name: "waiting for the answer", step: llmtest.Reply("late").WithDelay(time.Minute), cancelAt: 100 * time.Millisecond},
		{name: "waiting for the stream", step: llmtest.Reply("late").WithDelay(time.Minute), stream: true, cancelAt: 100 * time.Millisecond},
		{name: "in a Retry-After wait", step: llmtest.RateLimited(4 * time.Second), cancelAt: 100 * time.Millisecond},
		{name: "mid-stream", step: llmtest.Reply(strings.Repeat("word ", 3000)).WithChunkDelay(20 * time.Millisecond), stream: true, wantDelta: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := newSetup(t, 30*time.Second, agentChain())
			s.srv.Script(tc.step, tc.step, tc.step)
			ctx, cancel := context.WithCancel(llm.WithAttribution(context.Background(), llm.Attribution{WorkflowID: "wf"}))
			defer cancel()
			if tc.cancelAt > 0 {
				time.AfterFunc(tc.cancelAt, cancel)
			}
			var onDelta func(llm.Delta)
			if tc.stream {
				onDelta = func(llm.Delta) {
					if tc.cancelAt == 0 {
						cancel()
					}
				}
			}
			start := time.Now()
			resp, err := s.client.Chat(ctx, llm.ChatRequest{Messages: userMsg("hi")}, onDelta)
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("err = %v, want context.Canceled", err)
			}
			if d := time.Since(start); d > 30*time.Second {
				t.Errorf("stopped after %v", d)
			}
			if n := len(s.srv.ChatRequests()); n != 1 {
				t.Errorf("%d requests, want 1", n)
			}
			recs := s.meter.records()
			if !tc.wantDelta {
				if len(recs) != 0 {
					t.Errorf("meter got %+v for a call that produced nothing", recs)
				}
				return
			}
			// The part streamed before the stop was billed, estimated, with
			// a context the meter can still use.
			if len(recs) != 1 || !recs[0].usage.Estimated || recs[0].cancelled || recs[0].attr.WorkflowID != "wf" || resp.Message.Content == "" {
				t.Errorf("meter got %+v, response %q", recs, resp.Message.Content)
			}
		})
	}
}

// The summary operation uses the agent chain when it has none of its own.
func TestSummaryFallsBackToAgentChain(t *testing.T) {
	s := newSetup(t, 5*time.Second, agentChain())
	s.srv.Script(llmtest.Reply("short"))
	if !s.client.Configured(modeluse.OpSummary) || s.client.Configured(modeluse.OpEmbedding) {
		t.Fatal("Configured: summary should follow agent, embedding should be off")
	}
	resp, err := s.client.Chat(context.Background(), llm.ChatRequest{Operation: modeluse.OpSummary, Messages: userMsg("summarise")}, nil)
	if err != nil || resp.Usage.Operation != modeluse.OpSummary || resp.Usage.Model != "m-a" {
		t.Fatalf("resp %+v, err %v", resp, err)
	}
	if _, err := s.client.Chat(context.Background(), llm.ChatRequest{Operation: modeluse.OpEmbedding, Messages: userMsg("x")}, nil); !errors.Is(err, llm.ErrInvalidRequest) {
		t.Errorf("chat on the embedding operation: %v", err)
	}
	if _, _, err := s.client.Embed(context.Background(), []string{"x"}); !errors.Is(err, llm.ErrNotConfigured) {
		t.Errorf("embed without a model: %v", err)
	}
}

// Many goroutines share one client and one server.
func TestChatConcurrent(t *testing.T) {
	s := newSetup(t, 5*time.Second, agentChain(), llmtest.WithDefault(llmtest.Decide(func(r llmtest.ChatRequest) llmtest.Step {
		return llmtest.Reply("echo: " + r.LastUser())
	})))
	const n = 40
	errs := make(chan error, n)
	for i := range n {
		go func() {
			want := "echo: q" + strings.Repeat("x", i)
			var got strings.Builder
			resp, err := s.client.Chat(context.Background(), llm.ChatRequest{Messages: userMsg("q" + strings.Repeat("x", i))}, func(d llm.Delta) { got.WriteString(d.Content) })
			if err == nil && (resp.Message.Content != want || got.String() != want) {
				err = errors.New("got " + resp.Message.Content)
			}
			errs <- err
		}()
	}
	for range n {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
	if len(s.meter.records()) != n {
		t.Errorf("meter got %d records, want %d", len(s.meter.records()), n)
	}
}

// For a stream the provider's timeout bounds the silence between chunks,
// not the whole answer.
func TestStreamTimeouts(t *testing.T) {
	tests := []struct {
		name       string
		step       llmtest.Step
		wantModels []string
	}{
		{name: "a long, steady stream is not cut", step: llmtest.Reply(strings.Repeat("abcdef", 20)).WithChunkDelay(40 * time.Millisecond),
			wantModels: []string{"m-a"}},
		{name: "a stream that stalls before its first delta moves on", step: llmtest.Reply("stalls").WithChunkDelay(10 * time.Second),
			wantModels: []string{"m-a", "m-a", "m-b"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := newSetup(t, 200*time.Millisecond, agentChain())
			s.srv.Script(tc.step, tc.step, llmtest.Reply("from b"))
			var got strings.Builder
			resp, err := s.client.Chat(context.Background(), llm.ChatRequest{Messages: userMsg("hi")}, func(d llm.Delta) { got.WriteString(d.Content) })
			if err != nil {
				t.Fatal(err)
			}
			if m := models(s.srv.ChatRequests()); !slices.Equal(m, tc.wantModels) {
				t.Errorf("requests went to %v, want %v", m, tc.wantModels)
			}
			if got.String() != resp.Message.Content || resp.Message.Content == "" {
				t.Errorf("deltas %q, response %q", got.String(), resp.Message.Content)
			}
		})
	}
}
