// Package neutralize replaces personal data in text by placeholders: the
// legacy action context.neutralizeData without a model.
// It finds e-mail addresses, IBANs (mod-97 checked), Swiss AHV numbers
// (EAN-13 check digit), phone numbers (Swiss and international formats)
// and person names (by cues: titles, salutations, signatures, field labels,
// known given names, initials; see names.go). Each distinct value gets one
// placeholder, [NAME_1], [EMAIL_2], …, the same wherever and in whichever
// document of one Neutralizer it appears, so a neutralized text still says
// who wrote to whom.
package neutralize

import (
	"fmt"
	"sort"
	"strings"
)

// Kind is a category of personal data.
type Kind string

// The kinds, as their placeholders name them.
const (
	Name  Kind = "NAME"
	Email Kind = "EMAIL"
	IBAN  Kind = "IBAN"
	AHV   Kind = "AHV"
	Phone Kind = "PHONE"
)

// Kinds lists every kind, in the order they are looked for.
var Kinds = []Kind{Email, IBAN, AHV, Phone, Name}

// Span is a piece of personal data in a text: [Start, End) in bytes.
type Span struct {
	Start, End int
	Kind       Kind
	// Placeholder is what replaces it ([NAME_1]); set by Neutralizer.
	Placeholder string
}

// Entry is one placeholder and the values it stands for.
type Entry struct {
	Placeholder string   `json:"placeholder"`
	Kind        Kind     `json:"kind"`
	Values      []string `json:"values"`
}

// Neutralizer replaces personal data with numbered placeholders that stay
// the same across the texts it is given. It is not safe for concurrent use.
type Neutralizer struct {
	kinds   map[Kind]bool
	count   map[Kind]int
	byValue map[string]*entry // kind + normalised value → entry
	people  []*person
	entries []*entry
}

type entry struct {
	Entry
	seen map[string]bool
}

// person is a name entity: its given name and surname as far as known.
type person struct {
	given, surname string
	e              *entry
}

// New returns a Neutralizer for the given kinds (none: every kind).
func New(kinds ...Kind) *Neutralizer {
	n := &Neutralizer{kinds: map[Kind]bool{}, count: map[Kind]int{}, byValue: map[string]*entry{}}
	if len(kinds) == 0 {
		kinds = Kinds
	}
	for _, k := range kinds {
		n.kinds[k] = true
	}
	return n
}

// Find returns the personal data in text, sorted, without overlaps. It
// assigns no placeholders.
func Find(text string, kinds ...Kind) []Span {
	want := map[Kind]bool{}
	if len(kinds) == 0 {
		kinds = Kinds
	}
	for _, k := range kinds {
		want[k] = true
	}
	// Each detector runs on the text with what earlier ones found blanked
	// out, so a phone number is never read inside an IBAN.
	work := []byte(text)
	var found []Span
	blank := func(spans []Span) {
		for _, s := range spans {
			if overlapsAny(found, s) {
				continue
			}
			found = append(found, s)
			for i := s.Start; i < s.End; i++ {
				if work[i] != '\n' {
					work[i] = '#'
				}
			}
		}
	}
	if want[Email] {
		blank(findEmails(string(work)))
	}
	if want[IBAN] {
		blank(findIBANs(string(work)))
	}
	if want[AHV] {
		blank(findAHV(string(work)))
	}
	if want[Phone] {
		blank(findPhones(string(work)))
	}
	if want[Name] {
		blank(findNames(string(work)))
	}
	sort.Slice(found, func(i, j int) bool { return found[i].Start < found[j].Start })
	return found
}

func overlapsAny(spans []Span, s Span) bool {
	for _, o := range spans {
		if s.Start < o.End && o.Start < s.End {
			return true
		}
	}
	return false
}

// findNames turns name candidates into spans, then takes every other
// occurrence of their words (a surname alone, a given name alone).
func findNames(text string) []Span {
	toks := tokenize(text)
	cands, handles := findNameCandidates(text, toks)
	var out []Span
	known := map[string]bool{}
	for _, h := range handles {
		out = append(out, Span{Start: h[0], End: h[1], Kind: Name})
		for _, part := range strings.FieldsFunc(text[h[0]:h[1]], func(r rune) bool { return r == '.' || r == '_' }) {
			if len(part) >= 3 {
				known[part] = true
			}
		}
	}
	inCand := map[int]bool{}
	for _, c := range cands {
		out = append(out, Span{Start: toks[c.from].start, End: toks[c.to-1].end, Kind: Name})
		for k := c.from; k < c.to; k++ {
			inCand[k] = true
			w := toks[k].text
			// An ambiguous given name ("Beat", "Mark") is taken elsewhere
			// only when the text used it with a surname.
			if len([]rune(w)) >= 3 && !particles[w] && (!ambiguousGiven[w] || c.to-c.from >= 2) {
				known[strings.ToLower(w)] = true
			}
		}
	}
	for i, t := range toks {
		if inCand[i] || !known[strings.ToLower(t.text)] || !(capitalised(t.text) || upperWord(t.text)) {
			continue
		}
		if companyAfter(toks, text, i+1) || companyBefore(toks, i) {
			continue
		}
		// Extend over adjacent known words ("Meier Anna" in a list).
		j := i + 1
		for j < len(toks) && known[strings.ToLower(toks[j].text)] && !inCand[j] && joined(toks[j].sep) && !toks[j].lineStart {
			j++
		}
		out = append(out, Span{Start: t.start, End: toks[j-1].end, Kind: Name})
		for k := i; k < j; k++ {
			inCand[k] = true
		}
	}
	return out
}

// Neutralize replaces the personal data in text by placeholders and
// returns the new text and the spans replaced (offsets in text).
func (n *Neutralizer) Neutralize(text string) (string, []Span) {
	var kinds []Kind
	for _, k := range Kinds {
		if n.kinds[k] {
			kinds = append(kinds, k)
		}
	}
	spans := Find(text, kinds...)
	// Names are numbered per person: the surname alone and the full name
	// get one placeholder. Full names are registered first, so a surname
	// that comes before its full name still finds its person.
	order := make([]int, len(spans))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool {
		return len(strings.Fields(text[spans[order[a]].Start:spans[order[a]].End])) > len(strings.Fields(text[spans[order[b]].Start:spans[order[b]].End]))
	})
	ents := make([]*entry, len(spans))
	for _, i := range order {
		ents[i] = n.entryFor(spans[i].Kind, text[spans[i].Start:spans[i].End])
	}
	// Numbers follow the order of first appearance.
	for i := range spans {
		e := ents[i]
		if e.Placeholder == "" {
			n.count[e.Kind]++
			e.Placeholder = fmt.Sprintf("[%s_%d]", e.Kind, n.count[e.Kind])
		}
		spans[i].Placeholder = e.Placeholder
	}
	var b strings.Builder
	last := 0
	for _, s := range spans {
		b.WriteString(text[last:s.Start])
		b.WriteString(s.Placeholder)
		last = s.End
	}
	b.WriteString(text[last:])
	return b.String(), spans
}

// Mapping lists the placeholders handed out so far and what they replaced.
// It undoes the neutralization: whoever gets it gets the personal data.
func (n *Neutralizer) Mapping() []Entry {
	out := make([]Entry, 0, len(n.entries))
	for _, e := range n.entries {
		if e.Placeholder != "" {
			out = append(out, e.Entry)
		}
	}
	// By kind, then by number: [NAME_1], [NAME_2], …, [EMAIL_1], …
	rank := map[Kind]int{}
	for i, k := range Kinds {
		rank[k] = i
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Kind != out[j].Kind {
			return rank[out[i].Kind] < rank[out[j].Kind]
		}
		return len(out[i].Placeholder) < len(out[j].Placeholder) || (len(out[i].Placeholder) == len(out[j].Placeholder) && out[i].Placeholder < out[j].Placeholder)
	})
	return out
}

// newEntry makes an entry; Neutralize numbers it where it first appears.
func (n *Neutralizer) newEntry(k Kind) *entry {
	e := &entry{Entry: Entry{Kind: k}, seen: map[string]bool{}}
	n.entries = append(n.entries, e)
	return e
}

func (e *entry) add(v string) {
	if !e.seen[v] {
		e.seen[v] = true
		e.Values = append(e.Values, v)
	}
}

func (n *Neutralizer) entryFor(k Kind, value string) *entry {
	if k == Name {
		return n.personFor(value)
	}
	key := string(k) + "|" + normalise(k, value)
	e, ok := n.byValue[key]
	if !ok {
		e = n.newEntry(k)
		n.byValue[key] = e
	}
	e.add(value)
	return e
}

func normalise(k Kind, v string) string {
	switch k {
	case Email:
		return strings.ToLower(strings.NewReplacer(" ", "", "(at)", "@", "[at]", "@", "(AT)", "@", "[AT]", "@").Replace(v))
	case IBAN, AHV:
		return strings.ToUpper(strings.ReplaceAll(strings.ReplaceAll(v, " ", ""), ".", ""))
	case Phone:
		d := digits(strings.Replace(v, "(0)", "", 1))
		// +41 44 … and 044 … are one number.
		switch {
		case strings.HasPrefix(v, "+41") || strings.HasPrefix(v, "0041"):
			d = "0" + strings.TrimPrefix(strings.TrimPrefix(d, "0041"), "41")
		}
		return d
	}
	return v
}

// personFor finds or makes the person a name mention stands for: a full
// name ("Anna Meier") is its given name and surname, one word is a surname
// (or a given name, when a known person has it as such).
func (n *Neutralizer) personFor(value string) *entry {
	words := strings.Fields(value)
	var given, surname string
	switch {
	case len(words) == 1 && givenNames[words[0]]:
		given = words[0]
	case len(words) == 1:
		surname = words[0]
	default:
		given, surname = words[0], strings.Join(words[1:], " ")
		if len([]rune(strings.TrimSuffix(given, "."))) == 1 {
			given = "" // an initial
		}
	}
	var p *person
	for _, q := range n.people {
		switch {
		case surname != "" && given != "" && q.surname == surname && (q.given == "" || q.given == given):
			p = q
		case surname != "" && given == "" && (q.surname == surname || lastWord(q.surname) == surname):
			p = q
		case surname == "" && given != "" && (q.given == given || (q.given == "" && q.surname == given)):
			p = q
		}
		if p != nil {
			break
		}
	}
	if p == nil && surname == "" {
		// A word taken as a given name may be someone's surname.
		for _, q := range n.people {
			if q.surname == given || lastWord(q.surname) == given {
				p = q
				break
			}
		}
	}
	if p == nil {
		p = &person{e: n.newEntry(Name)}
		n.people = append(n.people, p)
	}
	if p.given == "" {
		p.given = given
	}
	if p.surname == "" {
		p.surname = surname
	}
	p.e.add(value)
	return p.e
}

func lastWord(s string) string {
	f := strings.Fields(s)
	if len(f) == 0 {
		return ""
	}
	return f[len(f)-1]
}
