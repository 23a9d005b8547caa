package agent

import (
	"strings"
	"testing"

	"github.com/agenthost/agenthost/host/llm"
)

// TestTokenCountMatchesFullCount: the cached count equals a full
// llm.CountMessageTokens as a conversation grows, is compacted (a range
// cut out, the summary message replaced or inserted) and when a message is
// replaced behind the cache's back; it counts only what is new.
func TestTokenCountMatchesFullCount(t *testing.T) {
	defs := []llm.ToolDef{{Name: "lookup", Description: "look a topic up", Parameters: []byte(`{"type":"object","properties":{"topic":{"type":"string"}}}`)}}
	msg := func(role, text string) llm.Message { return llm.Message{Role: role, Content: text} }
	for _, model := range []string{"gpt-4o", "scripted"} {
		t.Run(model, func(t *testing.T) {
			tc := newTokenCount(model, nil)
			check := func(step string, msgs []llm.Message) {
				t.Helper()
				if got, want := tc.prompt(msgs, defs), llm.CountMessageTokens(model, msgs, defs); got != want {
					t.Fatalf("%s: cached %d, full count %d", step, got, want)
				}
				if len(tc.counts) != len(msgs) {
					t.Fatalf("%s: %d counts for %d messages", step, len(tc.counts), len(msgs))
				}
			}
			msgs := []llm.Message{msg("system", "You are the agent."), msg("user", "Find the invoices of 2026.")}
			check("opening", msgs)
			msgs = append(msgs, llm.Message{Role: "assistant", ToolCalls: []llm.ToolCall{{ID: "c1", Name: "lookup", Arguments: `{"topic":"invoices"}`}}},
				llm.Message{Role: "tool", ToolCallID: "c1", Name: "lookup", Content: strings.Repeat("invoice 17 paid; ", 40)})
			check("a tool round", msgs)
			// Counting again counts nothing new: a poisoned cache entry
			// shows through.
			tc.counts[3].tokens += 1000
			if got := tc.prompt(msgs, defs); got != llm.CountMessageTokens(model, msgs, defs)+1000 {
				t.Fatalf("the cached count was not used: %d", got)
			}
			tc.counts[3].tokens -= 1000
			msgs = append(msgs, msg("assistant", "Two invoices."), msg("user", "And 2025?"))
			check("more rounds", msgs)

			// Compaction: messages 2..4 folded, a summary inserted at 1.
			summary := msg("system", "Summary of the conversation so far:\nInvoice 17 was paid.")
			tc.splice(2, 5)
			tc.put(1, summary, true)
			msgs = append(append([]llm.Message{msgs[0], summary}, msgs[1]), msgs[5:]...)
			check("summary inserted", msgs)
			// The next compaction replaces the summary in place.
			summary2 := msg("system", "Summary of the conversation so far:\nInvoices 17 and 18 were paid in 2026.")
			tc.put(1, summary2, false)
			msgs[1] = summary2
			check("summary replaced", msgs)

			// A message replaced without telling the cache is caught by its
			// size and counted again.
			msgs[2] = msg("user", "Find every invoice of 2026 and 2025, please.")
			check("replaced behind the cache's back", msgs)
			// Fewer messages than counted.
			check("shorter", msgs[:2])
			check("grown again", msgs)
		})
	}
}

// TestCountCache: a second run over the same history (new strings, equal
// content) counts nothing; messages that differ in any field get their own
// entries; the cache stays within its bound.
func TestCountCache(t *testing.T) {
	shared := newCountCache(8)
	history := []llm.Message{{Role: "system", Content: "You are the agent."}, {Role: "user", Content: "Find the invoices."},
		{Role: "assistant", Content: "Two invoices."}, {Role: "tool", Name: "lookup", ToolCallID: "c1", Content: "Two invoices."}}
	first := newTokenCount("gpt-4o", shared)
	want := llm.CountMessageTokens("gpt-4o", history, nil)
	if got := first.prompt(history, nil); got != want {
		t.Fatalf("first run: %d, want %d", got, want)
	}
	if len(shared.m) != len(history) {
		t.Fatalf("%d entries for %d distinct messages", len(shared.m), len(history))
	}
	// The next run's history arrives as fresh copies.
	again := make([]llm.Message, len(history))
	for i, m := range history {
		m.Content = strings.Clone(m.Content)
		again[i] = m
	}
	counted := 0
	for _, m := range again {
		shared.get("gpt-4o", m, func() int { counted++; return 0 })
	}
	if counted != 0 {
		t.Fatalf("%d messages counted again", counted)
	}
	if got := newTokenCount("gpt-4o", shared).prompt(again, nil); got != want {
		t.Fatalf("second run: %d, want %d", got, want)
	}
	// Another model is another entry (another tokenizer).
	shared.get("gpt-4", history[1], func() int { counted++; return 0 })
	if counted != 1 {
		t.Fatal("another model's count came from the cache")
	}
	for i := range 20 {
		shared.get("gpt-4o", llm.Message{Role: "user", Content: strings.Repeat("x", i)}, func() int { return i })
		if len(shared.m) > 8 {
			t.Fatalf("%d entries, bound 8", len(shared.m))
		}
	}
}
