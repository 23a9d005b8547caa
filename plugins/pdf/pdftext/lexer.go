package pdftext

import "bytes"

// The tokenizer for content streams and CMaps, which share PostScript's
// syntax. It works on the decoded bytes in place: names, keywords and
// strings without escapes are slices of the input, so interpreting a page
// allocates little beyond the glyphs it produces.

type tokKind uint8

const (
	tokEOF tokKind = iota
	tokNumber
	tokString // literal or hex string, decoded
	tokName   // without the slash, #xx escapes resolved
	tokKeyword
	tokArrayOpen
	tokArrayClose
	tokDictOpen
	tokDictClose
	tokProcOpen
	tokProcClose
)

type token struct {
	kind tokKind
	num  float64
	b    []byte
}

type lexer struct {
	data []byte
	pos  int
	// scratch holds strings that needed unescaping. The caller resets it
	// when it no longer needs earlier tokens (after each operator); until
	// then appends may move it, but the slices already handed out keep
	// pointing at the old, unchanged bytes.
	scratch []byte
	// noNumbers: numbers are not parsed (their tokens carry 0) and words
	// that start like one are numbers, for readers that skip operands.
	noNumbers bool
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\n' || c == '\r' || c == '\t' || c == '\f' || c == 0
}

func isDelim(c byte) bool {
	switch c {
	case '(', ')', '<', '>', '[', ']', '{', '}', '/', '%':
		return true
	}
	return false
}

func isRegular(c byte) bool { return !isSpace(c) && !isDelim(c) }

func (l *lexer) skipSpace() {
	for l.pos < len(l.data) {
		c := l.data[l.pos]
		if isSpace(c) {
			l.pos++
			continue
		}
		if c == '%' {
			for l.pos < len(l.data) && l.data[l.pos] != '\n' && l.data[l.pos] != '\r' {
				l.pos++
			}
			continue
		}
		return
	}
}

// next returns the next token; tokEOF at the end of the data.
func (l *lexer) next() token {
	l.skipSpace()
	if l.pos >= len(l.data) {
		return token{kind: tokEOF}
	}
	c := l.data[l.pos]
	switch c {
	case '(':
		l.pos++
		return token{kind: tokString, b: l.literalString()}
	case '<':
		if l.pos+1 < len(l.data) && l.data[l.pos+1] == '<' {
			l.pos += 2
			return token{kind: tokDictOpen}
		}
		l.pos++
		return token{kind: tokString, b: l.hexString()}
	case '>':
		l.pos++
		if l.pos < len(l.data) && l.data[l.pos] == '>' {
			l.pos++
			return token{kind: tokDictClose}
		}
		return l.next() // a stray '>' carries nothing
	case '[':
		l.pos++
		return token{kind: tokArrayOpen}
	case ']':
		l.pos++
		return token{kind: tokArrayClose}
	case '{':
		l.pos++
		return token{kind: tokProcOpen}
	case '}':
		l.pos++
		return token{kind: tokProcClose}
	case ')':
		l.pos++
		return l.next()
	case '/':
		l.pos++
		return token{kind: tokName, b: l.nameBytes()}
	}
	start := l.pos
	for l.pos < len(l.data) && isRegular(l.data[l.pos]) {
		l.pos++
	}
	word := l.data[start:l.pos]
	if l.noNumbers && c != '.' && c != '-' && c != '+' && (c < '0' || c > '9') {
		return token{kind: tokKeyword, b: word}
	}
	if l.noNumbers {
		return token{kind: tokNumber}
	}
	if v, ok := parseNumber(word); ok {
		return token{kind: tokNumber, num: v}
	}
	return token{kind: tokKeyword, b: word}
}

// parseNumber reads PDF numbers, leniently: writers emit "-.5", "+3", "4."
// and even "--2" or "1-"; anything with a digit and only sign/point/digit
// characters is a number, as in Acrobat and poppler.
func parseNumber(w []byte) (float64, bool) {
	if len(w) == 0 {
		return 0, false
	}
	neg := false
	i := 0
	for i < len(w) && (w[i] == '-' || w[i] == '+') {
		if w[i] == '-' {
			neg = !neg
		}
		i++
	}
	var v float64
	digits := false
	for ; i < len(w) && w[i] >= '0' && w[i] <= '9'; i++ {
		v = v*10 + float64(w[i]-'0')
		digits = true
	}
	if i < len(w) && w[i] == '.' {
		i++
		scale := 0.1
		for ; i < len(w) && w[i] >= '0' && w[i] <= '9'; i++ {
			v += float64(w[i]-'0') * scale
			scale /= 10
			digits = true
		}
	}
	if !digits {
		return 0, false
	}
	for ; i < len(w); i++ {
		if w[i] != '-' && w[i] != '+' && w[i] != '.' && (w[i] < '0' || w[i] > '9') {
			return 0, false
		}
	}
	if neg {
		v = -v
	}
	return v, true
}

func (l *lexer) nameBytes() []byte {
	start := l.pos
	esc := false
	for l.pos < len(l.data) && isRegular(l.data[l.pos]) {
		if l.data[l.pos] == '#' {
			esc = true
		}
		l.pos++
	}
	raw := l.data[start:l.pos]
	if !esc {
		return raw
	}
	s0 := len(l.scratch)
	for i := 0; i < len(raw); i++ {
		if raw[i] == '#' && i+2 < len(raw) {
			if h, ok := hexByte(raw[i+1], raw[i+2]); ok {
				l.scratch = append(l.scratch, h)
				i += 2
				continue
			}
		}
		l.scratch = append(l.scratch, raw[i])
	}
	return l.scratch[s0:]
}

func hexVal(c byte) (byte, bool) {
	switch {
	case c >= '0' && c <= '9':
		return c - '0', true
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10, true
	case c >= 'A' && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

func hexByte(a, b byte) (byte, bool) {
	x, ok1 := hexVal(a)
	y, ok2 := hexVal(b)
	return x<<4 | y, ok1 && ok2
}

// literalString reads after the opening parenthesis up to its balanced
// closing one. Strings without backslashes are returned in place.
func (l *lexer) literalString() []byte {
	start := l.pos
	depth := 1
	for i := l.pos; i < len(l.data); i++ {
		switch l.data[i] {
		case '\\':
			return l.escapedString(start)
		case '(':
			depth++
		case ')':
			depth--
			if depth == 0 {
				l.pos = i + 1
				return l.data[start:i]
			}
		}
	}
	l.pos = len(l.data)
	return l.data[start:]
}

func (l *lexer) escapedString(start int) []byte {
	s0 := len(l.scratch)
	depth := 1
	i := start
	for i < len(l.data) {
		c := l.data[i]
		i++
		switch c {
		case '(':
			depth++
		case ')':
			depth--
			if depth == 0 {
				l.pos = i
				return l.scratch[s0:]
			}
		case '\\':
			if i >= len(l.data) {
				continue
			}
			e := l.data[i]
			i++
			switch e {
			case 'n':
				c = '\n'
			case 'r':
				c = '\r'
			case 't':
				c = '\t'
			case 'b':
				c = '\b'
			case 'f':
				c = '\f'
			case '\r':
				if i < len(l.data) && l.data[i] == '\n' {
					i++
				}
				continue
			case '\n':
				continue
			default:
				if e >= '0' && e <= '7' {
					v := e - '0'
					for k := 0; k < 2 && i < len(l.data) && l.data[i] >= '0' && l.data[i] <= '7'; k++ {
						v = v<<3 | (l.data[i] - '0')
						i++
					}
					c = v
				} else {
					c = e // \( \) \\ and unknown escapes stand for themselves
				}
			}
		}
		l.scratch = append(l.scratch, c)
	}
	l.pos = len(l.data)
	return l.scratch[s0:]
}

func (l *lexer) hexString() []byte {
	s0 := len(l.scratch)
	var hi byte
	half := false
	for l.pos < len(l.data) {
		c := l.data[l.pos]
		l.pos++
		if c == '>' {
			break
		}
		v, ok := hexVal(c)
		if !ok {
			continue // whitespace and junk between digits
		}
		if half {
			l.scratch = append(l.scratch, hi<<4|v)
		} else {
			hi = v
		}
		half = !half
	}
	if half {
		l.scratch = append(l.scratch, hi<<4) // an odd final digit is followed by 0
	}
	return l.scratch[s0:]
}

// skipInlineImageDict moves past an inline image after its BI operator:
// its parameters up to ID, its data and EI. It reports whether there was
// an image (false when the stream ends first).
func (l *lexer) skipInlineImageDict() bool {
	for n := 0; n < 1<<12; n++ {
		t := l.next()
		if t.kind == tokEOF {
			return false
		}
		if t.kind == tokKeyword && string(t.b) == "ID" {
			l.skipInlineImage()
			return true
		}
	}
	return false
}

// skipInlineImage moves past an inline image's data, which follows the ID
// operator, and its EI operator. The data is binary and its length is not
// stored, so we look for "EI" between white space (or at the end), which is
// what viewers do; a false match inside the data costs at most some junk
// operators that the interpreter ignores.
func (l *lexer) skipInlineImage() {
	if l.pos < len(l.data) && isSpace(l.data[l.pos]) {
		l.pos++
	}
	for i := l.pos; i+1 < len(l.data); {
		j := bytes.Index(l.data[i:], []byte("EI"))
		if j < 0 {
			break
		}
		k := i + j
		before := k == 0 || isSpace(l.data[k-1])
		after := k+2 >= len(l.data) || isSpace(l.data[k+2]) || isDelim(l.data[k+2])
		if before && after {
			l.pos = k + 2
			return
		}
		i = k + 1
	}
	l.pos = len(l.data)
}
