package llm_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agenthost/agenthost/host/llm"
	"github.com/agenthost/agenthost/host/llm/llmtest"
)

// TestErrorKinds: in each provider's documented error format (llmtest's
// flavors), a context-length refusal, an invalid request and an
// authentication failure are sorted by kind and sent once (the requests
// are counted at the server: no retry, no fallback); 429s and 5xx move to
// the next model of the chain, every attempt recorded and only the answer
// billed; a Retry-After is waited for.
func TestErrorKinds(t *testing.T) {
	long := strings.Repeat("The quarterly report lists every invoice. ", 40) // some 320 tokens
	for _, flavor := range []llmtest.Flavor{llmtest.OpenAI, llmtest.Azure, llmtest.Anthropic} {
		server := llmtest.Fail(500, "The server had an error while processing your request.")
		if flavor == llmtest.Anthropic {
			server = llmtest.Fail(529, "Overloaded")
		}
		tests := []struct {
			name       string
			script     []llmtest.Step
			prompt     string
			wantKind   llm.ErrorKind
			wantIs     error
			wantModels []string
			// answered: the call succeeds, by wantModels' last.
			answered  bool
			wantKinds []llm.ErrorKind // of the tries, the answer's ""
			minTook   time.Duration
		}{
			{name: "context length", prompt: long, wantKind: llm.KindContextLength, wantIs: llm.ErrContextLength,
				wantModels: []string{"m-a"}},
			{name: "invalid request", script: []llmtest.Step{llmtest.Fail(400, "Invalid value for 'temperature': must be at most 2.")},
				wantKind: llm.KindInvalidRequest, wantModels: []string{"m-a"}},
			{name: "authentication", script: []llmtest.Step{llmtest.Fail(401, "Incorrect API key provided.")},
				wantKind: llm.KindAuth, wantModels: []string{"m-a"}},
			{name: "429 and 5xx: the second model", script: []llmtest.Step{llmtest.RateLimited(0), server, llmtest.Reply("from b")},
				wantModels: []string{"m-a", "m-a", "m-b"}, answered: true,
				wantKinds: []llm.ErrorKind{llm.KindRateLimit, llm.KindServer, ""}},
			{name: "Retry-After is waited for", script: []llmtest.Step{llmtest.RateLimited(time.Second), llmtest.Reply("from a")},
				wantModels: []string{"m-a", "m-a"}, answered: true,
				wantKinds: []llm.ErrorKind{llm.KindRateLimit, ""}, minTook: time.Second},
		}
		for _, tc := range tests {
			t.Run(flavor.String()+"/"+tc.name, func(t *testing.T) {
				s := newSetup(t, 5*time.Second, agentChain(), llmtest.WithFlavor(flavor), llmtest.WithContextWindow("m-a", 200),
					llmtest.WithContextWindow("m-b", 200))
				s.srv.Script(tc.script...)
				prompt := tc.prompt
				if prompt == "" {
					prompt = "hi"
				}
				start := time.Now()
				resp, err := s.client.Chat(context.Background(), llm.ChatRequest{Messages: userMsg(prompt)}, nil)
				took := time.Since(start)
				if got := models(s.srv.ChatRequests()); !slices.Equal(got, tc.wantModels) {
					t.Errorf("requests went to %v, want %v", got, tc.wantModels)
				}
				if !tc.answered {
					var pe *llm.ProviderError
					if !errors.As(err, &pe) || pe.Kind != tc.wantKind || pe.Retryable() {
						t.Fatalf("error %v: want a ProviderError of kind %s, not retryable", err, tc.wantKind)
					}
					if tc.wantIs != nil && !errors.Is(err, tc.wantIs) {
						t.Errorf("error %v is not %v", err, tc.wantIs)
					}
					if tc.wantKind == llm.KindContextLength && pe.ContextWindow != 200 {
						t.Errorf("the window the provider named: %d, want 200 (%q)", pe.ContextWindow, pe.Message)
					}
					if errors.Is(err, llm.ErrContextLength) != (tc.wantKind == llm.KindContextLength) {
						t.Errorf("errors.Is(%v, ErrContextLength) wrong", err)
					}
					if len(resp.Tries) != 1 || resp.Tries[0].Kind != tc.wantKind {
						t.Errorf("tries %+v", resp.Tries)
					}
					if n := len(s.meter.records()); n != 0 {
						t.Errorf("%d records billed for a refused call", n)
					}
					return
				}
				if err != nil {
					t.Fatal(err)
				}
				last := tc.wantModels[len(tc.wantModels)-1]
				if resp.Usage.Model != last || resp.Message.Content != "from "+last[2:] {
					t.Errorf("answered by %s: %q", resp.Usage.Model, resp.Message.Content)
				}
				var kinds []llm.ErrorKind
				for i, tr := range resp.Tries {
					kinds = append(kinds, tr.Kind)
					if tr.Model != tc.wantModels[i] || (tr.Kind != "" && (tr.Status < 400 || tr.Error == "")) {
						t.Errorf("try %d: %+v", i, tr)
					}
				}
				if !slices.Equal(kinds, tc.wantKinds) {
					t.Errorf("tries of kinds %v, want %v", kinds, tc.wantKinds)
				}
				if recs := s.meter.records(); len(recs) != 1 || recs[0].usage.Model != last || recs[0].usage.Attempts != len(tc.wantModels) {
					t.Errorf("billed %+v, want one record for %s", recs, last)
				}
				if took < tc.minTook || (tc.minTook > 0 && resp.Tries[0].Wait < tc.minTook) {
					t.Errorf("took %v (waited %v), want at least %v", took, resp.Tries[0].Wait, tc.minTook)
				}
			})
		}
	}
}
