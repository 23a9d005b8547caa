package llm

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/agenthost/agenthost/host/llm/modeluse"
	"github.com/agenthost/agenthost/host/money"
)

// Model choice: a conversation may be pinned to one of the agent chain's
// models. Its calls then start with that model and fall back along the rest
// of the chain in its configured order (docs/agent.md, "Model choice").

// ErrModelNotConfigured: a chosen model is not one of the operation's chain.
var ErrModelNotConfigured = errors.New("the model is not configured")

// ErrModelCapability: the chosen model lacks a capability the call needs
// (images, tool calls).
var ErrModelCapability = errors.New("the chosen model cannot do what the call needs")

// ID is how a model is named in a choice and a workspace's allowed list:
// provider/model, e.g. "openai/gpt-4o".
func (m ModelInfo) ID() string { return m.Provider + "/" + m.Name }

// Price returns the model's prices per million input and output tokens as
// exact amounts.
func (m ModelInfo) Price() (in, out money.Amount) {
	return money.FromCHF(m.InputCHFPer1M), money.FromCHF(m.OutputCHFPer1M)
}

type choiceKey struct{}

// WithModel returns a context whose chat calls (OpAgent, and OpSummary when
// it uses the agent's chain) start with the model id (provider/model, see
// ModelInfo.ID). An empty id returns ctx unchanged. Call Client.Choose first
// to refuse an unknown model; a chat call with an id that is not in its
// chain fails with ErrModelNotConfigured rather than silently using another.
func WithModel(ctx context.Context, id string) context.Context {
	if id == "" {
		return ctx
	}
	return context.WithValue(ctx, choiceKey{}, id)
}

// ChosenModel returns the id WithModel put in ctx, "" for none.
func ChosenModel(ctx context.Context) string {
	id, _ := ctx.Value(choiceKey{}).(string)
	return id
}

// Choose returns the model id of op's chain, or an error wrapping
// ErrModelNotConfigured naming the models that are.
func (c *Client) Choose(op modeluse.Operation, id string) (ModelInfo, error) {
	var ids []string
	for _, m := range c.chain(op) {
		if m.String() == id {
			return m.info(), nil
		}
		ids = append(ids, m.String())
	}
	return ModelInfo{}, fmt.Errorf("llm: %w for %s: %q (configured: %s)", ErrModelNotConfigured, op, id, listOrNone(ids))
}

// chosen reorders chain so the model ctx chose comes first, the others after
// it in their order. Only the agent chain is chosen from (OpSummary takes it
// when it has none of its own).
func (c *Client) chosen(ctx context.Context, op modeluse.Operation, chain []*model) ([]*model, error) {
	id := ChosenModel(ctx)
	if id == "" || (op != modeluse.OpAgent && !(op == modeluse.OpSummary && len(c.chains[modeluse.OpSummary]) == 0)) {
		return chain, nil
	}
	i := slices.IndexFunc(chain, func(m *model) bool { return m.String() == id })
	if i < 0 {
		_, err := c.Choose(modeluse.OpAgent, id)
		return nil, err
	}
	if i == 0 {
		return chain, nil
	}
	out := make([]*model, 0, len(chain))
	out = append(out, chain[i])
	out = append(out, chain[:i]...)
	return append(out, chain[i+1:]...), nil
}

// checkImages refuses a request with images on a chosen model that does not
// read them: the person chose it, so the round is not quietly moved to
// another model.
func checkImages(ctx context.Context, req ChatRequest, first *model) error {
	if ChosenModel(ctx) == "" || first.Images {
		return nil
	}
	for _, m := range req.Messages {
		if len(m.Images) > 0 {
			return fmt.Errorf("llm: %w: %s does not read images (configure images: true for a model that does, or choose another)",
				ErrModelCapability, first.String())
		}
	}
	return nil
}

// ModelIn is Model for a call made with ctx: the model ctx chose (WithModel)
// when it is one of op's chain, else the chain's first.
func (c *Client) ModelIn(ctx context.Context, op modeluse.Operation) (ModelInfo, bool) {
	ch := c.chain(op)
	if len(ch) == 0 {
		return ModelInfo{}, false
	}
	if ch, err := c.chosen(ctx, op, ch); err == nil {
		return ch[0].info(), true
	}
	return ch[0].info(), true
}
