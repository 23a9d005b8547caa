package llm

import (
	"bytes"
	"encoding/json"
	"strings"
	"sync"

	"github.com/tiktoken-go/tokenizer"
)

// The two encodings current models use. Each is built on first use (about
// 20 ms: the embedded vocabulary is turned into a map) and is read-only and
// safe for concurrent use afterwards, so they are immutable tables.
var (
	cl100k = sync.OnceValue(func() tokenizer.Codec { return mustCodec(tokenizer.Cl100kBase) })
	o200k  = sync.OnceValue(func() tokenizer.Codec { return mustCodec(tokenizer.O200kBase) })
)

func mustCodec(e tokenizer.Encoding) tokenizer.Codec {
	c, err := tokenizer.Get(e)
	if err != nil {
		// Both encodings are compiled into the tokenizer module.
		panic("llm: tokenizer encoding " + string(e) + ": " + err.Error())
	}
	return c
}

// o200kPrefixes name the model families that use o200k_base.
var o200kPrefixes = []string{"gpt-4o", "chatgpt-4o", "gpt-4.1", "gpt-4.5", "gpt-5", "gpt-oss", "o1", "o3", "o4"}

// codecFor picks the encoding by model name: o200k_base for the gpt-4o,
// gpt-4.1, gpt-5 and o-series families, cl100k_base for everything else
// (gpt-4, gpt-3.5, the embedding models, and, as an approximation within
// roughly 10-20 %, open models whose own tokenizers we do not ship).
func codecFor(model string) tokenizer.Codec {
	if i := strings.LastIndexByte(model, '/'); i >= 0 {
		model = model[i+1:]
	}
	model = strings.ToLower(model)
	for _, p := range o200kPrefixes {
		if strings.HasPrefix(model, p) {
			return o200k()
		}
	}
	return cl100k()
}

// EncodingName returns the tokenizer encoding CountTokens uses for model
// ("o200k_base" or "cl100k_base").
func EncodingName(model string) string { return codecFor(model).GetName() }

// CountTokens counts the tokens of text with the tiktoken encoding of model
// (see EncodingName; unknown models use cl100k_base). It runs locally with
// the vocabularies compiled in, at roughly 7 MB of text per second and core;
// the first call per encoding costs about 20 ms more.
func CountTokens(model, text string) int {
	if text == "" {
		return 0
	}
	n, err := codecFor(model).Count(text)
	if err != nil {
		// Only a strict UTF-8 mode fails, which we do not set; keep a sane
		// figure rather than none.
		return (len(text) + 3) / 4
	}
	return n
}

// Token overheads of the chat format (OpenAI's cookbook, gpt-4o family):
// every message is wrapped in about three tokens, a name costs one more, and
// the reply is primed with three. Tool definitions are rendered by the
// provider into its own prompt format, which we approximate.
const (
	tokensPerMessage  = 3
	tokensPerName     = 1
	tokensReplyPrimer = 3
	tokensPerToolCall = 3
	tokensPerToolDef  = 7
	tokensToolsEnd    = 12
)

// CountMessageTokens estimates the prompt tokens of a chat request: the
// messages with their roles, names and tool calls, plus the tool
// definitions. It matches OpenAI's counts for plain messages and is within a
// few percent with tools (their rendering of schemas is not public). It
// costs one CountTokens per text, so callers that count long histories every
// round should cache per message.
func CountMessageTokens(model string, msgs []Message, tools []ToolDef) int {
	n := tokensReplyPrimer
	for _, m := range msgs {
		n += tokensPerMessage + CountTokens(model, m.Role) + CountTokens(model, m.Content) + imageTokens*len(m.Images)
		if m.Name != "" {
			n += tokensPerName + CountTokens(model, m.Name)
		}
		for _, tc := range m.ToolCalls {
			n += tokensPerToolCall + CountTokens(model, tc.Name) + CountTokens(model, tc.Arguments)
		}
		if m.ToolCallID != "" {
			n += CountTokens(model, m.ToolCallID)
		}
	}
	if len(tools) > 0 {
		n += tokensToolsEnd
		for _, t := range tools {
			n += tokensPerToolDef + CountTokens(model, t.Name) + CountTokens(model, t.Description)
			if len(t.Parameters) > 0 {
				var buf bytes.Buffer
				if json.Compact(&buf, t.Parameters) == nil {
					n += CountTokens(model, buf.String())
				} else {
					n += CountTokens(model, string(t.Parameters))
				}
			}
		}
	}
	return n
}
