package extract

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"

	"github.com/agenthost/agenthost/pdk/content"
)

// htmlSkip are elements whose content is not the page's text: code,
// styling, navigation, embedded and interactive things.
var htmlSkip = map[atom.Atom]bool{
	atom.Script: true, atom.Style: true, atom.Nav: true, atom.Noscript: true,
	atom.Template: true, atom.Svg: true, atom.Math: true, atom.Iframe: true,
	atom.Object: true, atom.Embed: true, atom.Canvas: true, atom.Head: true,
	atom.Select: true, atom.Button: true, atom.Input: true, atom.Textarea: true,
	atom.Dialog: true, atom.Map: true, atom.Audio: true, atom.Video: true,
}

// htmlBlock are elements that start and end a block of text.
var htmlBlock = map[atom.Atom]bool{
	atom.P: true, atom.Div: true, atom.Section: true, atom.Article: true,
	atom.Main: true, atom.Header: true, atom.Footer: true, atom.Aside: true,
	atom.Blockquote: true, atom.Figure: true, atom.Figcaption: true,
	atom.Form: true, atom.Fieldset: true, atom.Address: true, atom.Details: true,
	atom.Summary: true, atom.Dl: true, atom.Dt: true, atom.Dd: true,
	atom.Ul: true, atom.Ol: true, atom.Hr: true, atom.Body: true, atom.Caption: true,
	atom.Center: true, atom.Legend: true,
}

var htmlHeadings = map[atom.Atom]int{atom.H1: 1, atom.H2: 2, atom.H3: 3, atom.H4: 4, atom.H5: 5, atom.H6: 6}

// htmlRenderer turns a DOM into readable text, one section per heading.
type htmlRenderer struct {
	s       *sink
	lim     Limits
	out     strings.Builder // the current section's text
	ref     content.Ref
	md      map[string]any
	outline outline
	pre     int // depth inside <pre>
	list    []int
	nodes   int
	depth   int
}

var blankRun = regexp.MustCompile(`\n{3,}`)

// extractHTML emits the readable text of a page: scripts, styles and
// navigation dropped, headings as Markdown headings opening sections,
// lists, tables as Markdown, image alt text kept.
func extractHTML(ctx context.Context, in input, s *sink) error {
	b, cut, err := readInput(in)
	if err != nil {
		return err
	}
	// The meta tag's charset is a claim: the bytes have the last word (a
	// Windows-1256 page labelled UTF-8 is read as Windows-1256).
	label := in.charset
	if label == "" {
		label = metaCharset(b)
	}
	text, enc := decodeTextAs(b, label)
	if enc != "utf-8" {
		s.structure["encoding"] = enc
	}
	doc, err := html.Parse(strings.NewReader(text))
	if err != nil {
		return fmt.Errorf("%w: %w", ErrMalformed, err)
	}
	h := &htmlRenderer{s: s, lim: in.lim, outline: outline{max: 10_000}}
	if t := findTitle(doc); t != "" {
		s.structure["title"] = t
		h.ref.Label = t
	}
	h.walk(doc)
	h.flush()
	if len(h.outline.sections) > 0 {
		s.structure["sections"] = h.outline.sections
	}
	if cut {
		s.structure["inputCut"] = in.lim.MaxPartBytes
	}
	return nil
}

// metaCharsetRE finds a charset in the head of a page: <meta charset=…> or
// the content type of <meta http-equiv>, or an XML declaration's encoding.
var metaCharsetRE = regexp.MustCompile(`(?i)(?:<meta[^>]+charset\s*=\s*["']?|<\?xml[^>]+encoding\s*=\s*["'])\s*([a-z0-9_.:-]+)`)

// metaCharset is the charset the page declares in its first 4 KiB, "" for
// none.
func metaCharset(b []byte) string {
	if m := metaCharsetRE.FindSubmatch(b[:min(len(b), 4096)]); m != nil {
		return string(m[1])
	}
	return ""
}

// parseHTML parses a page that is UTF-8 already.
func parseHTML(src string) (*html.Node, error) { return html.Parse(strings.NewReader(src)) }

func findTitle(n *html.Node) string {
	return findTitleAt(n, 0)
}

func findTitleAt(n *html.Node, depth int) string {
	if depth > maxDepth {
		return ""
	}
	if n.Type == html.ElementNode && n.DataAtom == atom.Title {
		return headingText(textOf(n))
	}
	if n.Type == html.ElementNode && n.DataAtom == atom.Body {
		return ""
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if t := findTitleAt(c, depth+1); t != "" {
			return t
		}
	}
	return ""
}

// textOf is the plain text under a node, whitespace collapsed.
func textOf(n *html.Node) string {
	return strings.Join(htmlLines(n, 0, false), " ")
}

// htmlLines is the text under a node, whitespace collapsed, as one line;
// with nestTables, each table under it ends the line and adds its rows as
// lines of their own (nestedTableText), as the Word and OpenDocument
// extractors write a table nested in a cell.
func htmlLines(n *html.Node, depth int, nestTables bool) []string {
	var lines []string
	var b strings.Builder
	flush := func() {
		if line := strings.Join(strings.Fields(b.String()), " "); line != "" {
			lines = append(lines, line)
		}
		b.Reset()
	}
	var walk func(*html.Node, int)
	walk = func(n *html.Node, depth int) {
		if depth > maxDepth {
			return
		}
		switch {
		case n.Type == html.TextNode:
			b.WriteString(n.Data)
			b.WriteByte(' ')
		case n.Type == html.ElementNode && htmlSkip[n.DataAtom] && n.DataAtom != atom.Head:
			return
		case n.Type == html.ElementNode && n.DataAtom == atom.Img:
			if alt := attrOf(n, "alt"); alt != "" {
				b.WriteString(alt + " ")
			}
		case nestTables && n.Type == html.ElementNode && n.DataAtom == atom.Table:
			flush()
			if text := nestedTableText(htmlTableAt(n, depth+1)); text != "" {
				lines = append(lines, text)
			}
			return
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c, depth+1)
		}
	}
	walk(n, depth)
	flush()
	return lines
}

func attrOf(n *html.Node, key string) string {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val
		}
	}
	return ""
}

// hidden reports elements the page does not show.
func hidden(n *html.Node) bool {
	if _, ok := findAttr(n, "hidden"); ok {
		return true
	}
	if attrOf(n, "aria-hidden") == "true" {
		return true
	}
	st := strings.ReplaceAll(strings.ToLower(attrOf(n, "style")), " ", "")
	return strings.Contains(st, "display:none") || strings.Contains(st, "visibility:hidden")
}

func findAttr(n *html.Node, key string) (string, bool) {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val, true
		}
	}
	return "", false
}

// block ends the current line and leaves one blank line.
func (h *htmlRenderer) block() {
	s := h.out.String()
	switch {
	case s == "", strings.HasSuffix(s, "\n\n"):
	case strings.HasSuffix(s, "\n"):
		h.out.WriteByte('\n')
	default:
		h.out.WriteString("\n\n")
	}
}

// newline ends the current line.
func (h *htmlRenderer) newline() {
	if s := h.out.String(); s != "" && !strings.HasSuffix(s, "\n") {
		h.out.WriteByte('\n')
	}
}

// inline writes text with whitespace collapsed, a space between words
// across nodes.
func (h *htmlRenderer) inline(t string) {
	if h.pre > 0 {
		h.out.WriteString(t)
		return
	}
	words := strings.Fields(t)
	if len(words) == 0 {
		if t != "" && h.out.Len() > 0 && !h.lastSpace() {
			h.out.WriteByte(' ')
		}
		return
	}
	if isSpace(t[0]) && h.out.Len() > 0 && !h.lastSpace() {
		h.out.WriteByte(' ')
	}
	h.out.WriteString(strings.Join(words, " "))
	if isSpace(t[len(t)-1]) {
		h.out.WriteByte(' ')
	}
}

func (h *htmlRenderer) lastSpace() bool {
	s := h.out.String()
	return s == "" || isSpace(s[len(s)-1])
}

func isSpace(c byte) bool { return c == ' ' || c == '\n' || c == '\t' || c == '\r' || c == '\f' }

// flush emits the current section.
func (h *htmlRenderer) flush() bool {
	text := blankRun.ReplaceAllString(h.out.String(), "\n\n")
	var ls []string
	for _, l := range strings.Split(text, "\n") {
		ls = append(ls, strings.TrimRight(l, " \t"))
	}
	h.out.Reset()
	for _, b := range blocksOf(ls, 1, h.lim.BlockBytes) {
		if !h.s.add(content.Object{ContentType: content.Text, Data: b.text, Ref: h.ref, Metadata: cloneMap(h.md)}) {
			return false
		}
	}
	return true
}

func cloneMap(m map[string]any) map[string]any {
	if m == nil {
		return nil
	}
	c := make(map[string]any, len(m))
	for k, v := range m {
		c[k] = v
	}
	return c
}

func (h *htmlRenderer) walk(n *html.Node) {
	if h.s.full() {
		return
	}
	if h.nodes++; h.nodes > 2_000_000 {
		return
	}
	switch n.Type {
	case html.TextNode:
		h.inline(n.Data)
		return
	case html.ElementNode:
	case html.DocumentNode:
		h.children(n)
		return
	default:
		return
	}
	if htmlSkip[n.DataAtom] || hidden(n) {
		return
	}
	if level, ok := htmlHeadings[n.DataAtom]; ok {
		title := headingText(textOf(n))
		if title == "" {
			return
		}
		if !h.flush() {
			return
		}
		id := h.outline.heading(level, title, nil)
		h.ref = content.Ref{SectionID: id, Label: title, Part: h.ref.Part, Location: h.ref.Location}
		h.md = map[string]any{"heading": level}
		h.out.WriteString(strings.Repeat("#", level) + " " + title + "\n\n")
		return
	}
	switch n.DataAtom {
	case atom.Br:
		h.newline()
		if h.pre > 0 {
			h.out.WriteByte('\n')
		}
		return
	case atom.Img:
		if alt := strings.TrimSpace(attrOf(n, "alt")); alt != "" {
			h.inline(" [image: " + alt + "] ")
		}
		return
	case atom.Pre:
		h.block()
		h.out.WriteString("```\n")
		h.pre++
		h.children(n)
		h.pre--
		h.newline()
		h.out.WriteString("```")
		h.block()
		return
	case atom.Table:
		h.block()
		h.out.WriteString(markdownTable(htmlTable(n)))
		h.block()
		return
	case atom.Ul, atom.Ol:
		h.block()
		h.list = append(h.list, 0)
		if n.DataAtom == atom.Ol {
			h.list[len(h.list)-1] = 1
		}
		h.children(n)
		h.list = h.list[:len(h.list)-1]
		h.block()
		return
	case atom.Li:
		h.newline()
		depth := max(0, len(h.list)-1)
		h.out.WriteString(strings.Repeat("  ", depth))
		if len(h.list) > 0 && h.list[len(h.list)-1] > 0 {
			h.out.WriteString(strconv.Itoa(h.list[len(h.list)-1]) + ". ")
			h.list[len(h.list)-1]++
		} else {
			h.out.WriteString("- ")
		}
		h.children(n)
		h.newline()
		return
	case atom.Tr, atom.Td, atom.Th:
		// Outside a table (broken markup): a cell is a line.
		h.children(n)
		h.newline()
		return
	}
	if htmlBlock[n.DataAtom] {
		h.block()
		h.children(n)
		h.block()
		return
	}
	h.children(n)
}

// children walks a node's children; content nested deeper than maxDepth
// is left out, since the walk recurses once per level.
func (h *htmlRenderer) children(n *html.Node) {
	if h.depth >= maxDepth {
		return
	}
	h.depth++
	defer func() { h.depth-- }()
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		h.walk(c)
	}
}

// htmlTable collects a table's rows of cell texts; a table in a cell is
// written into it a row per line. colspan leaves empty cells after.
func htmlTable(t *html.Node) [][]string { return htmlTableAt(t, 0) }

func htmlTableAt(t *html.Node, depth int) [][]string {
	var rows [][]string
	var walk func(n *html.Node, depth int)
	walk = func(n *html.Node, depth int) {
		if depth > maxDepth {
			return
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			if c.Type != html.ElementNode {
				continue
			}
			switch c.DataAtom {
			case atom.Tr:
				var row []string
				for td := c.FirstChild; td != nil; td = td.NextSibling {
					if td.Type == html.ElementNode && (td.DataAtom == atom.Td || td.DataAtom == atom.Th) {
						row = append(row, strings.Join(htmlLines(td, depth+2, true), "\n"))
						if span, err := strconv.Atoi(attrOf(td, "colspan")); err == nil && span > 1 && span < 64 {
							for i := 1; i < span; i++ {
								row = append(row, "")
							}
						}
					}
				}
				if len(row) > 0 {
					rows = append(rows, row)
				}
			case atom.Thead, atom.Tbody, atom.Tfoot:
				walk(c, depth+1)
			}
		}
	}
	walk(t, depth)
	return rows
}
