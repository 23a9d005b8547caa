package analysis

import (
	"sort"
	"strings"

	"github.com/blevesearch/snowballstem"
	"github.com/blevesearch/snowballstem/danish"
	"github.com/blevesearch/snowballstem/dutch"
	"github.com/blevesearch/snowballstem/english"
	"github.com/blevesearch/snowballstem/finnish"
	"github.com/blevesearch/snowballstem/french"
	"github.com/blevesearch/snowballstem/german"
	"github.com/blevesearch/snowballstem/hungarian"
	"github.com/blevesearch/snowballstem/italian"
	"github.com/blevesearch/snowballstem/norwegian"
	"github.com/blevesearch/snowballstem/portuguese"
	"github.com/blevesearch/snowballstem/romanian"
	"github.com/blevesearch/snowballstem/russian"
	"github.com/blevesearch/snowballstem/spanish"
	"github.com/blevesearch/snowballstem/swedish"
	"github.com/blevesearch/snowballstem/turkish"
)

// stemmers are the Snowball stemmers by ISO 639-1 code. To add a language
// with a Snowball stemmer, add it here (and to keepsAccents when its
// accented letters are letters of their own), then bump Version.
var stemmers = map[string]func(*snowballstem.Env) bool{
	"da": danish.Stem, "de": german.Stem, "en": english.Stem, "es": spanish.Stem, "fi": finnish.Stem,
	"fr": french.Stem, "hu": hungarian.Stem, "it": italian.Stem, "nl": dutch.Stem, "no": norwegian.Stem,
	"pt": portuguese.Stem, "ro": romanian.Stem, "ru": russian.Stem, "sv": swedish.Stem, "tr": turkish.Stem,
}

// aliases map codes people use to the ones of stemmers.
var aliases = map[string]string{"nb": "no", "nn": "no"}

func stemmerFor(lang string) func(*snowballstem.Env) bool { return stemmers[lang] }

// Canonical returns the ISO 639-1 code of a language tag ("de-CH" is "de",
// "nb" is "no"); "" for an empty tag.
func Canonical(tag string) string {
	tag = strings.ToLower(strings.TrimSpace(tag))
	if i := strings.IndexAny(tag, "-_"); i >= 0 {
		tag = tag[:i]
	}
	if a, ok := aliases[tag]; ok {
		return a
	}
	return tag
}

// Stemmed lists the languages with a stemmer, sorted.
func Stemmed() []string {
	out := make([]string, 0, len(stemmers))
	for l := range stemmers {
		out = append(out, l)
	}
	sort.Strings(out)
	return out
}

// Valid reports whether tag names a language the analysis knows: one with a
// stemmer, or Korean, Japanese, Chinese or Thai (analysed by script).
func Valid(tag string) bool {
	l := Canonical(tag)
	if _, ok := stemmers[l]; ok {
		return true
	}
	switch l {
	case "ko", "ja", "zh", "th":
		return true
	}
	return false
}
