package agent

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/agenthost/agenthost/host/llm"
)

// ResultKeeper keeps a tool result too large for the model's context whole,
// as a document of the run's workflow (in agenthost the files capability:
// a file of the caller's workspace bound to the workflow, which the
// document tools read by its docItem: reference).
type ResultKeeper interface {
	KeepResult(ctx context.Context, tool, name, mimeType string, data []byte) (KeptResult, error)
}

// KeptResult is where a kept result now is.
type KeptResult struct {
	// Ref is the document's docItem:<id> reference ("" when the run has no
	// workflow: FileID alone names it).
	Ref    string
	FileID string
	Name   string
}

// Bounds of result fitting.
const (
	// fitNoteTokens is what the note around a fitted head (size, shape,
	// how to read on) takes at most.
	fitNoteTokens = 400
	// minHeadTokens is the least head a fitted result keeps, even when the
	// round has almost no room left (the next round's compaction makes
	// room; a model with nothing to look at cannot decide what to read).
	minHeadTokens = 64
	// uncountedBytesPerToken: a result longer than this many bytes per
	// token of its limit is over without being counted (counting 10 MB
	// costs over a second; no real text is that sparse in tokens).
	uncountedBytesPerToken = 16
	// eventPreviewBytes bounds the content of a toolResult event: the UI
	// shows a preview and links to the whole.
	eventPreviewBytes = 4096
)

// fitted is a result as the model receives it after fitting.
type fitted struct {
	text string
	// over: the whole did not fit and text is a head.
	over   bool
	tokens int // the whole result's tokens (estimated above the counting bound)
	bytes  int
	kept   KeptResult
	// keepErr says why the whole could not be kept.
	keepErr error
}

// resultLimit is the most tokens each of n results of the round may take:
// ResultShare of what the model's window leaves after the prompt (the
// conversation, tool definitions and round context) and the reply's
// reserve, shared among the round's results.
func (r *run) resultLimit(n int) int {
	window := r.window()
	room := window - r.promptTokens() - r.tokens.text(r.context) - window/replyReserve
	limit := int(r.cfg.ResultShare * float64(max(0, room)) / float64(max(1, n)))
	return max(limit, minHeadTokens+fitNoteTokens)
}

// room is what each of a round's results may take, worked out lazily:
// counting the prompt's tokens costs more than a round's other work, and a
// result shorter than a bound from byte sizes (a token covers at least a
// byte) fits without it. Safe for the round's concurrent calls.
type room struct {
	r     *run
	n     int
	lower int // a bound below the limit
	once  sync.Once
	limit int
}

// resultRoom is the room of a round of n results.
func (r *run) resultRoom(n int) *room {
	window := r.window()
	upper := llm.CountMessageTokens(r.tokens.model, nil, nil) + len(r.context) + 8
	for _, m := range r.msgs {
		upper += len(m.Content) + len(m.Name) + len(m.Role) + 8
		for _, tc := range m.ToolCalls {
			upper += len(tc.Name) + len(tc.Arguments) + 8
		}
	}
	for _, t := range r.tools.Tools() {
		upper += len(t.Name) + len(t.Description) + len(t.Parameters) + 16
	}
	lower := int(r.cfg.ResultShare * float64(max(0, window-upper-window/replyReserve)) / float64(max(1, n)))
	return &room{r: r, n: n, lower: lower}
}

// fits reports whether a text of size bytes surely fits without counting.
func (l *room) fits(size int) bool { return size <= l.lower }

// exact is the limit from the prompt's token count.
func (l *room) exact() int {
	l.once.Do(func() { l.limit = l.r.resultLimit(l.n) })
	return l.limit
}

// window is the context window of the model in use.
func (r *run) window() int {
	if r.info.ContextWindow > 0 {
		return r.info.ContextWindow
	}
	return defaultWindow
}

// fit measures a tool result in the model's tokens against limit. A result
// within it goes to the model as it is; one over it is kept whole through
// the run's ResultKeeper and the model receives a bounded head, the
// result's shape and how to read the rest with the document tools, never
// the whole.
func (r *run) fit(ctx context.Context, c call, text string, rm *room) fitted {
	if rm.fits(len(text)) {
		return fitted{text: text, bytes: len(text)}
	}
	return r.fitTo(ctx, c, text, rm.exact())
}

// fitTo fits a result to a limit of tokens.
func (r *run) fitTo(ctx context.Context, c call, text string, limit int) fitted {
	f := fitted{text: text, bytes: len(text)}
	switch {
	case len(text) <= limit:
		// A token covers at least one byte: no need to count.
		return f
	case len(text) > uncountedBytesPerToken*limit:
		f.tokens = len(text) / 4
	default:
		f.tokens = r.tokens.text(text)
		if f.tokens <= limit {
			return f
		}
	}
	f.over = true
	shape := describeShape(text)
	if r.cfg.Results == nil {
		f.keepErr = errNoKeeper
	} else {
		name := resultName(c, shape.ext)
		f.kept, f.keepErr = r.cfg.Results.KeepResult(ctx, c.name, name, shape.mime, []byte(text))
		if f.keepErr == nil && f.kept.Name == "" {
			f.kept.Name = name
		}
	}
	head := r.head(text, max(minHeadTokens, min(r.cfg.ResultHeadTokens, limit-fitNoteTokens)))
	f.text = r.fittedText(c, f, shape, head, limit)
	return f
}

var errNoKeeper = errors.New("this run keeps no documents")

// head is the longest prefix of text within tokens, cut at a line end when
// one is near, never inside a character.
func (r *run) head(text string, tokens int) string {
	n := min(len(text), tokens*4)
	for {
		h := cutAt(text, n)
		if n <= 1 || r.tokens.text(h) <= tokens {
			return h
		}
		n = n * 3 / 4
	}
}

// cutAt is text[:n] moved back to a rune boundary, and to the last line end
// of its final fifth when there is one.
func cutAt(text string, n int) string {
	if n >= len(text) {
		return text
	}
	for n > 0 && !utf8.RuneStart(text[n]) {
		n--
	}
	h := text[:n]
	if i := strings.LastIndexByte(h, '\n'); i >= 0 && i >= n*4/5 {
		h = h[:i+1]
	}
	return h
}

// fittedText is what the model reads of a result over its limit.
func (r *run) fittedText(c call, f fitted, shape shape, head string, limit int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "[The result of %s is too large for the model's context: about %d tokens (%d bytes); this round can take %d tokens of it (model %s, context window %d tokens). ",
		c.name, f.tokens, f.bytes, limit, r.info.Name, r.window())
	ref := f.kept.Ref
	if ref == "" {
		ref = f.kept.FileID
	}
	switch {
	case f.keepErr != nil:
		fmt.Fprintf(&b, "It could not be kept as a document (%v): only the head below reaches you.]\n", f.keepErr)
	default:
		fmt.Fprintf(&b, "It is kept whole as the document %s (%q).]\n", ref, f.kept.Name)
	}
	fmt.Fprintf(&b, "Shape: %s.\n", shape.summary)
	fmt.Fprintf(&b, "Head (the first %d of %d bytes):\n", len(head), f.bytes)
	b.WriteString(head)
	if !strings.HasSuffix(head, "\n") {
		b.WriteString("\n")
	}
	b.WriteString("[End of the head. ")
	if f.keepErr == nil {
		b.WriteString(r.readOn(ref, len(head)))
	}
	b.WriteString("Do not ask for the whole result again: it will not fit either.]")
	return b.String()
}

// readOn says how to read a kept result with the document tools of the
// run's tool set (they take the reference as their file).
func (r *run) readOn(ref string, headBytes int) string {
	var ways []string
	for _, t := range r.tools.Tools() {
		name := t.Name
		base := name[strings.LastIndexAny(name, "._")+1:]
		switch base {
		case "readFile":
			// filetools' readFile pages a text file by byte offset.
			ways = append(ways, fmt.Sprintf(`%s {"file":%q,"offset":%d,"maxBytes":N} reads on from the end of the head`, name, ref, headBytes))
		case "readContentObjects":
			ways = append(ways, fmt.Sprintf(`%s {"file":%q,"offset":N,"limit":N,"maxBytes":N} reads it in parts`, name, ref))
		case "readSection":
			ways = append(ways, fmt.Sprintf(`%s {"file":%q,"section":"…"} reads one section`, name, ref))
		case "searchKnowledge":
			ways = append(ways, fmt.Sprintf(`%s {"query":"…","files":[%q]} finds passages`, name, ref))
		case "browseContainer":
			ways = append(ways, fmt.Sprintf(`%s {"file":%q} shows its structure`, name, ref))
		}
	}
	// Three ways at most: the note must not crowd out the head.
	ways = ways[:min(len(ways), 3)]
	if len(ways) == 0 {
		return "No document tools are offered in this workflow; tell the user the document " + ref + " holds the whole result. "
	}
	return "Read on with the document tools: " + strings.Join(ways, "; ") + ". "
}

// resultName is the file name a kept result is stored under: the tool's
// name and the call's id, without what a file name may not hold.
func resultName(c call, ext string) string {
	safe := func(s string) string {
		return strings.Map(func(r rune) rune {
			if r == '/' || r == '\\' || r == ':' || r < 0x20 || r == 0x7f {
				return '-'
			}
			return r
		}, s)
	}
	id := safe(c.id)
	if len(id) > 40 {
		id = id[:40]
	}
	name := strings.ToValidUTF8(safe(c.name), "-")
	if len(name) > 100 {
		name = cutAt(name, 100)
	}
	return fmt.Sprintf("%s result %s.%s", strings.TrimSpace(name), id, ext)
}

// preview bounds a result's text for its toolResult event.
func preview(s string) string {
	if len(s) <= eventPreviewBytes {
		return s
	}
	return cutAt(s, eventPreviewBytes) + "…"
}

// text counts tokens of a text outside the conversation with the run's
// model tokenizer.
func (t *tokenCount) text(s string) int {
	if s == "" {
		return 0
	}
	return llm.CountTokens(t.model, s)
}

// shrink makes the conversation fit after the provider refused it as
// longer than the model's window: the window it named (or, when it named
// none, three quarters of what was sent) replaces the configured one for
// the rest of the run, every earlier round but the last is folded into the
// summary, tool results that take more than their share of the smaller
// room are fitted (kept as documents, a head for the model), and the
// round's context is fetched again within the new budget.
func (r *run) shrink(ctx context.Context, round int, err error) {
	sent := r.promptTokens() + r.tokens.text(r.context)
	window := sent * 3 / 4
	var pe *llm.ProviderError
	if errors.As(err, &pe) && pe.ContextWindow > 0 {
		window = pe.ContextWindow
	}
	if window < r.window() {
		r.a.logger.Warn("agent: the provider's context window is smaller than configured; using its",
			"model", r.info.Name, "configured", r.window(), "provider", window)
		r.info.ContextWindow = window
	}
	if err := r.fold(ctx, 1, true); err != nil {
		r.a.logger.Warn("agent: folding earlier rounds after a context error", "err", err)
	}
	r.refit(ctx)
	r.refreshContext(ctx, round)
}

// refit fits the conversation's tool results to the present room, as
// callTool fits new ones.
func (r *run) refit(ctx context.Context) {
	n, results := 0, 0
	for _, m := range r.msgs {
		if m.Role == "tool" && !r.fitted[m.ToolCallID] {
			n++
			results += r.tokens.text(m.Content)
		}
	}
	if n == 0 {
		return
	}
	// The room the results share is what the rest of the prompt leaves.
	window := r.window()
	room := window - (r.promptTokens() - results) - r.tokens.text(r.context) - window/replyReserve
	limit := max(int(r.cfg.ResultShare*float64(max(0, room))/float64(n)), minHeadTokens+fitNoteTokens)
	for i, m := range r.msgs {
		if m.Role != "tool" || r.fitted[m.ToolCallID] || len(m.Content) <= limit {
			continue
		}
		if f := r.fitTo(ctx, call{id: m.ToolCallID, name: m.Name}, m.Content, limit); f.over {
			r.msgs[i].Content = f.text
			r.fitted[m.ToolCallID] = true
		}
	}
}
