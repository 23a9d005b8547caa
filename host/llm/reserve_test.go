package llm_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agenthost/agenthost/host/llm"
	"github.com/agenthost/agenthost/host/llm/llmtest"
	"github.com/agenthost/agenthost/host/llm/modeluse"
	"github.com/agenthost/agenthost/host/money"
)

// reserver records the estimates it is asked to hold and how each hold
// ended; it refuses when refuse is set.
type reserver struct {
	meter
	refuse error
	mu     sync.Mutex
	holds  []*hold
}

type hold struct {
	op               modeluse.Operation
	estimate         money.Amount
	settled          *modeluse.Usage
	released, double bool
}

func (r *reserver) Reserve(_ context.Context, op modeluse.Operation, estimate money.Amount) (llm.Hold, error) {
	if r.refuse != nil {
		return nil, r.refuse
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	h := &hold{op: op, estimate: estimate}
	r.holds = append(r.holds, h)
	return h, nil
}

func (h *hold) Settle(_ context.Context, u modeluse.Usage) error {
	h.double = h.double || h.settled != nil || h.released
	h.settled = &u
	return nil
}

func (h *hold) Release(context.Context) {
	if h.settled == nil {
		h.double = h.double || h.released
		h.released = true
	}
}

// A meter that is a Reserver is asked before every call with an estimate
// no smaller than what the call then costs, and each hold ends once:
// settled with the call's usage, or released when the call failed; a
// refusal sends nothing.
func TestReserveBeforeEveryCall(t *testing.T) {
	priced := llm.ModelConfig{Provider: "a", Model: "m", InputCHFPer1M: 2, OutputCHFPer1M: 8, ContextWindow: 128000}
	embed := llm.ModelConfig{Provider: "a", Model: "e", InputCHFPer1M: 0.1}
	for _, c := range []struct {
		name    string
		script  func(srv *llmtest.Server)
		call    func(ctx context.Context, cl *llm.Client) (modeluse.Usage, error)
		settled bool
	}{
		{"chat", func(srv *llmtest.Server) { srv.Script(llmtest.Reply(strings.Repeat("word ", 200))) },
			func(ctx context.Context, cl *llm.Client) (modeluse.Usage, error) {
				r, err := cl.Chat(ctx, llm.ChatRequest{Messages: []llm.Message{{Role: "user", Content: strings.Repeat("a question ", 500)}}}, nil)
				return r.Usage, err
			}, true},
		{"chat with maxTokens", func(srv *llmtest.Server) { srv.Script(llmtest.Reply("short")) },
			func(ctx context.Context, cl *llm.Client) (modeluse.Usage, error) {
				r, err := cl.Chat(ctx, llm.ChatRequest{MaxTokens: 10, Messages: []llm.Message{{Role: "user", Content: "hi"}}}, nil)
				return r.Usage, err
			}, true},
		{"chat failed", func(srv *llmtest.Server) { srv.Script(llmtest.Fail(400, "bad")) },
			func(ctx context.Context, cl *llm.Client) (modeluse.Usage, error) {
				r, err := cl.Chat(ctx, llm.ChatRequest{Messages: []llm.Message{{Role: "user", Content: "hi"}}}, nil)
				return r.Usage, err
			}, false},
		{"embedding", func(*llmtest.Server) {},
			func(ctx context.Context, cl *llm.Client) (modeluse.Usage, error) {
				_, u, err := cl.Embed(ctx, []string{strings.Repeat("text ", 100)})
				return u, err
			}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := newSetup(t, 5*time.Second, map[modeluse.Operation][]llm.ModelConfig{modeluse.OpAgent: {priced}, modeluse.OpEmbedding: {embed}})
			r := &reserver{}
			cl, err := llm.New(s.client.Config(), r, nil)
			if err != nil {
				t.Fatal(err)
			}
			c.script(s.srv)
			u, err := c.call(context.Background(), cl)
			if (err == nil) != c.settled || len(r.holds) != 1 {
				t.Fatalf("%v, %d holds", err, len(r.holds))
			}
			h := r.holds[0]
			switch {
			case h.double:
				t.Error("a hold ended twice")
			case c.settled && (h.settled == nil || h.settled.Cost != u.Cost || h.released):
				t.Errorf("hold %+v, want it settled with the usage %+v", h, u)
			case !c.settled && (h.settled != nil || !h.released):
				t.Errorf("hold %+v, want it released", h)
			case u.Cost > h.estimate:
				t.Errorf("the call cost CHF %s, more than its estimate CHF %s", u.Cost, h.estimate)
			case h.estimate <= 0:
				t.Errorf("estimate CHF %s for a priced call", h.estimate)
			}
		})
	}
	t.Run("refused", func(t *testing.T) {
		s := newSetup(t, 5*time.Second, map[modeluse.Operation][]llm.ModelConfig{modeluse.OpAgent: {priced}})
		over := errors.New("billing: the tenant is over its spending limit")
		cl, err := llm.New(s.client.Config(), &reserver{refuse: over}, nil)
		if err != nil {
			t.Fatal(err)
		}
		_, err = cl.Chat(context.Background(), llm.ChatRequest{Messages: []llm.Message{{Role: "user", Content: "hi"}}}, nil)
		if !errors.Is(err, llm.ErrRefused) || !errors.Is(err, over) || len(s.srv.Requests()) != 0 {
			t.Fatalf("%v, %d requests sent; want ErrRefused and nothing sent", err, len(s.srv.Requests()))
		}
	})
}
