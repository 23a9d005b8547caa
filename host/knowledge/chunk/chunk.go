package chunk

import (
	"fmt"
	"strings"
	"unicode"

	"github.com/agenthost/agenthost/host/knowledge/kindex"
	"github.com/agenthost/agenthost/host/llm"
	"github.com/agenthost/agenthost/pdk/content"
)

// Tokens is the chunk size: small enough that a hit is a passage worth
// citing, large enough to keep a paragraph's sense (docs/knowledge.md).
const Tokens = 512

// tokenModel names the tokenizer chunks are measured with (cl100k, the
// encoding of the common embedding models).
const tokenModel = "text-embedding-3-small"

// Split cuts the text objects into chunks of at most maxTokens tokens
// (Tokens when ≤ 0), each inside one object so its reference stays
// exact. Long objects are cut at paragraph, then sentence, then word
// boundaries; a single word longer than a chunk is cut by runes. Objects of
// other types are not chunked.
func Split(objects []content.Object, maxTokens int) []kindex.Chunk {
	if maxTokens <= 0 {
		maxTokens = Tokens
	}
	var out []kindex.Chunk
	for _, o := range objects {
		if o.ContentType != content.Text || strings.TrimSpace(o.Data) == "" {
			continue
		}
		for _, piece := range splitText(o.Data, maxTokens) {
			out = append(out, kindex.Chunk{
				ID: fmt.Sprintf("%s#%d", o.ID, len(out)), Seq: len(out), ObjectID: o.ID, ContentType: content.Text,
				Text: piece, Ref: o.Ref, Tokens: llm.CountTokens(tokenModel, piece), Hidden: o.Metadata["hidden"] == true,
			})
		}
	}
	return out
}

// splitText cuts text into pieces of at most max tokens, preferring the
// coarsest boundary that fits.
func splitText(text string, max int) []string {
	text = strings.TrimSpace(text)
	if llm.CountTokens(tokenModel, text) <= max {
		return []string{text}
	}
	for _, sep := range []func(string) []string{paragraphs, sentences, strings.Fields} {
		parts := sep(text)
		if len(parts) > 1 {
			return pack(parts, max)
		}
	}
	// One enormous word: cut by runes (≈ 4 bytes a token leaves room).
	r := []rune(text)
	n := max * 2
	var out []string
	for len(r) > 0 {
		k := min(n, len(r))
		out = append(out, string(r[:k]))
		r = r[k:]
	}
	return out
}

// pack joins consecutive parts while they fit, splitting parts that alone
// exceed the limit.
func pack(parts []string, max int) []string {
	var out []string
	var cur strings.Builder
	curTokens := 0
	flush := func() {
		if s := strings.TrimSpace(cur.String()); s != "" {
			out = append(out, s)
		}
		cur.Reset()
		curTokens = 0
	}
	for _, p := range parts {
		t := llm.CountTokens(tokenModel, p)
		if t > max {
			flush()
			out = append(out, splitText(p, max)...)
			continue
		}
		if curTokens+t+1 > max {
			flush()
		}
		if cur.Len() > 0 {
			cur.WriteString(" ")
		}
		cur.WriteString(p)
		curTokens += t + 1
	}
	flush()
	return out
}

func paragraphs(s string) []string {
	var out []string
	for _, p := range strings.Split(s, "\n\n") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// sentences splits after ., ! and ? followed by white space.
func sentences(s string) []string {
	var out []string
	start := 0
	rs := []rune(s)
	for i := 0; i < len(rs)-1; i++ {
		if (rs[i] == '.' || rs[i] == '!' || rs[i] == '?') && unicode.IsSpace(rs[i+1]) {
			out = append(out, strings.TrimSpace(string(rs[start:i+1])))
			start = i + 1
		}
	}
	if rest := strings.TrimSpace(string(rs[start:])); rest != "" {
		out = append(out, rest)
	}
	return out
}
