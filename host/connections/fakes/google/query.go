package google

import (
	"fmt"
	"slices"
	"strings"
)

// expr is a parsed Drive search query (the q parameter of files.list):
// terms name, mimeType (=, !=, contains), fullText contains, trashed (=,
// !=), 'ID' in parents; combined with and, or, not and parentheses.
// Strings are single-quoted with \' and \\ escapes.
type expr interface{ match(*File) bool }

type (
	all       struct{}
	and       []expr
	or        []expr
	not       struct{ e expr }
	compare   struct{ field, op, value string }
	inParents struct{ id string }
)

func (all) match(*File) bool { return true }

func (a and) match(f *File) bool {
	for _, e := range a {
		if !e.match(f) {
			return false
		}
	}
	return true
}

func (o or) match(f *File) bool {
	for _, e := range o {
		if e.match(f) {
			return true
		}
	}
	return false
}

func (n not) match(f *File) bool { return !n.e.match(f) }

func (p inParents) match(f *File) bool {
	id := p.id
	if id == "root" {
		id = RootID
	}
	return slices.Contains(f.Parents, id)
}

func (c compare) match(f *File) bool {
	var v string
	switch c.field {
	case "name":
		v = f.Name
	case "mimeType":
		v = f.MIMEType
	case "trashed":
		v = fmt.Sprint(f.Trashed)
	case "fullText":
		// Drive matches whole words of the name, description and content;
		// the fake matches case-insensitive substrings of the same.
		text := f.Name + "\n" + f.Description + "\n" + f.Text
		if strings.HasPrefix(f.MIMEType, "text/") {
			text += "\n" + string(f.Content)
		}
		return strings.Contains(strings.ToLower(text), strings.ToLower(c.value))
	}
	switch c.op {
	case "=":
		return v == c.value
	case "!=":
		return v != c.value
	case "contains":
		return strings.Contains(strings.ToLower(v), strings.ToLower(c.value))
	}
	return false
}

type token struct {
	kind string // "str", "word", "op", "(", ")"
	text string
}

func lex(q string) ([]token, error) {
	var out []token
	for i := 0; i < len(q); {
		c := q[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n':
			i++
		case c == '(' || c == ')':
			out = append(out, token{kind: string(c)})
			i++
		case c == '\'':
			var b strings.Builder
			i++
			for {
				if i >= len(q) {
					return nil, fmt.Errorf("unterminated string")
				}
				if q[i] == '\\' && i+1 < len(q) {
					b.WriteByte(q[i+1])
					i += 2
					continue
				}
				if q[i] == '\'' {
					i++
					break
				}
				b.WriteByte(q[i])
				i++
			}
			out = append(out, token{kind: "str", text: b.String()})
		case c == '=':
			out = append(out, token{kind: "op", text: "="})
			i++
		case c == '!' && i+1 < len(q) && q[i+1] == '=':
			out = append(out, token{kind: "op", text: "!="})
			i += 2
		default:
			j := i
			for j < len(q) && strings.IndexByte(" \t\n()='!", q[j]) < 0 {
				j++
			}
			if j == i {
				return nil, fmt.Errorf("unexpected %q", c)
			}
			out = append(out, token{kind: "word", text: q[i:j]})
			i = j
		}
	}
	return out, nil
}

type parser struct {
	toks []token
	i    int
}

func (p *parser) peek() token {
	if p.i < len(p.toks) {
		return p.toks[p.i]
	}
	return token{}
}

func (p *parser) next() token { t := p.peek(); p.i++; return t }

func parseQuery(q string) (expr, error) {
	if strings.TrimSpace(q) == "" {
		return all{}, nil
	}
	toks, err := lex(q)
	if err != nil {
		return nil, err
	}
	p := &parser{toks: toks}
	e, err := p.or()
	if err != nil {
		return nil, err
	}
	if p.i != len(p.toks) {
		return nil, fmt.Errorf("trailing %q", p.peek().text)
	}
	return e, nil
}

func (p *parser) or() (expr, error) {
	var out or
	for {
		e, err := p.and()
		if err != nil {
			return nil, err
		}
		out = append(out, e)
		if t := p.peek(); t.kind != "word" || t.text != "or" {
			break
		}
		p.next()
	}
	if len(out) == 1 {
		return out[0], nil
	}
	return out, nil
}

func (p *parser) and() (expr, error) {
	var out and
	for {
		e, err := p.unary()
		if err != nil {
			return nil, err
		}
		out = append(out, e)
		if t := p.peek(); t.kind != "word" || t.text != "and" {
			break
		}
		p.next()
	}
	if len(out) == 1 {
		return out[0], nil
	}
	return out, nil
}

func (p *parser) unary() (expr, error) {
	t := p.next()
	switch {
	case t.kind == "word" && t.text == "not":
		e, err := p.unary()
		return not{e}, err
	case t.kind == "(":
		e, err := p.or()
		if err != nil {
			return nil, err
		}
		if p.next().kind != ")" {
			return nil, fmt.Errorf("missing )")
		}
		return e, nil
	case t.kind == "str":
		// 'ID' in parents
		if in := p.next(); in.kind != "word" || in.text != "in" {
			return nil, fmt.Errorf("expected in")
		}
		if f := p.next(); f.kind != "word" || f.text != "parents" {
			return nil, fmt.Errorf("only parents is a collection here")
		}
		return inParents{t.text}, nil
	case t.kind == "word":
		op := p.next()
		switch {
		case op.kind == "op":
		case op.kind == "word" && op.text == "contains":
		default:
			return nil, fmt.Errorf("expected an operator after %s", t.text)
		}
		v := p.next()
		switch t.text {
		case "name", "mimeType":
			if v.kind != "str" {
				return nil, fmt.Errorf("%s takes a string", t.text)
			}
		case "fullText":
			if v.kind != "str" || op.text != "contains" {
				return nil, fmt.Errorf("fullText takes contains and a string")
			}
		case "trashed":
			if v.kind != "word" || (v.text != "true" && v.text != "false") || op.text == "contains" {
				return nil, fmt.Errorf("trashed takes = or != and a boolean")
			}
		default:
			return nil, fmt.Errorf("unknown query term %s", t.text)
		}
		return compare{field: t.text, op: op.text, value: v.text}, nil
	}
	return nil, fmt.Errorf("unexpected %q", t.text)
}
