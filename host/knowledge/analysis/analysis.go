// Package analysis turns text into the terms of the lexical index, the same
// way for documents and for queries and for both databases: Unicode
// normalisation (NFKC, case folding, ß as ss), accents folded where the
// language allows it, Snowball stems by language, German compounds split by
// a dictionary, Korean particles stripped, and scripts written without spaces
// (Chinese, Japanese, Thai, Lao, Khmer, Myanmar) cut into character bigrams.
//
// A chunk is analysed into three fields (Fields): the exact forms, the
// stems that differ from them and the parts (compound parts, single CJK
// characters). The store indexes each field as a column, weighted exact over
// stems over parts, and looks each query word up by all its forms in all
// three, so that the form a user typed ranks above its inflections and a
// compound's part finds the compound but below the word itself.
package analysis

import (
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/abadojack/whatlanggo"
	"github.com/blevesearch/snowballstem"
	"golang.org/x/text/cases"
	"golang.org/x/text/unicode/norm"
)

// Version is the version of the analysis. Chunks analysed by an older one
// are analysed again when the store migrates (bump it whenever a change
// here changes any chunk's terms: a new language, a new rule).
const Version = 1

// Fields is a text analysed for the lexical index: space-separated terms.
type Fields struct {
	// Lang is the ISO 639-1 code the text was analysed as ("" when its
	// language is not known).
	Lang string
	// Exact holds the normalised forms of the words (CJK bigrams).
	Exact string
	// Stems holds the stems that differ from their exact form (Korean
	// words without their particles).
	Stems string
	// Parts holds the stems of German compounds' parts and single CJK
	// characters.
	Parts string
}

// Term is one word of a query with the forms it is looked up by: a chunk
// matches the term when any of its forms is in any of its fields (the
// fields' weights rank the matches).
type Term struct {
	Exact []string // the word's normalised forms
	Stems []string // its stems
}

// Forms are the term's exact forms and stems, each once.
func (t Term) Forms() []string {
	out := append([]string(nil), t.Exact...)
	for _, s := range t.Stems {
		out = appendNew(out, s)
	}
	return out
}

// Analyzer analyses texts. It is safe for concurrent use; the German
// dictionary is read the first time a German text needs it.
type Analyzer struct {
	nounsOnce sync.Once
	nouns     map[string]struct{}
	nounsErr  error
}

// New returns an analyzer.
func New() *Analyzer { return &Analyzer{} }

// Detect returns the ISO 639-1 code of the text's language, or "" when the
// detection is not reliable (short or mixed texts).
func (a *Analyzer) Detect(text string) string {
	if len(text) > 1024 {
		// The start of a chunk tells its language as well as the whole
		// (the detector's cost grows with the text: half an analysis).
		cut := 1024
		for cut > 0 && !utf8.RuneStart(text[cut]) {
			cut--
		}
		text = text[:cut]
	}
	info := whatlanggo.Detect(text)
	if !info.IsReliable() {
		return ""
	}
	return info.Lang.Iso6391()
}

// Document analyses a chunk's text as lang ("" to detect it).
func (a *Analyzer) Document(text, lang string) Fields {
	if lang == "" {
		lang = a.Detect(text)
	}
	lang = Canonical(lang)
	f := Fields{Lang: lang}
	var exact, stems, parts strings.Builder
	add := func(b *strings.Builder, s string) {
		if s == "" {
			return
		}
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(s)
	}
	stem := stemmerFor(lang)
	env := snowballstem.NewEnv("")
	tokens(normalise(text), func(tok string, kind tokenKind) {
		switch kind {
		case spaceless:
			forEachGram(tok, func(gram string, single bool) {
				if single {
					add(&parts, gram)
					return
				}
				add(&exact, gram)
			})
		case hangul:
			add(&exact, tok)
			if s := stripParticle(tok); s != tok {
				add(&stems, s)
			}
		default:
			e, s := a.word(env, tok, lang, stem)
			add(&exact, e)
			if s != e {
				add(&stems, s)
			}
			if lang == "de" {
				for _, p := range a.compoundParts(tok) {
					add(&parts, a.stemWord(env, p, "de", stem))
				}
			}
		}
	})
	f.Exact, f.Stems, f.Parts = exact.String(), stems.String(), parts.String()
	return f
}

// Query analyses a query's text as each of langs (none: every language
// with a stemmer), so that it finds chunks of any of them.
func (a *Analyzer) Query(text string, langs []string) []Term {
	if len(langs) == 0 {
		langs = Stemmed()
	}
	var terms []Term
	env := snowballstem.NewEnv("")
	tokens(normalise(text), func(tok string, kind tokenKind) {
		switch kind {
		case spaceless:
			n := utf8.RuneCountInString(tok)
			forEachGram(tok, func(gram string, single bool) {
				if single && n > 1 {
					return
				}
				if single {
					terms = append(terms, Term{Stems: []string{gram}})
					return
				}
				terms = append(terms, Term{Exact: []string{gram}, Stems: []string{gram}})
			})
		case hangul:
			terms = append(terms, Term{Exact: []string{tok}, Stems: []string{stripParticle(tok)}})
		default:
			var t Term
			for _, l := range langs {
				l = Canonical(l)
				e, s := a.word(env, tok, l, stemmerFor(l))
				t.Exact = appendNew(t.Exact, e)
				t.Stems = appendNew(t.Stems, s)
			}
			terms = append(terms, t)
		}
	})
	return terms
}

func appendNew(list []string, s string) []string {
	if s == "" {
		return list
	}
	for _, x := range list {
		if x == s {
			return list
		}
	}
	return append(list, s)
}

// word returns a word's exact form and stem in lang; tok is normalised
// (NFKC, case-folded) and made of letters, marks and digits.
func (a *Analyzer) word(env *snowballstem.Env, tok, lang string, stem func(*snowballstem.Env) bool) (string, string) {
	exact := foldAccents(tok, lang)
	return exact, a.stemWord(env, tok, lang, stem)
}

// stemWord stems a normalised word: the stemmer reads the word with its
// accents (Snowball's rules know them), the result is folded as exact
// forms are.
func (a *Analyzer) stemWord(env *snowballstem.Env, tok, lang string, stem func(*snowballstem.Env) bool) string {
	if stem == nil || !isLetters(tok) {
		return foldAccents(tok, lang)
	}
	if lang == "de" {
		tok = umlauts(tok)
	}
	env.SetCurrent(tok)
	stem(env)
	s := env.Current()
	if s == "" {
		s = tok
	}
	return foldAccents(s, lang)
}

// umlauts writes a German word's ae, oe and ue as ä, ö and ü (not ue after
// q: Quelle), as Snowball's german2 variant does, so that Pruefung and
// Prüfung have one stem.
func umlauts(w string) string {
	if !strings.Contains(w, "e") {
		return w
	}
	var b strings.Builder
	rs := []rune(w)
	for i := 0; i < len(rs); i++ {
		if i+1 < len(rs) && rs[i+1] == 'e' {
			switch {
			case rs[i] == 'a':
				b.WriteRune('ä')
				i++
				continue
			case rs[i] == 'o':
				b.WriteRune('ö')
				i++
				continue
			case rs[i] == 'u' && (i == 0 || rs[i-1] != 'q'):
				b.WriteRune('ü')
				i++
				continue
			}
		}
		b.WriteRune(rs[i])
	}
	return b.String()
}

func isLetters(s string) bool {
	for _, r := range s {
		if !unicode.IsLetter(r) && !unicode.Is(unicode.Mn, r) {
			return false
		}
	}
	return true
}

// normalise is NFKC with full case folding (ß becomes ss, as Swiss German
// writes it, and ﬁ fi).
func normalise(text string) string {
	return norm.NFC.String(cases.Fold().String(norm.NFKC.String(text)))
}

// keepsAccents are the languages whose accented Latin letters are letters of
// their own (Swedish å/ä/ö, Finnish ä/ö, Turkish ç/ş/ı…), not a variant
// people drop when they type: folding them would merge different words.
var keepsAccents = map[string]bool{"sv": true, "fi": true, "da": true, "no": true, "is": true, "et": true, "tr": true, "hu": true}

// foldAccents folds a normalised word's accents as lang allows: German
// writes ä, ö, ü as ae, oe, ue (so Pruefung is Prüfung), languages in
// keepsAccents keep theirs, every other drops the marks of Latin letters
// (résumé is resume). Marks on other scripts (Japanese dakuten, Cyrillic
// й) are never dropped.
func foldAccents(tok, lang string) string {
	if keepsAccents[lang] {
		return tok
	}
	ascii := true
	for i := 0; i < len(tok); i++ {
		if tok[i] >= utf8.RuneSelf {
			ascii = false
			break
		}
	}
	if ascii {
		return tok
	}
	var b strings.Builder
	for _, r := range norm.NFD.String(tok) {
		b.WriteRune(r)
	}
	d := []rune(b.String())
	b.Reset()
	for i, r := range d {
		if unicode.Is(unicode.Mn, r) && i > 0 && unicode.Is(unicode.Latin, d[i-1]) {
			if lang == "de" && r == '\u0308' && strings.ContainsRune("aou", d[i-1]) {
				b.WriteByte('e') // ä → ae
			}
			continue
		}
		b.WriteRune(r)
	}
	return norm.NFC.String(b.String())
}

type tokenKind int

const (
	alphabetic tokenKind = iota // words between spaces and punctuation
	hangul                      // Korean words
	spaceless                   // runs of scripts written without spaces
)

// spacelessScripts are written without spaces between words.
var spacelessScripts = []*unicode.RangeTable{unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Thai, unicode.Lao, unicode.Khmer, unicode.Myanmar}

func kindOf(r rune) (tokenKind, bool) {
	switch {
	case r == 'ー' || r == '々': // the long vowel mark and the repetition mark join their run
		return spaceless, true
	case unicode.Is(unicode.Hangul, r):
		return hangul, true
	case unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.Mn, r) || unicode.Is(unicode.Mc, r):
		for _, t := range spacelessScripts {
			if unicode.Is(t, r) {
				return spaceless, true
			}
		}
		return alphabetic, true
	}
	return 0, false
}

// tokens calls fn with each token of a normalised text: runs of letters,
// digits and marks of one kind. A mark continues the token before it.
func tokens(text string, fn func(tok string, kind tokenKind)) {
	start, cur := -1, tokenKind(0)
	for i, r := range text {
		k, ok := kindOf(r)
		if ok && start >= 0 && (k == cur || unicode.Is(unicode.Mn, r) || unicode.Is(unicode.Mc, r)) {
			continue
		}
		if start >= 0 {
			fn(text[start:i], cur)
			start = -1
		}
		if ok {
			start, cur = i, k
		}
	}
	if start >= 0 {
		fn(text[start:], cur)
	}
}

// forEachGram calls fn with each character bigram of a run, and with each
// single character (single true); a run of one character has no bigram.
func forEachGram(run string, fn func(gram string, single bool)) {
	rs := []rune(run)
	for i := range rs {
		// A mark belongs to the character before it (Thai vowels and tones).
		if unicode.Is(unicode.Mn, rs[i]) || unicode.Is(unicode.Mc, rs[i]) {
			continue
		}
		j := i + 1
		for j < len(rs) && (unicode.Is(unicode.Mn, rs[j]) || unicode.Is(unicode.Mc, rs[j])) {
			j++
		}
		fn(string(rs[i:j]), true)
		if j < len(rs) {
			k := j + 1
			for k < len(rs) && (unicode.Is(unicode.Mn, rs[k]) || unicode.Is(unicode.Mc, rs[k])) {
				k++
			}
			fn(string(rs[i:k]), false)
		}
	}
}

// particles are Korean postpositions (josa) and the copula's common
// endings, longest first, stripped from a word's end when at least two
// syllables remain: 타이포그래피에서 is found by 타이포그래피.
var particles = []string{
	"에서부터", "으로부터", "입니다", "에서는", "에서도", "에게서", "으로는", "으로서", "으로써", "이라는", "이라고", "까지는", "부터는",
	"에서", "에게", "한테", "께서", "으로", "로서", "로써", "부터", "까지", "마다", "조차", "처럼", "보다", "라는", "라고",
	"에는", "에도", "와는", "과는", "이나", "이며", "이고", "이다", "만큼",
	"은", "는", "이", "가", "을", "를", "에", "의", "도", "로", "와", "과", "만",
}

func stripParticle(word string) string {
	n := utf8.RuneCountInString(word)
	for _, p := range particles {
		if strings.HasSuffix(word, p) && n-utf8.RuneCountInString(p) >= 2 {
			return strings.TrimSuffix(word, p)
		}
	}
	return word
}
