package kindex

import (
	"strings"
	"unicode"
)

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
