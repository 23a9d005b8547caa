package llm_test

import (
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"github.com/agenthost/agenthost/host/llm"
)

func TestCountTokens(t *testing.T) {
	tests := []struct {
		model, text string
		want        int
		encoding    string
	}{
		{"gpt-4", "hello world", 2, "cl100k_base"},
		{"gpt-3.5-turbo", "tiktoken is great!", 6, "cl100k_base"}, // OpenAI cookbook
		{"text-embedding-3-small", "hello world", 2, "cl100k_base"},
		{"gpt-4o", "hello world", 2, "o200k_base"},
		{"gpt-4.1-mini", "hello world", 2, "o200k_base"},
		{"openai/gpt-4o-mini", "hello world", 2, "o200k_base"}, // OpenRouter's naming
		{"o3-mini", "hello world", 2, "o200k_base"},
		{"llama3.1:8b", "hello world", 2, "cl100k_base"}, // unknown: cl100k as an approximation
		{"gpt-4o", "", 0, "o200k_base"},
	}
	for _, tc := range tests {
		if got := llm.CountTokens(tc.model, tc.text); got != tc.want {
			t.Errorf("CountTokens(%q, %q) = %d, want %d", tc.model, tc.text, got, tc.want)
		}
		if got := llm.EncodingName(tc.model); got != tc.encoding {
			t.Errorf("EncodingName(%q) = %s, want %s", tc.model, got, tc.encoding)
		}
	}
	// Sanity on real text: German prose is between 2 and 5 bytes per token.
	text := strings.Repeat("Die Rechnung ist innert 30 Tagen zu bezahlen. Grüezi mitenand! ", 50)
	for _, m := range []string{"gpt-4", "gpt-4o"} {
		n := llm.CountTokens(m, text)
		if r := float64(len(text)) / float64(n); r < 2 || r > 5 {
			t.Errorf("%s: %d tokens for %d bytes", m, n, len(text))
		}
	}
}

func TestCountMessageTokens(t *testing.T) {
	msgs := []llm.Message{
		{Role: llm.RoleSystem, Content: "You are a helpful assistant."},
		{Role: llm.RoleUser, Content: "hello world"},
	}
	// OpenAI's cookbook: 3 per message + role + content, 3 to prime the reply.
	want := 3 + (3 + 1 + 6) + (3 + 1 + 2)
	if got := llm.CountMessageTokens("gpt-4o", msgs, nil); got != want {
		t.Errorf("plain messages: %d tokens, want %d", got, want)
	}
	withCall := append(msgs,
		llm.Message{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: "call_1", Name: "read_file", Arguments: `{"path":"a.txt"}`}}},
		llm.Message{Role: llm.RoleTool, ToolCallID: "call_1", Content: "file contents"})
	tools := []llm.ToolDef{{Name: "read_file", Description: "Reads a file.", Parameters: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}}}`)}}
	a := llm.CountMessageTokens("gpt-4o", withCall, nil)
	b := llm.CountMessageTokens("gpt-4o", withCall, tools)
	if a <= want+10 || b <= a+15 {
		t.Errorf("tool calls and definitions should count: %d, %d, %d", want, a, b)
	}
}

// The shared encoders are safe for concurrent use (run with -race).
func TestCountTokensConcurrent(t *testing.T) {
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			model := []string{"gpt-4", "gpt-4o"}[i%2]
			for range 50 {
				if n := llm.CountTokens(model, "hello world"); n != 2 {
					t.Errorf("got %d", n)
					return
				}
			}
		})
	}
	wg.Wait()
}
