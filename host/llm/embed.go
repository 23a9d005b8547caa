package llm

import (
	"context"
	"fmt"
	"strings"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/agenthost/agenthost/host/llm/modeluse"
)

// Embed returns one vector per text, in the order of texts, from the
// embedding chain's model.
//
// The texts are sent in batches of at most Embedding.BatchSize texts and
// Embedding.BatchTokens tokens (a longer single text goes alone), one batch
// after another; each batch retries and falls back on its own, and records
// its own Usage through the Meter. The returned Usage is the sum. If a batch
// fails, the error is returned and the batches before it stay billed.
// Empty or blank texts are refused (ErrInvalidRequest): providers reject
// them. Every vector has the same length; Model(OpEmbedding).Dimensions, when
// set, is asked of the provider and checked.
func (c *Client) Embed(ctx context.Context, texts []string) ([][]float32, modeluse.Usage, error) {
	chain := c.chain(modeluse.OpEmbedding)
	total := modeluse.Usage{Operation: modeluse.OpEmbedding}
	if len(chain) == 0 {
		return nil, total, notConfigured(modeluse.OpEmbedding)
	}
	if len(texts) == 0 {
		return nil, total, nil
	}
	name := chain[0].Model
	tokens := make([]int, len(texts))
	for i, t := range texts {
		if strings.TrimSpace(t) == "" {
			return nil, total, fmt.Errorf("llm: embedding: %w: text %d is empty", ErrInvalidRequest, i)
		}
		tokens[i] = CountTokens(name, t)
	}

	out := make([][]float32, len(texts))
	dim := 0
	for start := 0; start < len(texts); {
		end, sum := start, 0
		for end < len(texts) && end-start < c.cfg.Embedding.BatchSize &&
			(end == start || sum+tokens[end] <= c.cfg.Embedding.BatchTokens) {
			sum += tokens[end]
			end++
		}
		batch := texts[start:end]
		// The tokenizer's count, or a third of the bytes when that is more:
		// the hold must cover a provider whose tokenizer is not ours.
		size := 0
		for _, t := range batch {
			size += len(t)
		}
		h, err := c.hold(ctx, modeluse.OpEmbedding, estimate(chain, max(sum, size/3+1), 0))
		if err != nil {
			return nil, total, err
		}
		began := time.Now()
		var resp openai.EmbeddingResponse
		used, attempts, err := c.run(ctx, modeluse.OpEmbedding, chain, func(a *attempt, m *model) (bool, error) {
			r, err := m.p.api.CreateEmbeddings(a.ctx, openai.EmbeddingRequestStrings{
				Input: batch, Model: openai.EmbeddingModel(m.Model), Dimensions: m.Dimensions,
			})
			if err != nil {
				return false, err
			}
			if err := checkEmbeddings(r.Data, len(batch), m.Dimensions); err != nil {
				return false, err
			}
			resp = r
			return false, nil
		})
		if err != nil {
			h.Release(ctx)
			return nil, total, err
		}
		for _, e := range resp.Data {
			out[start+e.Index] = e.Embedding
			if dim == 0 {
				dim = len(e.Embedding)
			} else if len(e.Embedding) != dim {
				h.Release(ctx) // refused unrecorded, as the wrong vectors are
				return nil, total, fmt.Errorf("llm: embedding: %s returned vectors of %d and %d dimensions", used, dim, len(e.Embedding))
			}
		}
		u := modeluse.Usage{Operation: modeluse.OpEmbedding, Provider: used.p.Name, Model: used.Model, Attempts: attempts,
			Duration: time.Since(began), PromptTokens: resp.Usage.PromptTokens}
		if u.PromptTokens == 0 {
			u.PromptTokens, u.Estimated = sum, true
		}
		u.Cost = used.tokenCost(u.PromptTokens, 0, 0)
		total = total.Add(u)
		if err := c.record(ctx, h, u); err != nil {
			h.Release(ctx)
			return out, total, err
		}
		start = end
	}
	return out, total, nil
}

// checkEmbeddings makes sure a response holds exactly one vector per input,
// so that no text silently gets another's vector or none.
func checkEmbeddings(data []openai.Embedding, n, dims int) error {
	if len(data) != n {
		return fmt.Errorf("asked for %d embeddings, got %d", n, len(data))
	}
	seen := make([]bool, n)
	for _, e := range data {
		if e.Index < 0 || e.Index >= n || seen[e.Index] {
			return fmt.Errorf("embedding index %d out of range or repeated", e.Index)
		}
		seen[e.Index] = true
		if len(e.Embedding) == 0 {
			return fmt.Errorf("embedding %d is empty", e.Index)
		}
		if dims > 0 && len(e.Embedding) != dims {
			return fmt.Errorf("embedding %d has %d dimensions, configured %d", e.Index, len(e.Embedding), dims)
		}
	}
	return nil
}
