package analysis

import (
	"bufio"
	"bytes"
	"compress/gzip"
	_ "embed"
	"fmt"
	"unicode/utf8"
)

// germanNouns is the nouns of Debian's wngerman word list with their
// inflected forms (german-nouns.LICENSE.txt says how it was made and its
// licence).
//
//go:embed german-nouns.txt.gz
var germanNouns []byte

// minPart is the shortest compound part, in letters: shorter ones (Ei, Amt)
// are found inside too many words by accident.
const minPart = 4

// linking are the German linking elements (Fugenelemente) that may join a
// compound's parts: Rechnung-s-prüfung, Seite-n-zahl.
var linking = []string{"", "s", "es", "n", "en", "e", "er"}

func (a *Analyzer) loadNouns() (map[string]struct{}, error) {
	a.nounsOnce.Do(func() {
		zr, err := gzip.NewReader(bytes.NewReader(germanNouns))
		if err != nil {
			a.nounsErr = fmt.Errorf("analysis: german nouns: %w", err)
			return
		}
		nouns := make(map[string]struct{}, 120_000)
		sc := bufio.NewScanner(zr)
		for sc.Scan() {
			nouns[normalise(sc.Text())] = struct{}{}
		}
		if err := sc.Err(); err != nil {
			a.nounsErr = fmt.Errorf("analysis: german nouns: %w", err)
			return
		}
		a.nouns = nouns
	})
	return a.nouns, a.nounsErr
}

// compoundParts splits a normalised German word into the nouns it is made
// of (Rechnungsprüfung: rechnung, prüfung; Pflichtfelder: pflicht,
// felder), or none when it is not a compound of dictionary nouns. Every part
// must be a noun of at least minPart letters, so that a word is not split
// into accidental substrings.
func (a *Analyzer) compoundParts(word string) []string {
	if utf8.RuneCountInString(word) < 2*minPart {
		return nil
	}
	nouns, err := a.loadNouns()
	if err != nil {
		return nil // the embedded list is part of the binary: cannot fail but by a broken build
	}
	parts, ok := split(word, nouns, 0)
	if !ok || len(parts) < 2 {
		return nil
	}
	return parts
}

// split finds the parts of word: its longest final noun, and a head that is
// a noun (less a linking element) or splits itself. depth bounds the
// recursion.
func split(word string, nouns map[string]struct{}, depth int) ([]string, bool) {
	if depth > 4 {
		return nil, false
	}
	rs := []rune(word)
	for cut := minPart; cut <= len(rs)-minPart; cut++ {
		tail := string(rs[cut:])
		if _, ok := nouns[tail]; !ok {
			continue
		}
		head := string(rs[:cut])
		for _, l := range linking {
			if len(head) <= len(l) || head[len(head)-len(l):] != l {
				continue
			}
			h := head[:len(head)-len(l)]
			if utf8.RuneCountInString(h) < minPart {
				continue
			}
			if _, ok := nouns[h]; ok {
				return []string{h, tail}, true
			}
			if sub, ok := split(h, nouns, depth+1); ok {
				return append(sub, tail), true
			}
		}
	}
	return nil, false
}
