package agent_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/agenthost/agenthost/host/agent"
	"github.com/agenthost/agenthost/host/llm"
	"github.com/agenthost/agenthost/host/llm/llmtest"
	"github.com/agenthost/agenthost/host/llm/modeluse"
	"github.com/agenthost/agenthost/host/money"
)

// roundSource answers each round with a context naming the round, costs
// CHF 0.01 a round, and fails the rounds listed in fail.
type roundSource struct {
	mu   sync.Mutex
	reqs []agent.ContextRequest
	fail map[int]bool
}

func (s *roundSource) RoundContext(_ context.Context, req agent.ContextRequest) (agent.RoundContext, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reqs = append(s.reqs, req)
	if s.fail[req.Round] {
		return agent.RoundContext{}, errors.New("knowledge store closed")
	}
	return agent.RoundContext{Text: fmt.Sprintf("CTX round %d; summary %q", req.Round, req.Summary),
		Usage: modeluse.Usage{Cost: money.FromCHF(0.01), PromptTokens: 10}}, nil
}

// TestContextSource: before every model round the source is asked, within a
// budget that shrinks as the conversation grows and never passes
// ContextShare of the window; its text is the request's second message
// (replaced each round, never accumulated), the running summary reaches the
// model only through it, its cost counts, and a failing round goes on
// without context.
func TestContextSource(t *testing.T) {
	var mu sync.Mutex
	rounds := 0
	e := newEnv(t, llm.ModelConfig{ContextWindow: 16000}, llmtest.WithDefault(llmtest.Decide(func(r llmtest.ChatRequest) llmtest.Step {
		if r.Model == "summarizer" {
			return llmtest.Reply("Looked up eta.")
		}
		mu.Lock()
		defer mu.Unlock()
		rounds++
		if rounds <= 4 {
			return llmtest.CallTools(llmtest.Call("lookup", lookupArgs("eta", 0)))
		}
		return llmtest.Reply("done")
	})))
	src := &roundSource{fail: map[int]bool{3: true}}
	res := agent.New(e.model, agent.Config{KeepRounds: 1, ContextShare: 0.25}, nil).Run(context.Background(),
		agent.Input{Prompt: "eta", Summary: "Earlier: the user likes short answers.", ContextSource: src}, e.tools, nil)
	if res.Outcome != agent.Completed || res.Rounds != 5 {
		t.Fatalf("result: %+v", res)
	}
	if len(src.reqs) != 5 {
		t.Fatalf("%d context requests for 5 rounds", len(src.reqs))
	}
	for i, req := range src.reqs {
		if req.Round != i+1 || req.Model != "scripted" || req.Budget <= 0 || req.Budget > 4000 {
			t.Fatalf("request %d: %+v", i, req)
		}
	}
	if last, first := src.reqs[4].Budget, src.reqs[0].Budget; last > first {
		t.Fatalf("budget grew with the conversation: %d → %d", first, last)
	}
	if src.reqs[0].Summary != "Earlier: the user likes short answers." || !strings.Contains(src.reqs[4].Summary, "Looked up eta.") {
		t.Fatalf("summaries given to the source: %q, %q", src.reqs[0].Summary, src.reqs[4].Summary)
	}
	// Four rounds paid CHF 0.01 each (round 3 failed); the scripted model is free.
	if res.Cost != 4*money.Rappen {
		t.Fatalf("cost %s, want the source's 0.04", res.Cost)
	}
	round := 0
	for _, r := range e.srv.ChatRequests() {
		if r.Model == "summarizer" {
			continue
		}
		round++
		var ctxMsgs, summaryMsgs int
		for _, m := range r.Messages {
			if strings.HasPrefix(m.Content, "CTX round") {
				ctxMsgs++
			}
			if strings.HasPrefix(m.Content, "Summary of the conversation so far:") {
				summaryMsgs++
			}
		}
		if summaryMsgs != 0 {
			t.Fatalf("round %d: the loop sent its own summary message beside the source's context", round)
		}
		if round == 3 {
			if ctxMsgs != 0 {
				t.Fatalf("round 3's source failed, yet a context was sent")
			}
			continue
		}
		if ctxMsgs != 1 || r.Messages[1].Role != "system" || !strings.HasPrefix(r.Messages[1].Content, fmt.Sprintf("CTX round %d;", round)) {
			t.Fatalf("round %d: context messages %d, second message %+v", round, ctxMsgs, r.Messages[1])
		}
	}
	if round != 5 {
		t.Fatalf("%d agent requests", round)
	}
}
