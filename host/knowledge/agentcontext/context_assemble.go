package agentcontext

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/agenthost/agenthost/host/knowledge/kindex"
	"github.com/agenthost/agenthost/host/llm"
)

// Priority orders the parts of an agent's context: 1 is placed first and
// cut last.
type Priority int

// The priorities: what the user asked and their own documents come before
// the workflow's facts, the tenant's shared documents, the summary and old
// tool results (docs/agent.md#design-decisions).
const (
	PriorityPrompt      Priority = 1
	PriorityInstance    Priority = 2
	PriorityEntities    Priority = 3
	PriorityShared      Priority = 4
	PrioritySummary     Priority = 5
	PriorityToolResults Priority = 6
)

// sectionTitle heads each priority's section of the context text; what is
// left out is named with the plural noun.
var sectionTitle = map[Priority]struct{ title, noun string }{
	PriorityPrompt:      {"Request", "request part(s)"},
	PriorityInstance:    {"Documents of this workspace (cite as [n])", "chunk(s) of the workspace's documents"},
	PriorityEntities:    {"Facts noted in this workflow", "fact(s)"},
	PriorityShared:      {"Shared documents of the organisation (cite as [n])", "chunk(s) of shared documents"},
	PrioritySummary:     {"Summary of the conversation so far", "summary"},
	PriorityToolResults: {"Results of earlier tool calls", "tool result(s)"},
}

// contextIntro opens every context text.
const contextIntro = "Context retrieved for the user's request from their documents and this workflow's memory. " +
	"When you use a document, cite it as [n] with its reference.\n"

// Part is one piece of context.
type Part struct {
	Priority Priority
	Text     string
	// Cite is a retrieved chunk's reference (file, place in it, container
	// path, file id); a part with one is numbered for citation and is cut,
	// if at all, only with a note saying so.
	Cite string
	// Hit is the chunk the part shows, if any.
	Hit *kindex.Hit
}

// ChunkPart is the part of a retrieved chunk at a priority.
func ChunkPart(p Priority, h kindex.Hit) Part {
	return Part{Priority: p, Text: h.Text, Cite: Reference(h), Hit: &h}
}

// Reference says where a chunk comes from, for citation: the file (its path
// through containers when it has one), the place in it (page, sheet, slide,
// section, paragraph, or the extractor's location) and the file id tools
// take.
func Reference(h kindex.Hit) string {
	name := h.FileName
	if h.Ref.ContainerPath != "" {
		name = h.Ref.ContainerPath
	}
	var loc []string
	r := h.Ref
	if r.PageIndex > 0 {
		loc = append(loc, "page "+strconv.Itoa(r.PageIndex))
	}
	if r.SheetName != "" {
		loc = append(loc, "sheet "+r.SheetName)
	}
	if r.SlideIndex > 0 {
		loc = append(loc, "slide "+strconv.Itoa(r.SlideIndex))
	}
	if r.SectionID != "" {
		loc = append(loc, "section "+r.SectionID)
	}
	if r.Paragraph > 0 {
		loc = append(loc, "paragraph "+strconv.Itoa(r.Paragraph))
	}
	if len(loc) == 0 && r.Location != "" {
		loc = append(loc, r.Location)
	}
	if r.Label != "" {
		loc = append(loc, strconv.Quote(r.Label))
	}
	s := name
	if len(loc) > 0 {
		s += ", " + strings.Join(loc, ", ")
	}
	if h.FileID != "" {
		s += " (file id " + h.FileID + ")"
	}
	return s
}

// Assembly is an assembled context.
type Assembly struct {
	// Text is the context message's content; empty when nothing fit.
	Text string
	// Tokens is Text's length in the model's tokens (at most the budget).
	Tokens int
	// Placed parts (whole or cut), of which Truncated were cut; Dropped
	// were left out for space.
	Placed, Truncated, Dropped int
	// Sources are the chunks placed, in citation order: Sources[0] is [1].
	Sources []kindex.Hit
}

// Tokens of a cut part's note and of the closing note on what was left out,
// reserved before they are written; a part is cut only if at least
// minCutTokens of it can be shown.
const (
	cutNoteTokens  = 24
	omitNoteTokens = 40
	minCutTokens   = 48
)

// Assemble fits parts into budget tokens of model's tokenizer: parts are
// placed by priority (stable within one), each under its section's heading;
// the first part that does not fit whole is cut to the room left, with a
// note of how much is shown, when at least minCutTokens of it fit, and it
// and every part after it are otherwise left out, so the lowest priorities go
// first. What was left out is named in a closing line.
func Assemble(model string, budget int, parts []Part) Assembly {
	parts = slices.Clone(parts)
	slices.SortStableFunc(parts, func(a, b Part) int { return int(a.Priority - b.Priority) })
	tok := func(s string) int { return llm.CountTokens(model, s) }
	room := budget - tok(contextIntro)
	if len(parts) == 0 || room <= 0 {
		return Assembly{Dropped: len(parts)}
	}
	render := func(p Part, n int, text string) string {
		switch {
		case p.Cite != "":
			return "[" + strconv.Itoa(n) + "] " + p.Cite + "\n" + text + "\n"
		case p.Priority == PrioritySummary:
			return text + "\n"
		}
		return "- " + text + "\n"
	}
	heading := func(p Priority) string { return "\n## " + sectionTitle[p].title + "\n" }

	// A part's cost is its frame's and its text's (each text is counted
	// once: counting is most of the assembly's time); the final check below
	// mends the odd token a seam between them may differ by.
	textTokens := make([]int, len(parts))
	cost := func(i, n int) int { return tok(render(parts[i], n, "")) + textTokens[i] }
	// Reserve room for the closing note only when not everything fits.
	total := 0
	last := Priority(0)
	for i, p := range parts {
		textTokens[i] = tok(p.Text)
		if p.Priority != last {
			total += tok(heading(p.Priority))
			last = p.Priority
		}
		total += cost(i, i+1)
	}
	if total > room {
		room -= omitNoteTokens
	}

	var out []placed
	var a Assembly
	dropped := map[Priority]int{}
	last = 0
	full := false
	for i, p := range parts {
		if full {
			dropped[p.Priority]++
			continue
		}
		head := ""
		if p.Priority != last {
			head = heading(p.Priority)
		}
		n := len(a.Sources) + 1
		body := render(p, n, p.Text)
		c := tok(head) + cost(i, n)
		if c > room {
			// Cut to what is left, saying so, or leave it and the rest out.
			avail := room - tok(head) - tok(render(p, n, "")) - cutNoteTokens
			if avail < minCutTokens {
				full = true
				dropped[p.Priority]++
				continue
			}
			shown := TruncateTokens(model, p.Text, avail)
			body = render(p, n, shown+fmt.Sprintf(" …[cut for space: %d of %d tokens shown]", tok(shown), textTokens[i]))
			c = tok(head) + tok(body)
			a.Truncated++
			full = true
		}
		room -= c
		out = append(out, placed{p, head, body})
		last = p.Priority
		if p.Hit != nil {
			a.Sources = append(a.Sources, *p.Hit)
		}
	}

	// Counting parts one by one can differ from counting their
	// concatenation by a token at a seam: the last parts give way until the
	// whole fits.
	for {
		a.Text = finish(out, dropped)
		a.Tokens = tok(a.Text)
		if a.Tokens <= budget || len(out) == 0 {
			break
		}
		last := out[len(out)-1]
		out = out[:len(out)-1]
		dropped[last.part.Priority]++
		if last.part.Hit != nil {
			a.Sources = a.Sources[:len(a.Sources)-1]
		}
		if strings.Contains(last.body, "…[cut for space:") {
			a.Truncated--
		}
	}
	a.Placed = len(out)
	a.Dropped = 0
	for _, n := range dropped {
		a.Dropped += n
	}
	if a.Placed == 0 {
		return Assembly{Dropped: a.Dropped}
	}
	return a
}

// finish writes the context text: the introduction, the placed parts and a
// closing line naming what was left out.
func finish(out []placed, dropped map[Priority]int) string {
	var b strings.Builder
	b.WriteString(contextIntro)
	for _, pl := range out {
		b.WriteString(pl.head)
		b.WriteString(pl.body)
	}
	var omitted []string
	for _, pr := range []Priority{PriorityPrompt, PriorityInstance, PriorityEntities, PriorityShared, PrioritySummary, PriorityToolResults} {
		if n := dropped[pr]; n > 0 {
			omitted = append(omitted, strconv.Itoa(n)+" "+sectionTitle[pr].noun)
		}
	}
	if len(omitted) > 0 {
		b.WriteString("\n(Left out for space: " + strings.Join(omitted, ", ") + ".)\n")
	}
	return b.String()
}

// placed is a part as the context shows it: its section's heading (for
// the first of a section) and its text, whole or cut.
type placed struct {
	part Part
	head string
	body string
}

// TruncateTokens returns the longest prefix of text, cut at a character
// boundary and preferably after a space, of at most n tokens.
func TruncateTokens(model, text string, n int) string {
	if n <= 0 {
		return ""
	}
	if llm.CountTokens(model, text) <= n {
		return text
	}
	lo, hi := 0, len(text) // tokens(text[:lo]) <= n < tokens(text[:hi])
	for hi-lo > 1 {
		mid := (lo + hi) / 2
		if llm.CountTokens(model, text[:mid]) <= n {
			lo = mid
		} else {
			hi = mid
		}
	}
	for lo > 0 && !utf8.RuneStart(text[lo]) {
		lo--
	}
	cut := text[:lo]
	// End at a word boundary when one is near: a cut word misleads more
	// than a shorter excerpt.
	if i := strings.LastIndexFunc(cut, unicode.IsSpace); i > len(cut)*4/5 {
		cut = cut[:i]
	}
	return strings.TrimRightFunc(cut, unicode.IsSpace)
}
