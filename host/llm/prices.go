package llm

import (
	"encoding/json"
	"slices"
	"strings"

	"github.com/agenthost/agenthost/host/llm/modeluse"
	"github.com/agenthost/agenthost/host/money"
)

// knownModel is a built-in default for a well-known model, used when the
// configuration names the model without giving its context window or prices
// (the usual case with the environment-only setup).
type knownModel struct {
	name          string
	contextWindow int
	// CHF per 1M input / output tokens, per audio minute, per 1M characters.
	in, out, perMinute, per1MChars float64
}

// knownModels holds OpenAI's published list prices (USD, 2025) converted at
// 0.80 CHF per USD. They go stale: operators who bill customers set prices in
// the configuration, which always wins. Immutable.
var knownModels = []knownModel{
	{name: "gpt-5", contextWindow: 400_000, in: 1.00, out: 8.00},
	{name: "gpt-5-mini", contextWindow: 400_000, in: 0.20, out: 1.60},
	{name: "gpt-5-nano", contextWindow: 400_000, in: 0.04, out: 0.32},
	{name: "gpt-4.1", contextWindow: 1_047_576, in: 1.60, out: 6.40},
	{name: "gpt-4.1-mini", contextWindow: 1_047_576, in: 0.32, out: 1.28},
	{name: "gpt-4.1-nano", contextWindow: 1_047_576, in: 0.08, out: 0.32},
	{name: "gpt-4o", contextWindow: 128_000, in: 2.00, out: 8.00},
	{name: "gpt-4o-mini", contextWindow: 128_000, in: 0.12, out: 0.48},
	{name: "o4-mini", contextWindow: 200_000, in: 0.88, out: 3.52},
	{name: "o3-mini", contextWindow: 200_000, in: 0.88, out: 3.52},
	{name: "text-embedding-3-small", contextWindow: 8191, in: 0.016},
	{name: "text-embedding-3-large", contextWindow: 8191, in: 0.104},
	{name: "text-embedding-ada-002", contextWindow: 8191, in: 0.08},
	{name: "whisper-1", perMinute: 0.0048},
	{name: "gpt-4o-transcribe", perMinute: 0.0048},
	{name: "gpt-4o-mini-transcribe", perMinute: 0.0024},
	{name: "tts-1", per1MChars: 12.00},
	{name: "tts-1-hd", per1MChars: 24.00},
}

// lookupKnown finds a model by exact name, or a dated snapshot of one
// ("gpt-4o-2024-08-06" is gpt-4o, but "gpt-4o-mini" is not gpt-4o). A
// provider prefix such as "openai/" (OpenRouter) is ignored.
func lookupKnown(name string) (knownModel, bool) {
	if i := strings.LastIndexByte(name, '/'); i >= 0 {
		name = name[i+1:]
	}
	var best knownModel
	found := false
	for _, k := range knownModels {
		if name == k.name {
			return k, true
		}
		rest, ok := strings.CutPrefix(name, k.name+"-")
		if ok && rest != "" && rest[0] >= '0' && rest[0] <= '9' && (!found || len(k.name) > len(best.name)) {
			best, found = k, true
		}
	}
	return best, found
}

// ModelPrice is what one configured model costs, as the billing price table
// records it: per million tokens (input, cached input, output), per minute
// of audio, per million characters spoken, per image.
type ModelPrice struct {
	Operation   modeluse.Operation `json:"operation"`
	Provider    string             `json:"provider"`
	Model       string             `json:"model"`
	Input       money.Amount       `json:"inputPer1M,omitempty"`
	CachedInput money.Amount       `json:"cachedInputPer1M,omitempty"`
	Output      money.Amount       `json:"outputPer1M,omitempty"`
	PerMinute   money.Amount       `json:"perMinute,omitempty"`
	Per1MChars  money.Amount       `json:"per1MChars,omitempty"`
	PerImage    money.Amount       `json:"perImage,omitempty"`
}

// modelPriceJSON is ModelPrice as the price table keeps it: amounts as
// integers of nano-francs. A table's version is the digest of this form,
// so it stays as it was when Amount learned to marshal as francs.
type modelPriceJSON struct {
	Operation   modeluse.Operation `json:"operation"`
	Provider    string             `json:"provider"`
	Model       string             `json:"model"`
	Input       int64              `json:"inputPer1M,omitempty"`
	CachedInput int64              `json:"cachedInputPer1M,omitempty"`
	Output      int64              `json:"outputPer1M,omitempty"`
	PerMinute   int64              `json:"perMinute,omitempty"`
	Per1MChars  int64              `json:"per1MChars,omitempty"`
	PerImage    int64              `json:"perImage,omitempty"`
}

// MarshalJSON writes the price in the price table's form (nano-francs).
func (p ModelPrice) MarshalJSON() ([]byte, error) {
	return json.Marshal(modelPriceJSON{Operation: p.Operation, Provider: p.Provider, Model: p.Model,
		Input: int64(p.Input), CachedInput: int64(p.CachedInput), Output: int64(p.Output),
		PerMinute: int64(p.PerMinute), Per1MChars: int64(p.Per1MChars), PerImage: int64(p.PerImage)})
}

// UnmarshalJSON reads the price table's form.
func (p *ModelPrice) UnmarshalJSON(b []byte) error {
	var w modelPriceJSON
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*p = ModelPrice{Operation: w.Operation, Provider: w.Provider, Model: w.Model,
		Input: money.Amount(w.Input), CachedInput: money.Amount(w.CachedInput), Output: money.Amount(w.Output),
		PerMinute: money.Amount(w.PerMinute), Per1MChars: money.Amount(w.Per1MChars), PerImage: money.Amount(w.PerImage)}
	return nil
}

// Prices lists the prices of every model of every chain, built-in list
// prices applied as Client applies them, in a stable order.
func (c Config) Prices() []ModelPrice {
	c = c.withDefaults()
	ops := make([]string, 0, len(c.Models))
	for op := range c.Models {
		ops = append(ops, string(op))
	}
	slices.Sort(ops)
	var out []ModelPrice
	for _, op := range ops {
		for _, m := range c.Models[modeluse.Operation(op)] {
			mp := ModelPrice{Operation: modeluse.Operation(op), Provider: m.Provider, Model: m.Model,
				Input: money.FromCHF(m.InputCHFPer1M), CachedInput: money.FromCHF(m.CachedInputCHFPer1M),
				Output: money.FromCHF(m.OutputCHFPer1M), PerMinute: money.FromCHF(m.CHFPerMinute),
				Per1MChars: money.FromCHF(m.CHFPer1MChars), PerImage: money.FromCHF(m.CHFPerImage)}
			if mp.CachedInput == 0 {
				mp.CachedInput = mp.Input
			}
			out = append(out, mp)
		}
	}
	return out
}
