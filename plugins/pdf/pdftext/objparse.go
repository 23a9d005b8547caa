package pdftext

import (
	"context"
	"errors"
	"strconv"

	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu/model"
	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu/types"
)

// The object parser of the lazy reader: PDF objects into pdfcpu's types,
// giving what pdfcpu's parser gives for well-formed objects, several times
// faster (it works on bytes in place, where pdfcpu's copies strings token
// by token). It is strict: whatever pdfcpu would read with one of its
// leniencies (a relaxed mode, junk skipped, a number with a stray prefix)
// is an error here, and the caller hands the object to pdfcpu's parser, so
// that both readers agree on every file.

var errParse = errors.New("not a plain object")

// maxParseDepth bounds nesting, below pdfcpu's own limit.
const maxParseDepth = 64

// parseAny parses the object at the start of b with parseObject, or with
// pdfcpu's parser (lenient, slower) where that refuses it; n is the bytes
// read.
func parseAny(b []byte) (o types.Object, n int, err error) {
	if o, n, err := parseObject(b); err == nil {
		return o, n, nil
	}
	return pdfcpuParse(b)
}

// pdfcpuParse parses the object at the start of b with pdfcpu's parser.
func pdfcpuParse(b []byte) (o types.Object, n int, err error) {
	s := string(b)
	o, err = model.ParseObjectContext(context.Background(), &s, 0)
	return o, len(b) - len(s), err
}

// objParser reads one object from b at pos.
type objParser struct {
	b   []byte
	pos int
}

// parseObject parses the object at the start of b (after white space and
// comments) and returns it with the number of bytes read.
func parseObject(b []byte) (types.Object, int, error) {
	p := &objParser{b: b}
	p.skip()
	if p.pos >= len(p.b) {
		return nil, 0, errParse
	}
	o, err := p.value(0)
	return o, p.pos, err
}

func isWhite(c byte) bool {
	return c == ' ' || c == '\n' || c == '\r' || c == '\t' || c == '\f' || c == '\v' || c == 0
}

// skip passes white space and comments, as pdfcpu's trimLeftSpace does.
func (p *objParser) skip() {
	for {
		for p.pos < len(p.b) && isWhite(p.b[p.pos]) {
			p.pos++
		}
		if p.pos+1 >= len(p.b) || p.b[p.pos] != '%' {
			return
		}
		for p.pos < len(p.b) && p.b[p.pos] != '\n' && p.b[p.pos] != '\r' {
			p.pos++
		}
	}
}

func (p *objParser) value(depth int) (types.Object, error) {
	if depth > maxParseDepth || p.pos >= len(p.b) {
		return nil, errParse
	}
	switch c := p.b[p.pos]; {
	case c == '/':
		n, err := p.name()
		return n, err
	case c == '[':
		return p.array(depth)
	case c == '<':
		if p.pos+1 < len(p.b) && p.b[p.pos+1] == '<' {
			return p.dict(depth)
		}
		return p.hex()
	case c == '(':
		return p.literal()
	case c == 't' || c == 'f' || c == 'n':
		return p.keyword()
	case c == '+' || c == '-' || c == '.' || (c >= '0' && c <= '9'):
		return p.number()
	}
	return nil, errParse
}

// tokenEnd is where a name or number ends: at white space or one of the
// characters that end one in pdfcpu.
func (p *objParser) tokenEnd(from int) int {
	i := from
	for i < len(p.b) {
		c := p.b[i]
		if isWhite(c) || c == '/' || c == '<' || c == '>' || c == '(' || c == ')' || c == '[' || c == ']' || c == '%' || c == '{' || c == '}' {
			return i
		}
		i++
	}
	return i
}

func (p *objParser) name() (types.Object, error) {
	start := p.pos + 1
	end := p.tokenEnd(start)
	raw := p.b[start:end]
	hasHash := false
	for _, c := range raw {
		if c >= 0x80 || c == '{' || c == '}' {
			return nil, errParse // pdfcpu reads such names rune by rune
		}
		if c == '#' {
			hasHash = true
		}
	}
	if end < len(p.b) && (p.b[end] == '{' || p.b[end] == '}') {
		return nil, errParse
	}
	p.pos = end
	if !hasHash {
		return types.Name(raw), nil
	}
	s, err := types.DecodeName(string(raw))
	if err != nil {
		return nil, errParse
	}
	return types.Name(s), nil
}

func (p *objParser) keyword() (types.Object, error) {
	end := p.tokenEnd(p.pos)
	w := string(p.b[p.pos:end])
	if end < len(p.b) && (p.b[end] == '{' || p.b[end] == '}') {
		return nil, errParse
	}
	p.pos = end
	switch w {
	case "true":
		return types.Boolean(true), nil
	case "false":
		return types.Boolean(false), nil
	case "null":
		return nil, nil
	}
	return nil, errParse
}

// number reads an integer, a real, or an indirect reference "n g R".
func (p *objParser) number() (types.Object, error) {
	end := p.tokenEnd(p.pos)
	tok := p.b[p.pos:end]
	if end < len(p.b) && (p.b[end] == ')' || p.b[end] == '{' || p.b[end] == '}' || p.b[end] == '%') {
		return nil, errParse
	}
	digits, dot := 0, 0
	for i, c := range tok {
		switch {
		case c >= '0' && c <= '9':
			digits++
		case c == '.':
			dot++
		case (c == '+' || c == '-') && i == 0:
		default:
			return nil, errParse
		}
	}
	if digits == 0 || dot > 1 || (len(tok) > 1 && tok[0] == '0' && (tok[1] == '+' || tok[1] == '-')) {
		return nil, errParse
	}
	if dot == 1 {
		f, err := strconv.ParseFloat(string(tok), 64)
		if err != nil {
			return nil, errParse
		}
		p.pos = end
		return types.Float(f), nil
	}
	n, err := strconv.Atoi(string(tok))
	if err != nil {
		return nil, errParse
	}
	p.pos = end
	if end >= len(p.b) || !isWhite(p.b[end]) {
		return types.Integer(n), nil
	}
	// "n g R": a second number of digits alone, then R.
	i := end
	for i < len(p.b) && isWhite(p.b[i]) {
		i++
	}
	if i < len(p.b) && p.b[i] == '%' {
		return nil, errParse // pdfcpu skips the comment
	}
	signed := i < len(p.b) && (p.b[i] == '+' || p.b[i] == '-')
	j := i
	if signed {
		j++
	}
	for j < len(p.b) && p.b[j] >= '0' && p.b[j] <= '9' {
		j++
	}
	if j == i || (signed && j == i+1) {
		return types.Integer(n), nil
	}
	if j >= len(p.b) || !isWhite(p.b[j]) {
		return types.Integer(n), nil // "1 2.5", "1 2]": no generation
	}
	if signed {
		// pdfcpu takes a signed generation number: "1 -0 R" is a
		// reference to it. Anything but R after it is a number.
		k := j
		for k < len(p.b) && isWhite(p.b[k]) {
			k++
		}
		if k >= len(p.b) || p.b[k] == 'R' || p.b[k] == '%' {
			return nil, errParse
		}
		return types.Integer(n), nil
	}
	g, err := strconv.Atoi(string(p.b[i:j]))
	if err != nil {
		return nil, errParse
	}
	k := j
	for k < len(p.b) && isWhite(p.b[k]) {
		k++
	}
	if k < len(p.b) && p.b[k] == '%' {
		return nil, errParse
	}
	if k >= len(p.b) || p.b[k] != 'R' {
		return types.Integer(n), nil
	}
	if k+1 < len(p.b) && !isWhite(p.b[k+1]) && !isDelimByte(p.b[k+1]) {
		return nil, errParse // "1 0 RG": pdfcpu would take the R
	}
	p.pos = k + 1
	return *types.NewIndirectRef(n, g), nil
}

// isDelimByte: the delimiters that end a number for pdfcpu.
func isDelimByte(c byte) bool {
	switch c {
	case '<', '>', '[', ']', '(', ')', '/':
		return true
	}
	return false
}

func (p *objParser) array(depth int) (types.Object, error) {
	p.pos++
	p.skip()
	a := types.Array{}
	for {
		if p.pos >= len(p.b) {
			return nil, errParse
		}
		if p.b[p.pos] == ']' {
			p.pos++
			return a, nil
		}
		v, err := p.value(depth + 1)
		if err != nil {
			return nil, err
		}
		a = append(a, v)
		p.skip()
	}
}

func (p *objParser) dict(depth int) (types.Object, error) {
	p.pos += 2
	p.skip()
	d := types.Dict{}
	for {
		if p.pos+1 >= len(p.b) {
			return nil, errParse
		}
		if p.b[p.pos] == '>' && p.b[p.pos+1] == '>' {
			p.pos += 2
			return d, nil
		}
		if p.b[p.pos] != '/' {
			return nil, errParse
		}
		k, err := p.name()
		if err != nil {
			return nil, err
		}
		p.skip()
		v, err := p.value(depth + 1)
		if err != nil {
			return nil, err
		}
		if v != nil {
			d[string(k.(types.Name))] = v
		}
		p.skip()
	}
}

// literal reads a string literal as pdfcpu keeps it: the bytes between the
// balanced parentheses, escapes not resolved.
func (p *objParser) literal() (types.Object, error) {
	depth, escaped := 0, false
	for i := p.pos; i < len(p.b); i++ {
		c := p.b[i]
		switch {
		case escaped:
			escaped = false
		case c == '\\':
			escaped = true
		case c == '(':
			depth++
		case c == ')':
			depth--
			if depth == 0 {
				s := types.StringLiteral(p.b[p.pos+1 : i])
				p.pos = i + 1
				return s, nil
			}
		}
	}
	return nil, errParse
}

// hex reads a hex string as pdfcpu keeps it: upper-case digits, an odd
// count padded with 0.
func (p *objParser) hex() (types.Object, error) {
	end := -1
	for i := p.pos + 1; i < len(p.b); i++ {
		if p.b[i] == '>' {
			end = i
			break
		}
	}
	if end < 0 {
		return nil, errParse
	}
	in := p.b[p.pos+1 : end]
	out := make([]byte, 0, len(in)+1)
	n := 0
	for _, c := range in {
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\f' || c == '\r':
			// pdfcpu pads an odd run before inner white space; leading
			// and trailing space it trims first.
			continue
		case c >= '0' && c <= '9', c >= 'A' && c <= 'F':
			out = append(out, c)
		case c >= 'a' && c <= 'f':
			out = append(out, c-'a'+'A')
		default:
			return nil, errParse
		}
		n++
	}
	if hasInnerOddRun(in) {
		return nil, errParse
	}
	if n%2 == 1 {
		out = append(out, '0')
	}
	p.pos = end + 1
	return types.HexLiteral(out), nil
}

// hasInnerOddRun tells hex digits split by white space into a run of odd
// length, which pdfcpu pads in place; rare enough to leave to it.
func hasInnerOddRun(in []byte) bool {
	run := 0
	for _, c := range in {
		if c == ' ' || c == '\t' || c == '\n' || c == '\f' || c == '\r' {
			if run%2 == 1 {
				return true
			}
			run = 0
			continue
		}
		run++
	}
	return false
}
