package modeluse

import (
	"time"

	"github.com/agenthost/agenthost/host/money"
)

// Operation is a kind of model use. Each operation has its own fallback chain
// of models in the configuration, so a cheap model can summarise while a
// strong one runs the agent.
type Operation string

// The operations agenthost configures models for.
const (
	// OpAgent is the agent loop's chat with tools.
	OpAgent Operation = "agent"
	// OpSummary is summarisation and analysis (progressive summaries of
	// older rounds). Without a chain of its own it uses OpAgent's.
	OpSummary Operation = "summary"
	// OpEmbedding turns text into vectors for the knowledge store.
	OpEmbedding Operation = "embedding"
	// OpTranscription is speech to text.
	OpTranscription Operation = "transcription"
	// OpSpeech is text to speech.
	OpSpeech Operation = "speech"
	// OpImage is image generation (the provider's images API).
	OpImage Operation = "image"
	// OpOCR reads the text of page images: a chat completion with image
	// inputs (content parts image_url with data: URLs) on a vision-capable
	// model. It has no fallback to other chains: a model that cannot see
	// would answer from nothing.
	OpOCR Operation = "ocr"
	// OpTitle names a conversation after its first exchange: one short chat
	// completion. Without a chain of its own it uses OpSummary's (a small
	// model, where one is configured), which falls back to OpAgent's.
	OpTitle Operation = "title"
)

// Operations lists every operation in a fixed order (configuration, docs).
func Operations() []Operation {
	return []Operation{OpAgent, OpSummary, OpEmbedding, OpTranscription, OpSpeech, OpImage, OpOCR, OpTitle}
}

// Valid reports whether op is one of the operations.
func (op Operation) Valid() bool {
	switch op {
	case OpAgent, OpSummary, OpEmbedding, OpTranscription, OpSpeech, OpImage, OpOCR, OpTitle:
		return true
	}
	return false
}

// Chat reports whether op is served by chat completions.
func (op Operation) Chat() bool {
	return op == OpAgent || op == OpSummary || op == OpOCR || op == OpTitle
}

// Usage is what one call cost, as recorded through the Meter.
//
// PromptTokens and CompletionTokens are the provider's figures unless
// Estimated is set, in which case some were counted with the tokenizer
// (provider reported none, or a stream ended before its usage chunk).
// Cost comes from the model's prices in the configuration. Duration is the
// wall time of the whole call, including retries and backoff. Transcription
// is priced by AudioSeconds and speech by Characters; their token fields
// stay 0.
type Usage struct {
	Operation        Operation
	Provider, Model  string
	PromptTokens     int
	CompletionTokens int
	// CachedPromptTokens is the part of PromptTokens the provider served from
	// its prompt cache (billed at the cached-input price).
	CachedPromptTokens int
	// Cost is what the call cost, exact to the nano-franc.
	Cost     money.Amount
	Duration time.Duration

	// AudioSeconds is the length of the transcribed audio (transcription).
	AudioSeconds float64
	// Characters is the number of characters (runes) spoken (speech).
	Characters int
	// Images is the number of images generated (image).
	Images int
	// Estimated is true when a figure above was counted locally because the
	// provider reported none.
	Estimated bool
	// Attempts is the number of HTTP requests the call made, across retries
	// and fallback models (1 when the first try worked).
	Attempts int
}

// Add sums two usages of the same operation (e.g. embedding batches). The
// provider and model are u's unless empty.
func (u Usage) Add(v Usage) Usage {
	if u.Operation == "" {
		u.Operation = v.Operation
	}
	if u.Provider == "" {
		u.Provider, u.Model = v.Provider, v.Model
	}
	u.PromptTokens += v.PromptTokens
	u.CompletionTokens += v.CompletionTokens
	u.CachedPromptTokens += v.CachedPromptTokens
	u.Cost += v.Cost
	u.Duration += v.Duration
	u.AudioSeconds += v.AudioSeconds
	u.Characters += v.Characters
	u.Images += v.Images
	u.Estimated = u.Estimated || v.Estimated
	u.Attempts += v.Attempts
	return u
}
