package knowledge

import (
	"fmt"
	"strings"
	"unicode"

	"github.com/agenthost/agenthost/host/llm"
	"github.com/agenthost/agenthost/pdk/content"
)

// ChunkTokens is the chunk size: small enough that a hit is a passage worth
// citing, large enough to keep a paragraph's sense (docs/knowledge.md).
const ChunkTokens = 512

// tokenModel names the tokenizer chunks are measured with (cl100k, the
// encoding of the common embedding models).
const tokenModel = "text-embedding-3-small"

// Split cuts the text objects into chunks of at most maxTokens tokens
// (ChunkTokens when ≤ 0), each inside one object so its reference stays
// exact. Long objects are cut at paragraph, then sentence, then word
// boundaries; a single word longer than a chunk is cut by runes. Objects of
// other types are not chunked.
func Split(objects []content.Object, maxTokens int) []Chunk {
	if maxTokens <= 0 {
		maxTokens = ChunkTokens
	}
	var out []Chunk
	for _, o := range objects {
		if o.ContentType != content.Text || strings.TrimSpace(o.Data) == "" {
			continue
		}
		for _, piece := range splitText(o.Data, maxTokens) {
			out = append(out, Chunk{
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

// Terms are the search terms of a query: words of letters and digits,
// lower-cased, at least two characters, de-duplicated, without the function
// words of the workspace languages (unless nothing else is left). Both
// databases get only these, so no query syntax of theirs can be injected.
func Terms(q string) []string {
	seen := map[string]bool{}
	var out, common []string
	for _, w := range strings.FieldsFunc(strings.ToLower(q), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		if len([]rune(w)) < 2 || seen[w] {
			continue
		}
		seen[w] = true
		if stopwords[w] {
			common = append(common, w)
			continue
		}
		out = append(out, w)
	}
	if len(out) == 0 {
		return common
	}
	return out
}

// stopwords are function words of English, German, French and Italian
// questions: they match nearly every chunk and drown the words that matter.
var stopwords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`a an and are as at be by did do does for from had has have how in is it its of on or
		that the this to was were what when where which who why will with
		am auf aus bei das dem den der des die du ein eine einem einen einer er es für hat ich im in ist mit oder sie
		sind und vom von war was welche welcher welches wer wie wo zu zum zur
		au aux avec ce dans de des du elle en est et il la le les ou par pour qu que qui sur un une
		che chi come con da del della di e il in la le per un una`) {
		m[w] = true
	}
	return m
}()
