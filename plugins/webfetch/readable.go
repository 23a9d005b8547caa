package main

import (
	"bytes"
	"strings"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// skipped elements carry no readable content.
var skipped = map[atom.Atom]bool{
	atom.Script: true, atom.Style: true, atom.Noscript: true, atom.Nav: true, atom.Footer: true,
	atom.Header: true, atom.Aside: true, atom.Form: true, atom.Button: true, atom.Svg: true,
	atom.Iframe: true, atom.Template: true, atom.Select: true,
}

// paragraphs stand apart, with a blank line before and after them.
var paragraphs = map[atom.Atom]bool{
	atom.P: true, atom.Section: true, atom.Article: true, atom.Main: true,
	atom.Ul: true, atom.Ol: true, atom.Table: true, atom.Blockquote: true,
	atom.Pre: true, atom.Hr: true, atom.Dl: true, atom.Figure: true,
	atom.H1: true, atom.H2: true, atom.H3: true, atom.H4: true, atom.H5: true, atom.H6: true,
}

// lines end a line before and after them.
var lines = map[atom.Atom]bool{
	atom.Div: true, atom.Tr: true, atom.Br: true, atom.Dt: true, atom.Dd: true,
	atom.Figcaption: true, atom.Li: true,
}

var headingLevel = map[atom.Atom]int{atom.H1: 1, atom.H2: 2, atom.H3: 3, atom.H4: 4, atom.H5: 5, atom.H6: 6}

// readable extracts a page's title and its text: headings as "#" lines, list
// items as "- " lines, table cells separated by " | ", links optionally kept.
func readable(doc []byte, links bool) (title, text string) {
	root, err := html.Parse(bytes.NewReader(doc))
	if err != nil {
		return "", string(doc)
	}
	w := &textWriter{}
	var walk func(n *html.Node, pre bool)
	walk = func(n *html.Node, pre bool) {
		switch n.Type {
		case html.TextNode:
			w.text(n.Data, pre)
			return
		case html.ElementNode:
			if n.DataAtom == atom.Title && title == "" && n.FirstChild != nil {
				title = strings.TrimSpace(n.FirstChild.Data)
				return
			}
			if skipped[n.DataAtom] || attr(n, "aria-hidden") == "true" || attr(n, "hidden") != "" {
				return
			}
			w.boundary(n.DataAtom)
			if lvl := headingLevel[n.DataAtom]; lvl > 0 {
				w.raw(strings.Repeat("#", lvl) + " ")
			}
			if n.DataAtom == atom.Li {
				w.raw("- ")
			}
			if n.DataAtom == atom.Td || n.DataAtom == atom.Th {
				w.raw(" | ")
			}
			pre = pre || n.DataAtom == atom.Pre
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c, pre)
		}
		if n.Type == html.ElementNode {
			if n.DataAtom == atom.A && links {
				if href := attr(n, "href"); strings.HasPrefix(href, "http") {
					w.raw(" (" + href + ")")
				}
			}
			w.boundary(n.DataAtom)
		}
	}
	walk(root, false)
	return title, w.String()
}

func attr(n *html.Node, key string) string {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val
		}
	}
	return ""
}

// textWriter collapses white space and separates paragraphs by one blank line.
type textWriter struct {
	b         strings.Builder
	line      strings.Builder
	pre       bool // the current line is preformatted: keep its spaces
	wantBlank bool
}

func (w *textWriter) boundary(a atom.Atom) {
	switch {
	case paragraphs[a]:
		w.newline()
		w.wantBlank = true
	case lines[a]:
		w.newline()
	}
}

func (w *textWriter) text(s string, pre bool) {
	if pre {
		for i, part := range strings.Split(s, "\n") {
			if i > 0 {
				w.pre = true
				w.newline()
			}
			w.pre = true
			w.line.WriteString(part)
		}
		return
	}
	f := strings.Fields(s)
	if len(f) == 0 {
		if w.line.Len() > 0 && s != "" {
			w.line.WriteByte(' ')
		}
		return
	}
	if w.line.Len() > 0 && (s[0] == ' ' || s[0] == '\n' || s[0] == '\t') {
		w.line.WriteByte(' ')
	}
	w.line.WriteString(strings.Join(f, " "))
	if last := s[len(s)-1]; last == ' ' || last == '\n' || last == '\t' {
		w.line.WriteByte(' ')
	}
}

func (w *textWriter) raw(s string) { w.line.WriteString(s) }

func (w *textWriter) newline() {
	l := w.line.String()
	if w.pre {
		l = strings.TrimRight(l, " \t\r")
	} else {
		l = strings.TrimSpace(l)
	}
	w.line.Reset()
	w.pre = false
	if l == "" || l == "-" || l == "|" {
		return
	}
	if w.b.Len() > 0 {
		w.b.WriteByte('\n')
		if w.wantBlank {
			w.b.WriteByte('\n')
		}
	}
	w.wantBlank = false
	w.b.WriteString(l)
}

func (w *textWriter) String() string {
	w.newline()
	return w.b.String()
}
