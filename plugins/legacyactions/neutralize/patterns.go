package neutralize

import (
	"regexp"
	"strings"
)

// The detectors of the identifiers that carry their own proof: an e-mail
// address has its shape, an IBAN and an AHV number a check digit, a phone
// number its prefix and length. Each returns spans of text.

var emailRE = regexp.MustCompile(`[A-Za-z0-9._%+\-]+(?:@|\s?\((?:at|AT)\)\s?|\s?\[(?:at|AT)\]\s?)[A-Za-z0-9\-]+(?:\.[A-Za-z0-9\-]+)*\.[A-Za-z]{2,}`)

func findEmails(text string) []Span {
	var out []Span
	for _, m := range emailRE.FindAllStringIndex(text, -1) {
		s, e := m[0], m[1]
		// A trailing dot ends the sentence, not the address.
		for e > s && text[e-1] == '.' {
			e--
		}
		out = append(out, Span{Start: s, End: e, Kind: Email})
	}
	return out
}

// ibanLengths are the IBAN lengths of the countries a Swiss business meets
// most; another country's IBAN is accepted at any length its check allows.
var ibanLengths = map[string]int{
	"CH": 21, "LI": 21, "DE": 22, "AT": 20, "FR": 27, "IT": 27, "GB": 22, "NL": 18, "BE": 16, "ES": 24,
	"LU": 20, "PT": 25, "IE": 22, "DK": 18, "SE": 24, "NO": 15, "PL": 28, "CZ": 24, "MC": 27, "SM": 27,
}

var ibanStartRE = regexp.MustCompile(`\b[A-Z]{2}\d{2}`)

// findIBANs finds IBANs written with or without spaces in groups (as long
// as one space separates them), whose mod-97 check holds.
func findIBANs(text string) []Span {
	var out []Span
	last := 0
	for _, m := range ibanStartRE.FindAllStringIndex(text, -1) {
		if m[0] < last {
			continue
		}
		// Collect up to 34 characters: letters and digits, single spaces between.
		var chars []byte
		var ends []int // ends[i]: text offset after chars[i]
		for i := m[0]; i < len(text) && len(chars) < 34; i++ {
			c := text[i]
			switch {
			case c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
				chars = append(chars, c)
				ends = append(ends, i+1)
				continue
			case c == ' ' && i+1 < len(text) && i > m[0] && text[i-1] != ' ' && isAlnumUpper(text[i+1]):
				continue
			}
			break
		}
		try := func(n int) bool {
			if n > len(chars) || n < 15 {
				return false
			}
			// The IBAN must not run on into more letters or digits.
			if e := ends[n-1]; e < len(text) && isAlnumUpper(text[e]) {
				return false
			}
			return ibanValid(string(chars[:n]))
		}
		n := 0
		if want, ok := ibanLengths[string(chars[:2])]; ok {
			if try(want) {
				n = want
			}
		} else {
			for l := len(chars); l >= 15; l-- {
				if try(l) {
					n = l
					break
				}
			}
		}
		if n > 0 {
			out = append(out, Span{Start: m[0], End: ends[n-1], Kind: IBAN})
			last = ends[n-1]
		}
	}
	return out
}

func isAlnumUpper(c byte) bool { return c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' }

// ibanValid is ISO 13616's check: the country and check digits moved to the
// end, letters as 10..35, the number mod 97 is 1.
func ibanValid(s string) bool {
	s = s[4:] + s[:4]
	rem := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= '0' && c <= '9':
			rem = (rem*10 + int(c-'0')) % 97
		case c >= 'A' && c <= 'Z':
			v := int(c-'A') + 10
			rem = (rem*100 + v) % 97
		default:
			return false
		}
	}
	return rem == 1
}

// The Swiss social security number (AHV/AVS, since 2008): 756.xxxx.xxxx.xc,
// thirteen digits whose last is an EAN-13 check digit.
var ahvRE = regexp.MustCompile(`\b756[.\s]?\d{4}[.\s]?\d{4}[.\s]?\d{2}\b`)

func findAHV(text string) []Span {
	var out []Span
	for _, m := range ahvRE.FindAllStringIndex(text, -1) {
		if ean13Valid(digits(text[m[0]:m[1]])) {
			out = append(out, Span{Start: m[0], End: m[1], Kind: AHV})
		}
	}
	return out
}

func ean13Valid(d string) bool {
	if len(d) != 13 {
		return false
	}
	sum := 0
	for i := 0; i < 12; i++ {
		v := int(d[i] - '0')
		if i%2 == 1 {
			v *= 3
		}
		sum += v
	}
	return (10-sum%10)%10 == int(d[12]-'0')
}

func digits(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] >= '0' && s[i] <= '9' {
			b.WriteByte(s[i])
		}
	}
	return b.String()
}

// Phone numbers: international (+CC or 00CC, with the Swiss "(0)" the
// national prefix some write after it) and Swiss national numbers (0 and
// nine digits) in their usual groupings; an unseparated national number
// only after a phone label.
var (
	phoneIntlRE = regexp.MustCompile(`(?:\+|\b00)[1-9]\d{0,2}(?:[ .\-/]?\(0\))?(?:[ .\-/]{0,2}\(?\d{1,5}\)?){2,7}`)
	phoneNatRE  = regexp.MustCompile(`(?:\(0\d{2}\)|\b0\d{2,3})(?:[ .\-/]{1,2}\d{2,4}){2,4}\b`)
	phoneBareRE = regexp.MustCompile(`\b0\d{9}\b`)
	phoneCueRE  = regexp.MustCompile(`(?i)(?:tel|telefon|tél|téléphone|phone|mobile|mobil|natel|handy|fax|cell|portable|tel\.|nr)[.:]?\s*$`)
)

func findPhones(text string) []Span {
	var out []Span
	for _, m := range phoneIntlRE.FindAllStringIndex(text, -1) {
		s, e := m[0], trimRight(text, m[0], m[1])
		d := digits(strings.Replace(text[s:e], "(0)", "", 1))
		if len(d) >= 9 && len(d) <= 15 {
			out = append(out, Span{Start: s, End: e, Kind: Phone})
		}
	}
	for _, m := range phoneNatRE.FindAllStringIndex(text, -1) {
		s, e := m[0], trimRight(text, m[0], m[1])
		if len(digits(text[s:e])) == 10 && !dateLike(text[s:e]) {
			out = append(out, Span{Start: s, End: e, Kind: Phone})
		}
	}
	for _, m := range phoneBareRE.FindAllStringIndex(text, -1) {
		before := text[max(0, m[0]-16):m[0]]
		if phoneCueRE.MatchString(before) {
			out = append(out, Span{Start: m[0], End: m[1], Kind: Phone})
		}
	}
	return out
}

func trimRight(text string, s, e int) int {
	for e > s && strings.ContainsRune(" .-/(", rune(text[e-1])) {
		e--
	}
	return e
}

// dateLike refuses 01.02.2024-shaped digits.
var dateRE = regexp.MustCompile(`^\d{1,2}\.\d{1,2}\.\d{2,4}`)

func dateLike(s string) bool { return dateRE.MatchString(s) }
