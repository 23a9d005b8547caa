package neutralize

import (
	"regexp"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"
)

// A name is found by its cues, not by a model: a title before it (Herr,
// Frau, Dr., Mr, Mme, …), a salutation ("Liebe Anna", "Dear Mr Brown"), a
// closing line above it (the signature), a field label ("Name:", "Von:"),
// a known given name before a capitalised word, an initial ("P. Keller").
// Every surname and given name found so is then also taken wherever else
// it stands in the text.

// token is a word of the text.
type token struct {
	text       string
	start, end int
	// lineStart: the first word of its line; sep: the characters between
	// the previous word and this one.
	lineStart bool
	sep       string
}

func isWordRune(r rune) bool {
	return unicode.IsLetter(r) || r == '\'' || r == '’' || r == '-'
}

func tokenize(text string) []token {
	var out []token
	prevEnd := 0
	line := true
	for i := 0; i < len(text); {
		r, n := utf8.DecodeRuneInString(text[i:])
		if !unicode.IsLetter(r) {
			if r == '\n' {
				line = true
			}
			i += n
			continue
		}
		j := i
		for j < len(text) {
			r2, n2 := utf8.DecodeRuneInString(text[j:])
			if !isWordRune(r2) && !unicode.IsDigit(r2) {
				break
			}
			j += n2
		}
		// Trailing hyphens and apostrophes are not part of the word, nor
		// is an English possessive ("Aisha's").
		for j > i && strings.ContainsAny(text[j-1:j], "-'") {
			j--
		}
		if w := text[i:j]; strings.HasSuffix(w, "'s") || strings.HasSuffix(w, "’s") {
			j -= len("s") + len(w[:len(w)-1]) - len(strings.TrimRight(w[:len(w)-1], "'’"))
		}
		out = append(out, token{text: text[i:j], start: i, end: j, lineStart: line, sep: text[prevEnd:i]})
		line = false
		prevEnd = j
		i = j
		if i == j && n == 0 {
			i++
		}
	}
	return out
}

// capitalised: an upper-case first letter and not all upper case (AG, UBS,
// IBAN are no names); a single letter is an initial, not a name.
func capitalised(w string) bool {
	r, n := utf8.DecodeRuneInString(w)
	if !unicode.IsUpper(r) || n == len(w) {
		return false
	}
	for _, c := range w[n:] {
		if unicode.IsLower(c) {
			return true
		}
	}
	return false
}

func upperWord(w string) bool {
	if utf8.RuneCountInString(w) < 2 {
		return false
	}
	for _, c := range w {
		if unicode.IsLetter(c) && !unicode.IsUpper(c) {
			return false
		}
	}
	return true
}

// nameWord: a word that may be part of a name. allCaps admits upper-case
// surnames ("DUPONT Jean" in French forms) where a cue vouches for them.
func nameWord(w string, allCaps bool) bool {
	if notNames[w] || titles[w] || salutations[w] || companyWords[w] {
		return false
	}
	if capitalised(w) {
		return true
	}
	return allCaps && upperWord(w) && utf8.RuneCountInString(w) >= 3 && !notNames[w]
}

// only a space (or nothing) between two words of one name.
func joined(sep string) bool { return sep == " " || sep == "" || sep == "\u00a0" }

// nameSeq reads a name starting at token i: name words (and particles
// between them) on one line, separated by single spaces, at most four
// words. It returns the index after the name, or i if there is none.
func nameSeq(toks []token, i int, allCaps bool) int {
	j := i
	words := 0
	for j < len(toks) && words < 4 {
		t := toks[j]
		if j > i && (!joined(t.sep) || t.lineStart) {
			break
		}
		if j > i && particles[t.text] && j+1 < len(toks) && joined(toks[j+1].sep) && !toks[j+1].lineStart && nameWord(toks[j+1].text, allCaps) {
			j++
			continue
		}
		if !nameWord(t.text, allCaps) {
			break
		}
		j++
		words++
	}
	if words == 0 {
		return i
	}
	return j
}

// isInitial: "P." before a surname.
func isInitial(toks []token, text string, i int) bool {
	t := toks[i]
	r, n := utf8.DecodeRuneInString(t.text)
	return n == len(t.text) && unicode.IsUpper(r) && t.end < len(text) && text[t.end] == '.'
}

// nameCandidate is a name found in the text, as token indexes [from, to).
type nameCandidate struct{ from, to int }

// handleRE: a user handle made of a name ("ben.kessler", "yasmin_okafor").
var handleRE = regexp.MustCompile(`^[a-z]+[._][a-z]+$`)

func findNameCandidates(text string, toks []token) ([]nameCandidate, [][2]int) {
	var out []nameCandidate
	var handles [][2]int
	covered := make([]bool, len(toks))
	add := func(from, to int) {
		if to <= from {
			return
		}
		for k := from; k < to; k++ {
			if covered[k] {
				return
			}
		}
		for k := from; k < to; k++ {
			covered[k] = true
		}
		out = append(out, nameCandidate{from, to})
	}
	lower := strings.ToLower(text)
	for i := 0; i < len(toks); i++ {
		t := toks[i]
		switch {
		case isTitle(t.text) && (t.text != "M" || (t.end < len(text) && text[t.end] == '.')):
			// Titles and degrees may repeat: "Herr Dr. med. Peter Frei".
			j := i + 1
			for j < len(toks) && (isTitle(toks[j].text) || degrees[toks[j].text]) && !toks[j].lineStart {
				j++
			}
			if j < len(toks) && !toks[j].lineStart && nearby(toks[j].sep) {
				if isInitial(toks, text, j) && j+1 < len(toks) {
					if e := nameSeq(toks, j+1, true); e > j+1 {
						add(j, e)
						i = e - 1
						continue
					}
				}
				if e := nameSeq(toks, j, true); e > j {
					add(j, e)
					i = e - 1
				}
			}
		case salutations[t.text] && i+1 < len(toks) && !toks[i+1].lineStart && nearby(toks[i+1].sep):
			if titles[toks[i+1].text] {
				continue // the title case takes it
			}
			if e := nameSeq(toks, i+1, false); e > i+1 {
				add(i+1, e)
				i = e - 1
			}
		case t.lineStart:
			// A field label: "Name: Anna Meier", "Von: Anna Meier <…>", with
			// several names separated by commas or "und"/"and"/"et".
			if end, ok := labelAt(lower, t.start); ok {
				j := i
				for j < len(toks) && toks[j].start < end {
					j++
				}
				names, paren := 0, false
				for j < len(toks) && !toks[j].lineStart {
					if strings.Contains(toks[j].sep, "(") {
						paren = true
					}
					if strings.Contains(toks[j].sep, ")") {
						paren = false
					}
					if paren || titles[toks[j].text] || degrees[toks[j].text] {
						j++
						continue
					}
					if isInitial(toks, text, j) && j+1 < len(toks) {
						if e := nameSeq(toks, j+1, true); e > j+1 {
							add(j, e)
							names++
							j = e
							continue
						}
					}
					// After the first name, a single word is more often a
					// role ("Anna Meier, Head of Logistics") than a name.
					if e := nameSeq(toks, j, true); e > j && !companyAfter(toks, text, e) && !companyBefore(toks, j) && (names == 0 || e-j >= 2 || isGiven(toks[j].text, false)) {
						add(j, e)
						names++
						j = e
						continue
					}
					j++
				}
				i = j - 1
			}
		}
	}
	// Chats: who speaks on a line. A handle ("ben.kessler") is a name too.
	for _, r := range speakers(text) {
		var from, to int = -1, -1
		for k, t := range toks {
			if t.start >= r[0] && t.end <= r[1] {
				if from < 0 {
					from = k
				}
				to = k + 1
			}
		}
		if from < 0 || notNames[toks[from].text] || companyWords[toks[from].text] {
			continue
		}
		if handle := text[r[0]:r[1]]; handleRE.MatchString(handle) {
			handles = append(handles, r)
			continue
		}
		if e := nameSeq(toks, from, true); e == to {
			add(from, to)
		}
	}
	// Tables: the first column under a header that names people.
	for _, r := range nameColumnCells(text) {
		var from, to int = -1, -1
		for k, t := range toks {
			if t.start >= r[0] && t.end <= r[1] {
				if from < 0 {
					from = k
				}
				to = k + 1
			}
		}
		if from < 0 {
			continue
		}
		// A surname may open with a particle ("Da Silva Rui"), and a
		// remark in parentheses may follow ("Ruppen Noemi (Lernende)").
		start := from
		if particles[strings.ToLower(toks[from].text)] && from+1 < to {
			start = from + 1
		}
		e := nameSeq(toks, start, true)
		if e > start && e-from <= 4 && (e == to || strings.Contains(toks[e].sep, "(")) {
			add(from, e)
		}
	}
	// Signatures: the line after a closing (blank lines skipped), or the
	// rest of the closing's own line after a comma.
	for _, c := range closingLines(lower) {
		for i, t := range toks {
			if t.start < c.nameFrom {
				continue
			}
			if t.start >= c.nameTo {
				break
			}
			j := i
			for j < len(toks) && toks[j].start < c.nameTo && (titles[toks[j].text] || degrees[toks[j].text]) {
				j++
			}
			if j < len(toks) && toks[j].start < c.nameTo {
				if isInitial(toks, text, j) && j+1 < len(toks) {
					if e := nameSeq(toks, j+1, true); e > j+1 && toks[e-1].end <= c.nameTo {
						add(j, e)
						break
					}
				}
				if e := nameSeq(toks, j, true); e > j && toks[e-1].end <= c.nameTo && !companyAfter(toks, text, e) {
					// The whole line is the name (a department or a company is not).
					if strings.TrimSpace(strings.Trim(text[toks[e-1].end:c.nameTo], ".,;")) == "" || e-j >= 2 {
						add(j, e)
					}
				}
			}
			break
		}
	}
	// Given names: a known given name and the capitalised words after it;
	// alone, one that is not also a word. Initials: "P. Keller".
	for i := 0; i < len(toks); i++ {
		if covered[i] {
			continue
		}
		t := toks[i]
		if isGiven(t.text, true) {
			if i+1 < len(toks) && !covered[i+1] && !toks[i+1].lineStart && joined(toks[i+1].sep) {
				if e := nameSeq(toks, i+1, true); e > i+1 && !companyAfter(toks, text, e) {
					add(i, e)
					i = e - 1
					continue
				}
			}
			var prev *token
			if i > 0 {
				prev = &toks[i-1]
			}
			if isGiven(t.text, false) || (midSentence(text, t, prev) && !ambiguousGiven[t.text] && !companyBefore(toks, i)) ||
				(t.lineStart && strings.HasPrefix(text[t.end:], ":")) {
				add(i, i+1)
			}
			continue
		}
		// A relation before a name: "meinem Bruder Dario", "my colleague Sam".
		if relations[strings.ToLower(t.text)] && i+1 < len(toks) && !covered[i+1] && !toks[i+1].lineStart && joined(toks[i+1].sep) {
			if e := nameSeq(toks, i+1, false); e > i+1 {
				add(i+1, e)
				i = e - 1
				continue
			}
		}
		if isInitial(toks, text, i) && i+1 < len(toks) && !covered[i+1] && !toks[i+1].lineStart && toks[i+1].sep == ". " && givenOrCapitalisedSurname(toks[i+1].text) {
			if e := nameSeq(toks, i+1, false); e > i+1 && e-(i+1) <= 2 {
				add(i, e)
				i = e - 1
			}
		}
	}
	return out, handles
}

// isGiven: a known given name, or a compound of them ("Jean-Luc",
// "Anna-Lena"); ambiguous ones count when allowAmbiguous.
func isGiven(w string, allowAmbiguous bool) bool {
	known := func(p string) bool {
		return givenNames[p] || (allowAmbiguous && (ambiguousGiven[p] || (capitalised(p) && !notNames[p] && listedGiven()[strings.ToLower(p)])))
	}
	if known(w) {
		return true
	}
	parts := strings.Split(w, "-")
	if len(parts) < 2 {
		return false
	}
	for _, p := range parts {
		if !givenNames[p] && !ambiguousGiven[p] {
			return false
		}
	}
	return true
}

func givenOrCapitalisedSurname(w string) bool { return capitalised(w) && !notNames[w] && !titles[w] }

// isTitle: a title, or one written in capitals in an upper-case heading
// ("REFERENCE FOR MS …").
func isTitle(w string) bool {
	if titles[w] {
		return true
	}
	if upperWord(w) {
		r := []rune(strings.ToLower(w))
		r[0] = unicode.ToUpper(r[0])
		return titles[string(r)] && len(r) >= 2
	}
	return false
}

// companyAfter: the words at e make the name before them a company's
// ("Helvetic Events GmbH", "Price & Partners").
func companyAfter(toks []token, text string, e int) bool {
	// A company's form may come a few words later ("Landis Systems AG").
	for k := e; k < len(toks) && k < e+3 && !toks[k].lineStart && joined(toks[k].sep); k++ {
		if companyWords[toks[k].text] {
			return true
		}
	}
	if e > 0 {
		rest := strings.TrimLeft(text[toks[e-1].end:], " ")
		return strings.HasPrefix(rest, "&")
	}
	return false
}

// companyBefore: a company word or a trade ("Glaserei", "-erei") right
// before the word makes it part of a company's name.
func companyBefore(toks []token, i int) bool {
	if i == 0 || !joined(toks[i].sep) || toks[i].lineStart {
		return false
	}
	p := toks[i-1].text
	return companyWords[p] || strings.HasSuffix(p, "erei")
}

// nearby: the name follows its cue after a space, a dot and a space
// ("Dr. Frei"), or nothing else than that.
func nearby(sep string) bool {
	s := strings.TrimLeft(sep, ".")
	return s == " " || s == "\u00a0"
}

// labelAt reports whether a field label starts the line at offset and
// returns where the value after its colon begins.
func labelAt(lower string, offset int) (int, bool) {
	rest := lower[offset:]
	// "Name, Vorname:": a short label with a person word in it.
	if c := strings.IndexAny(rest, ":\n"); c > 0 && c <= 32 && rest[c] == ':' {
		for _, w := range strings.FieldsFunc(rest[:c], func(r rune) bool { return !unicode.IsLetter(r) }) {
			if labelWords[w] {
				return offset + c + 1, true
			}
		}
	}
	for _, l := range labels {
		if !strings.HasPrefix(rest, l) {
			continue
		}
		after := rest[len(l):]
		trimmed := strings.TrimLeft(after, " \t")
		if strings.HasPrefix(trimmed, ":") {
			return offset + len(l) + (len(after) - len(trimmed)) + 1, true
		}
	}
	return 0, false
}

type closingLine struct{ nameFrom, nameTo int }

// closingsLongestFirst: "best regards" is tried before "best".
var closingsLongestFirst = func() []string {
	out := append([]string(nil), closings...)
	sort.SliceStable(out, func(i, j int) bool { return len(out[i]) > len(out[j]) })
	return out
}()

// closingLines finds the lines a closing stands alone on (with a comma at
// most) and returns where the name after it is: the rest of the line after
// a comma, or the next non-blank line.
func closingLines(lower string) []closingLine {
	var out []closingLine
	pos := 0
	lines := strings.SplitAfter(lower, "\n")
	for li, line := range lines {
		start := pos
		pos += len(line)
		content := strings.TrimSpace(line)
		if endsWithClosing(content) {
			next := pos
			for _, l := range lines[li+1:] {
				if strings.TrimSpace(l) != "" {
					out = append(out, closingLine{nameFrom: next, nameTo: next + len(strings.TrimRight(l, "\n"))})
					break
				}
				next += len(l)
			}
			continue
		}
		for _, c := range closingsLongestFirst {
			if !strings.HasPrefix(content, c) {
				continue
			}
			if r, _ := utf8.DecodeRuneInString(content[len(c):]); unicode.IsLetter(r) {
				continue // "Bestellung" does not close a letter
			}
			rest := strings.TrimSpace(content[len(c):])
			rest = strings.TrimLeft(rest, ",!.")
			rest = strings.TrimSpace(rest)
			if rest != "" {
				// "Gruss, Peter": the name on the same line.
				idx := strings.Index(line, c) + len(c)
				out = append(out, closingLine{nameFrom: start + idx, nameTo: start + len(strings.TrimRight(line, "\n"))})
				break
			}
			next := pos
			for _, l := range lines[li+1:] {
				if strings.TrimSpace(l) != "" {
					out = append(out, closingLine{nameFrom: next, nameTo: next + len(strings.TrimRight(l, "\n"))})
					break
				}
				next += len(l)
			}
			break
		}
	}
	return out
}

// closingEnds end the long closing sentences of French (and formal German
// and English) letters: "… mes salutations distinguées."
var closingEnds = []string{"salutations distinguées", "salutations les meilleures", "meilleures salutations", "sentiments distingués",
	"sentiments les meilleurs", "salutations", "grüsse", "grüssen", "grüße", "grüßen", "regards", "saluti", "sincerely", "faithfully"}

func endsWithClosing(line string) bool {
	l := strings.TrimRight(line, ".!, ")
	for _, e := range closingEnds {
		if strings.HasSuffix(l, e) && len(strings.Fields(l)) > len(strings.Fields(e)) {
			return true
		}
	}
	return false
}

// cellSep splits a table row: a tab, a semicolon, a bar, or two spaces.
var cellSep = regexp.MustCompile(`\t|;|\||\s{2,}`)

// nameColumnCells returns the first cells [start, end) of the rows under a
// header whose first cell names people ("Name", "Mitarbeiter/in",
// "employee"), up to the next blank line.
func nameColumnCells(text string) [][2]int {
	var out [][2]int
	pos := 0
	inTable := false
	for _, line := range strings.SplitAfter(text, "\n") {
		start := pos
		pos += len(line)
		content := strings.TrimRight(line, "\n")
		if strings.TrimSpace(content) == "" {
			inTable = false
			continue
		}
		lead := len(content) - len(strings.TrimLeft(content, " "))
		cell := content[lead:]
		if loc := cellSep.FindStringIndex(cell); loc != nil {
			cell = cell[:loc[0]]
		} else if !inTable {
			continue
		}
		if !inTable {
			inTable = nameColumns[strings.ToLower(strings.TrimRight(strings.TrimSpace(cell), ":"))]
			continue
		}
		out = append(out, [2]int{start + lead, start + lead + len(cell)})
	}
	return out
}

// midSentence: the word does not open a line or a sentence, where any
// word is capitalised; a capitalised given name there is a name.
func midSentence(text string, t token, prev *token) bool {
	if t.lineStart {
		return false
	}
	if prev != nil && placeWords[strings.ToLower(prev.text)] && joined(t.sep) {
		return false
	}
	before := strings.TrimRight(text[:t.start], " \t\u00a0\"«(„“")
	if before == "" {
		return false
	}
	switch c := before[len(before)-1]; {
	case c == '.', c == '!', c == '?', c == ':', c == '\n', c == '-', c == '*', c >= '0' && c <= '9':
		return false
	}
	return true
}

// speakerRE: the speaker of a chat line: "[12.04.25, 08:14] Reto Caduff:",
// "[09:01] ben.kessler:", "Mo 16.06., 18:12 – Mike:".
var speakerRE = regexp.MustCompile(`(?m)^(?:\[[^\]\n]{3,30}\]|[^\n]{0,20}\d{1,2}[:.]\d{2}\s*[–—-])\s*([\p{L}][\p{L}.\-_' ]{0,40}?):\s`)

// speakers returns the speaker spans of chat lines.
func speakers(text string) [][2]int {
	var out [][2]int
	for _, m := range speakerRE.FindAllStringSubmatchIndex(text, -1) {
		out = append(out, [2]int{m[2], m[3]})
	}
	return out
}
