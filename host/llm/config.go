package llm

import (
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/agenthost/agenthost/host/llm/modeluse"
)

// Defaults applied to a Config (by LoadConfig and New) where it says nothing.
const (
	DefaultOpenAIBaseURL    = "https://api.openai.com/v1"
	DefaultTimeout          = 120 * time.Second
	DefaultAttempts         = 3
	DefaultBaseDelay        = 500 * time.Millisecond
	DefaultMaxDelay         = 8 * time.Second
	DefaultMaxRetryAfter    = 30 * time.Second
	DefaultContextWindow    = 8192
	DefaultEmbedBatchSize   = 64
	DefaultEmbedBatchTokens = 100_000
	DefaultTranscribeBytes  = 25 << 20 // OpenAI's upload limit
	DefaultSpeechVoice      = "alloy"
	DefaultSpeechFormat     = "mp3"
)

// Config is the whole model configuration: providers, and per operation an
// ordered fallback chain of models. Load it with LoadConfig (file and
// environment) or build it in Go; New applies the defaults above and checks
// it. docs/configuration.md describes every field.
type Config struct {
	Providers []ProviderConfig
	// Models holds each operation's chain, first model first.
	Models        map[modeluse.Operation][]ModelConfig
	Retry         RetryConfig
	Embedding     EmbeddingConfig
	Transcription TranscriptionConfig
	Speech        SpeechConfig
}

// ProviderConfig is one OpenAI-compatible endpoint.
type ProviderConfig struct {
	// Name is how models refer to the provider, e.g. "openai", "local".
	Name string
	// BaseURL includes the version path, e.g. https://api.openai.com/v1 or
	// http://localhost:11434/v1 (Ollama).
	BaseURL string
	// APIKey is sent as a bearer token; empty sends none (local servers).
	APIKey string
	// APIKeyEnv names the environment variable LoadConfig reads APIKey from,
	// so keys stay out of files. New does not read the environment.
	APIKeyEnv string
	// Timeout bounds one request: a whole non-streamed call, and for a
	// stream the wait for each chunk.
	Timeout time.Duration
}

// LogValue keeps the API key out of logs.
func (p ProviderConfig) LogValue() slog.Value {
	key := ""
	if p.APIKey != "" {
		key = "(set)"
	}
	return slog.GroupValue(slog.String("name", p.Name), slog.String("baseURL", p.BaseURL),
		slog.String("apiKey", key), slog.Duration("timeout", p.Timeout))
}

// ModelConfig is one entry of a fallback chain.
//
// Prices are in CHF: InputCHFPer1M and OutputCHFPer1M per million tokens
// (chat, embedding), CHFPerMinute per minute of audio (transcription),
// CHFPer1MChars per million characters (speech). When an entry gives no
// price at all and Free is false, the built-in list price of a well-known
// model (gpt-4o, text-embedding-3-small, whisper-1, tts-1, …) applies;
// otherwise calls are recorded at 0 CHF and New logs a warning.
type ModelConfig struct {
	Provider string
	Model    string
	// ContextWindow in tokens; 0 takes the built-in value or 8192.
	ContextWindow int
	// NoFunctionCalling marks models without native tool calls (the agent
	// then uses its text protocol). The file key is functionCalling: false.
	NoFunctionCalling bool
	// Images marks a chat model that reads images in messages (vision). A
	// conversation pinned to a model without it is refused a round that
	// sends images. The file key is images: true.
	Images        bool
	InputCHFPer1M float64
	// CachedInputCHFPer1M prices prompt tokens the provider served from its
	// cache; 0 bills them at InputCHFPer1M.
	CachedInputCHFPer1M float64
	OutputCHFPer1M      float64
	CHFPerMinute        float64
	CHFPer1MChars       float64
	// CHFPerImage prices image generation per image, for providers that
	// report no tokens (dall-e-*); gpt-image-* report tokens, priced above.
	CHFPerImage float64
	// Free marks a model that costs nothing (a local server): no built-in
	// price is applied even if its name is a known one.
	Free bool
	// Dimensions asks an embedding model for vectors of this length
	// (text-embedding-3-*); 0 takes the model's own.
	Dimensions int
}

func (m ModelConfig) priced() bool {
	return m.InputCHFPer1M != 0 || m.OutputCHFPer1M != 0 || m.CHFPerMinute != 0 || m.CHFPer1MChars != 0 || m.CHFPerImage != 0
}

// RetryConfig is the retry policy for one model before the chain moves on.
type RetryConfig struct {
	// Attempts per model, the first try included (default 3).
	Attempts int
	// BaseDelay is the first backoff; it doubles per retry up to MaxDelay,
	// with jitter (a random point in its upper half).
	BaseDelay, MaxDelay time.Duration
	// MaxRetryAfter caps how long a provider's Retry-After is honoured; a
	// longer one moves to the next model at once.
	MaxRetryAfter time.Duration
}

// EmbeddingConfig bounds one embeddings request: at most BatchSize texts and
// BatchTokens tokens (counted with the tokenizer). A text longer than
// BatchTokens goes alone.
type EmbeddingConfig struct {
	BatchSize   int
	BatchTokens int
}

// TranscriptionConfig sets the audio language hint (ISO-639-1, empty: let the
// model detect) and the largest accepted upload.
type TranscriptionConfig struct {
	Language string
	MaxBytes int64
}

// SpeechConfig sets the default voice and audio format (mp3, opus, aac,
// flac, wav, pcm) of text to speech.
type SpeechConfig struct {
	Voice  string
	Format string
}

// withDefaults returns a deep copy of c with every default applied.
func (c Config) withDefaults() Config {
	out := c
	out.Providers = slices.Clone(c.Providers)
	for i := range out.Providers {
		p := &out.Providers[i]
		if p.Timeout == 0 {
			p.Timeout = DefaultTimeout
		}
		if p.BaseURL == "" && p.Name == "openai" {
			p.BaseURL = DefaultOpenAIBaseURL
		}
	}
	out.Models = make(map[modeluse.Operation][]ModelConfig, len(c.Models))
	for op, chain := range c.Models {
		chain = slices.Clone(chain)
		for i := range chain {
			chain[i] = chain[i].withDefaults()
		}
		out.Models[op] = chain
	}
	r := &out.Retry
	if r.Attempts == 0 {
		r.Attempts = DefaultAttempts
	}
	if r.BaseDelay == 0 {
		r.BaseDelay = DefaultBaseDelay
	}
	if r.MaxDelay == 0 {
		r.MaxDelay = max(DefaultMaxDelay, r.BaseDelay)
	}
	if r.MaxRetryAfter == 0 {
		r.MaxRetryAfter = DefaultMaxRetryAfter
	}
	if out.Embedding.BatchSize == 0 {
		out.Embedding.BatchSize = DefaultEmbedBatchSize
	}
	if out.Embedding.BatchTokens == 0 {
		out.Embedding.BatchTokens = DefaultEmbedBatchTokens
	}
	if out.Transcription.MaxBytes == 0 {
		out.Transcription.MaxBytes = DefaultTranscribeBytes
	}
	if out.Speech.Voice == "" {
		out.Speech.Voice = DefaultSpeechVoice
	}
	if out.Speech.Format == "" {
		out.Speech.Format = DefaultSpeechFormat
	}
	return out
}

func (m ModelConfig) withDefaults() ModelConfig {
	k, known := lookupKnown(m.Model)
	if m.ContextWindow == 0 {
		m.ContextWindow = DefaultContextWindow
		if known && k.contextWindow > 0 {
			m.ContextWindow = k.contextWindow
		}
	}
	if known && !m.Free && !m.priced() {
		m.InputCHFPer1M, m.OutputCHFPer1M = k.in, k.out
		m.CHFPerMinute, m.CHFPer1MChars = k.perMinute, k.per1MChars
	}
	return m
}

// speechFormats maps the formats the speech endpoint offers to MIME types.
// Immutable.
var speechFormats = map[string]string{
	"mp3":  "audio/mpeg",
	"opus": "audio/ogg",
	"aac":  "audio/aac",
	"flac": "audio/flac",
	"wav":  "audio/wav",
	"pcm":  "audio/pcm",
}

// Validate checks c and returns every problem, each naming its field as it
// is spelt in the configuration file (llm.models.agent[1].provider).
func (c Config) Validate() error {
	var errs []error
	bad := func(field, format string, args ...any) {
		errs = append(errs, fmt.Errorf("%s: %s", field, fmt.Sprintf(format, args...)))
	}
	names := map[string]bool{}
	for i, p := range c.Providers {
		f := fmt.Sprintf("llm.providers[%d]", i)
		switch {
		case p.Name == "":
			bad(f+".name", "missing")
		case names[p.Name]:
			bad(f+".name", "provider %q is defined twice", p.Name)
		}
		names[p.Name] = true
		if p.BaseURL == "" {
			bad(f+".baseURL", "missing (e.g. %s)", DefaultOpenAIBaseURL)
		} else if u, err := url.Parse(p.BaseURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			bad(f+".baseURL", "%q is not an http(s) URL", p.BaseURL)
		}
		if p.Timeout < 0 {
			bad(f+".timeout", "must not be negative")
		}
	}
	known := slices.Sorted(func(yield func(string) bool) {
		for n := range names {
			if !yield(n) {
				return
			}
		}
	})
	for _, op := range sortedOps(c.Models) {
		if !op.Valid() {
			bad("llm.models."+string(op), "unknown operation (known: %s)", opList())
			continue
		}
		for i, m := range c.Models[op] {
			f := fmt.Sprintf("llm.models.%s[%d]", op, i)
			switch {
			case m.Provider == "":
				bad(f+".provider", "missing (configured providers: %s)", listOrNone(known))
			case !names[m.Provider]:
				bad(f+".provider", "unknown provider %q (configured providers: %s)", m.Provider, listOrNone(known))
			}
			if m.Model == "" {
				bad(f+".model", "missing")
			} else if strings.ContainsAny(m.Model, ",\n") {
				// Model ids are kept comma separated per workspace.
				bad(f+".model", "%q must not contain a comma or a line break", m.Model)
			}
			if m.Images && !op.Chat() {
				bad(f+".images", "only chat models (%s, %s) read images", modeluse.OpAgent, modeluse.OpSummary)
			}
			if m.ContextWindow < 0 {
				bad(f+".contextWindow", "must not be negative")
			}
			if m.Dimensions < 0 {
				bad(f+".dimensions", "must not be negative")
			}
			for _, p := range []struct {
				name string
				v    float64
			}{{"inputCHFPer1M", m.InputCHFPer1M}, {"outputCHFPer1M", m.OutputCHFPer1M},
				{"chfPerMinute", m.CHFPerMinute}, {"chfPer1MChars", m.CHFPer1MChars}, {"chfPerImage", m.CHFPerImage}} {
				if p.v < 0 {
					bad(f+"."+p.name, "must not be negative")
				}
			}
			// Vectors of different models live in different spaces: a
			// fallback to another model would silently corrupt the index.
			if op == modeluse.OpEmbedding && i > 0 && (m.Model != c.Models[op][0].Model || m.Dimensions != c.Models[op][0].Dimensions) {
				bad(f+".model", "an embedding chain may only fall back to the same model and dimensions (%q), since vectors of different models cannot be compared", c.Models[op][0].Model)
			}
		}
	}
	r := c.Retry
	if r.Attempts < 0 {
		bad("llm.retry.attempts", "must not be negative")
	}
	if r.BaseDelay < 0 || r.MaxDelay < 0 || r.MaxRetryAfter < 0 {
		bad("llm.retry", "delays must not be negative")
	}
	if c.Embedding.BatchSize < 0 {
		bad("llm.embedding.batchSize", "must not be negative")
	}
	if c.Embedding.BatchTokens < 0 {
		bad("llm.embedding.batchTokens", "must not be negative")
	}
	if c.Transcription.MaxBytes < 0 {
		bad("llm.transcription.maxBytes", "must not be negative")
	}
	if f := c.Speech.Format; f != "" {
		if _, ok := speechFormats[f]; !ok {
			bad("llm.speech.format", "unknown format %q (known: mp3, opus, aac, flac, wav, pcm)", f)
		}
	}
	return errors.Join(errs...)
}

func sortedOps[V any](m map[modeluse.Operation]V) []modeluse.Operation {
	ops := make([]modeluse.Operation, 0, len(m))
	for op := range m {
		ops = append(ops, op)
	}
	slices.Sort(ops)
	return ops
}

func opList() string {
	var s []string
	for _, op := range modeluse.Operations() {
		s = append(s, string(op))
	}
	return strings.Join(s, ", ")
}

func listOrNone(s []string) string {
	if len(s) == 0 {
		return "none"
	}
	return strings.Join(s, ", ")
}

// notConfigured builds the ErrNotConfigured error for op, saying what to set.
func notConfigured(op modeluse.Operation) error {
	return fmt.Errorf("llm: %w for operation %s: set %s (and AGENTHOST_OPENAI_API_KEY, or AGENTHOST_OPENAI_BASE_URL for a local server) or llm.models.%s in the configuration file (see docs/configuration.md)",
		ErrNotConfigured, op, modelEnv(op), op)
}

func modelEnv(op modeluse.Operation) string { return "AGENTHOST_MODEL_" + strings.ToUpper(string(op)) }
