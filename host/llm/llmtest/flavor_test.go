package llmtest_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/agenthost/agenthost/host/llm"
	"github.com/agenthost/agenthost/host/llm/llmtest"
)

func postChat(t *testing.T, url, body string) (int, http.Header, map[string]any) {
	t.Helper()
	resp, err := http.Post(url+"/chat/completions", "application/json", bytes.NewBufferString(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var out map[string]any
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatalf("body %q: %v", raw, err)
	}
	return resp.StatusCode, resp.Header, out
}

// TestContextWindowEnforced: a request over the model's window is refused
// with the provider's documented error and uses no script step; one within
// it is answered; a model without a window set accepts anything.
func TestContextWindowEnforced(t *testing.T) {
	text := strings.Repeat("invoice total ", 300)
	long := `{"model":"small","messages":[{"role":"user","content":"` + text + `"}]}`
	// OpenAI's count for chat models: 3 tokens per message, its role and
	// content, 3 for the reply's primer (host/llm counts the same way).
	n := fmt.Sprint(llm.CountMessageTokens("small", []llm.Message{{Role: "user", Content: text}}, nil))
	short := `{"model":"small","messages":[{"role":"user","content":"hi"}]}`
	tests := []struct {
		flavor llmtest.Flavor
		want   string // the error body, as JSON
	}{
		{llmtest.OpenAI, `{"error":{"message":"This model's maximum context length is 100 tokens. However, your messages resulted in ` + n + ` tokens. Please reduce the length of the messages.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}`},
		{llmtest.Azure, `{"error":{"message":"This model's maximum context length is 100 tokens. However, your messages resulted in ` + n + ` tokens. Please reduce the length of the messages.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}`},
		{llmtest.Anthropic, `{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: ` + n + ` tokens > 100 maximum"},"request_id":"req_llmtest_anthropic"}`},
	}
	for _, tc := range tests {
		t.Run(tc.flavor.String(), func(t *testing.T) {
			s := llmtest.New(t, llmtest.WithFlavor(tc.flavor), llmtest.WithContextWindow("small", 100))
			s.Script(llmtest.Reply("fits"))
			status, _, body := postChat(t, s.URL(), long)
			var want map[string]any
			_ = json.Unmarshal([]byte(tc.want), &want)
			got, _ := json.Marshal(body)
			wantJSON, _ := json.Marshal(want)
			if status != http.StatusBadRequest || string(got) != string(wantJSON) {
				t.Errorf("over the window: %d %s\nwant 400 %s", status, got, wantJSON)
			}
			if s.Pending(llmtest.EndpointChat) != 1 {
				t.Errorf("the refusal used a script step")
			}
			if status, _, body := postChat(t, s.URL(), short); status != 200 {
				t.Errorf("within the window: %d %v", status, body)
			}
			other := strings.Replace(long, `"small"`, `"big"`, 1)
			s.Script(llmtest.Reply("anything"))
			if status, _, body := postChat(t, s.URL(), other); status != 200 {
				t.Errorf("a model without a window: %d %v", status, body)
			}
		})
	}
}

// TestFlavoredErrors: rate limits, server and authentication errors in
// each provider's shape and headers.
func TestFlavoredErrors(t *testing.T) {
	tests := []struct {
		flavor llmtest.Flavor
		step   llmtest.Step
		status int
		header map[string]string
		want   map[string]string // dotted path → value
	}{
		{llmtest.OpenAI, llmtest.RateLimited(2 * time.Second), 429, map[string]string{"Retry-After": "2"},
			map[string]string{"error.code": "rate_limit_exceeded", "error.type": "requests"}},
		{llmtest.Azure, llmtest.RateLimited(6 * time.Second), 429, map[string]string{"Retry-After": "6", "retry-after-ms": "6000"},
			map[string]string{"error.code": "429", "error.message": "Requests to the ChatCompletions_Create Operation under Azure OpenAI API version 2024-10-21 have exceeded token rate limit of your current OpenAI S0 pricing tier. Please retry after 6 seconds."}},
		{llmtest.Azure, llmtest.Fail(500, "boom"), 500, nil, map[string]string{"error.code": "InternalServerError"}},
		{llmtest.Azure, llmtest.Fail(401, ""), 401, nil, map[string]string{"error.code": "401"}},
		{llmtest.Anthropic, llmtest.RateLimited(3 * time.Second), 429, map[string]string{"retry-after": "3", "request-id": "req_llmtest_anthropic"},
			map[string]string{"type": "error", "error.type": "rate_limit_error"}},
		{llmtest.Anthropic, llmtest.Fail(529, "Overloaded"), 529, nil, map[string]string{"error.type": "overloaded_error", "error.message": "Overloaded"}},
		{llmtest.Anthropic, llmtest.Fail(401, "invalid x-api-key"), 401, nil, map[string]string{"error.type": "authentication_error"}},
	}
	for _, tc := range tests {
		t.Run(tc.flavor.String(), func(t *testing.T) {
			s := llmtest.New(t, llmtest.WithFlavor(tc.flavor))
			s.Script(tc.step)
			status, h, body := postChat(t, s.URL(), `{"model":"m","messages":[{"role":"user","content":"hi"}]}`)
			if status != tc.status {
				t.Errorf("status %d, want %d", status, tc.status)
			}
			for k, v := range tc.header {
				if h.Get(k) != v {
					t.Errorf("header %s: %q, want %q", k, h.Get(k), v)
				}
			}
			for path, v := range tc.want {
				var cur any = body
				for _, k := range strings.Split(path, ".") {
					m, _ := cur.(map[string]any)
					cur = m[k]
				}
				if cur != v {
					t.Errorf("%s: %v, want %q (body %v)", path, cur, v, body)
				}
			}
		})
	}
}
