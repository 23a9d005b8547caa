package main

import (
	"archive/zip"
	"bytes"
	"encoding/csv"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"mime"
	"path"
	"regexp"
	"strings"
)

// EditArgs are editDocument's arguments.
type EditArgs struct {
	File string `json:"file" description:"the document: a file id or docItem:<id>" minLength:"1"`
	// Mode picks the edit.
	Mode      string `json:"mode" description:"replaceText: replace 'find' with 'replace' (text, Markdown, CSV, DOCX paragraphs); replaceSection: replace the body of the Markdown section whose heading is 'section' with 'content'; replaceParagraph: replace the whole DOCX or text paragraph that contains 'find' (or number 'paragraph') with 'content'; append: add 'content' at the end" enum:"replaceText,replaceSection,replaceParagraph,append"`
	Find      string `json:"find,omitempty" description:"text to find (replaceText, replaceParagraph)"`
	Replace   string `json:"replace,omitempty" description:"replacement text (replaceText)"`
	All       bool   `json:"all,omitempty" description:"replace every occurrence, not only the first (replaceText)"`
	Section   string `json:"section,omitempty" description:"heading text of the section to replace (replaceSection)"`
	Paragraph int    `json:"paragraph,omitempty" description:"1-based number of the paragraph to replace, instead of find (replaceParagraph)" minimum:"0"`
	Content   string `json:"content,omitempty" description:"new text (replaceSection, replaceParagraph, append)"`
	FileName  string `json:"fileName,omitempty" description:"name of the new version (default: the document's name)"`
}

// errEdit marks an edit that does not apply to the document.
var errEdit = errors.New("edit does not apply")

// kindOf names how a document is edited: "docx", "csv" or "text".
func kindOf(name, mimeType string) (string, error) {
	mt, _, _ := mime.ParseMediaType(mimeType)
	ext := strings.ToLower(path.Ext(name))
	switch {
	case mt == docxMIME || ext == ".docx":
		return "docx", nil
	case mt == "text/csv" || ext == ".csv":
		return "csv", nil
	case strings.HasPrefix(mt, "text/") || ext == ".md" || ext == ".txt" || ext == ".markdown" || mt == "application/json":
		return "text", nil
	}
	return "", fmt.Errorf("%w: %s (%s) is not a text, Markdown, CSV or DOCX document", errEdit, name, mimeType)
}

// editDocument applies a to data and returns the new bytes and a short
// account of the change.
func editDocument(kind string, data []byte, a EditArgs) ([]byte, string, error) {
	switch kind {
	case "docx":
		return editDOCX(data, a)
	case "csv":
		out, what, err := editText(string(data), a)
		if err != nil {
			return nil, "", err
		}
		// The edit must leave a CSV with the same shape.
		before, err := parseCSV(data)
		if err != nil {
			return nil, "", fmt.Errorf("%w: the document is not valid CSV: %v", errEdit, err)
		}
		after, err := parseCSV([]byte(out))
		if err != nil {
			return nil, "", fmt.Errorf("%w: the edit breaks the CSV: %v", errEdit, err)
		}
		if len(before) > 0 && len(after) > 0 && len(before[0]) != len(after[0]) {
			return nil, "", fmt.Errorf("%w: the edit changes the CSV's columns from %d to %d", errEdit, len(before[0]), len(after[0]))
		}
		return []byte(out), what, nil
	default:
		out, what, err := editText(string(data), a)
		return []byte(out), what, err
	}
}

func parseCSV(b []byte) ([][]string, error) {
	r := csv.NewReader(bytes.NewReader(b))
	r.FieldsPerRecord = 0
	return r.ReadAll()
}

// editText edits plain text or Markdown.
func editText(s string, a EditArgs) (string, string, error) {
	switch a.Mode {
	case "replaceText":
		if a.Find == "" {
			return "", "", fmt.Errorf("%w: replaceText needs 'find'", errEdit)
		}
		n := strings.Count(s, a.Find)
		if n == 0 {
			return "", "", fmt.Errorf("%w: %q does not occur in the document", errEdit, clip(a.Find))
		}
		if a.All {
			return strings.ReplaceAll(s, a.Find, a.Replace), fmt.Sprintf("replaced %d occurrence(s)", n), nil
		}
		return strings.Replace(s, a.Find, a.Replace, 1), fmt.Sprintf("replaced the first of %d occurrence(s)", n), nil
	case "replaceSection":
		return replaceSection(s, a.Section, a.Content)
	case "replaceParagraph":
		paras := strings.Split(strings.ReplaceAll(s, "\r\n", "\n"), "\n\n")
		i, err := pickParagraph(len(paras), func(i int) string { return paras[i] }, a)
		if err != nil {
			return "", "", err
		}
		paras[i] = strings.TrimSpace(a.Content)
		return strings.Join(paras, "\n\n"), fmt.Sprintf("replaced paragraph %d", i+1), nil
	case "append":
		if a.Content == "" {
			return "", "", fmt.Errorf("%w: append needs 'content'", errEdit)
		}
		return strings.TrimRight(s, "\n") + "\n\n" + a.Content + "\n", "appended the content", nil
	}
	return "", "", fmt.Errorf("%w: unknown mode %q", errEdit, a.Mode)
}

// pickParagraph finds the paragraph an edit names: by number, else the
// only one containing Find.
func pickParagraph(n int, text func(int) string, a EditArgs) (int, error) {
	if a.Paragraph > 0 {
		if a.Paragraph > n {
			return 0, fmt.Errorf("%w: paragraph %d, and the document has %d", errEdit, a.Paragraph, n)
		}
		return a.Paragraph - 1, nil
	}
	if a.Find == "" {
		return 0, fmt.Errorf("%w: replaceParagraph needs 'find' or 'paragraph'", errEdit)
	}
	var hits []int
	for i := range n {
		if strings.Contains(text(i), a.Find) {
			hits = append(hits, i)
		}
	}
	switch len(hits) {
	case 0:
		return 0, fmt.Errorf("%w: no paragraph contains %q", errEdit, clip(a.Find))
	case 1:
		return hits[0], nil
	}
	return 0, fmt.Errorf("%w: %d paragraphs contain %q (numbers %v): name one with 'paragraph'", errEdit, len(hits), clip(a.Find), plus1(hits))
}

func plus1(xs []int) []int {
	out := make([]int, len(xs))
	for i, x := range xs {
		out[i] = x + 1
	}
	return out
}

var atxHeading = regexp.MustCompile(`^(#{1,6})[ \t]+(.*?)[ \t#]*$`)

// replaceSection replaces the body under a Markdown heading, up to the next
// heading of the same or a higher level.
func replaceSection(s, section, content string) (string, string, error) {
	want := strings.ToLower(strings.TrimSpace(section))
	if want == "" {
		return "", "", fmt.Errorf("%w: replaceSection needs 'section' (a heading's text)", errEdit)
	}
	lines := strings.Split(strings.ReplaceAll(s, "\r\n", "\n"), "\n")
	start, level := -1, 0
	var headings []string
	inFence := false
	for i, ln := range lines {
		if strings.HasPrefix(strings.TrimSpace(ln), "```") {
			inFence = !inFence
		}
		if inFence {
			continue
		}
		m := atxHeading.FindStringSubmatch(ln)
		if m == nil {
			continue
		}
		if start >= 0 && len(m[1]) <= level {
			out := append(append(append([]string{}, lines[:start+1]...), "", strings.TrimSpace(content), ""), lines[i:]...)
			return strings.Join(out, "\n"), fmt.Sprintf("replaced section %q", section), nil
		}
		headings = append(headings, m[2])
		if start < 0 && strings.ToLower(strings.TrimSpace(m[2])) == want {
			start, level = i, len(m[1])
		}
	}
	if start < 0 {
		return "", "", fmt.Errorf("%w: no heading %q (headings: %s)", errEdit, section, strings.Join(headings, "; "))
	}
	out := append(append([]string{}, lines[:start+1]...), "", strings.TrimSpace(content))
	return strings.Join(out, "\n") + "\n", fmt.Sprintf("replaced section %q", section), nil
}

func clip(s string) string {
	if len(s) > 80 {
		return s[:80] + "…"
	}
	return s
}

// DOCX editing works on word/document.xml's paragraphs (w:p): a paragraph's
// text is its runs' w:t text; an edited paragraph keeps its properties
// (style, numbering) and its first run's formatting, and gets the new text
// as one run. Every other part of the package is copied unchanged.

var (
	pOpen   = regexp.MustCompile(`<w:p[ >/]`)
	tText   = regexp.MustCompile(`(?s)<w:t(?: [^>]*)?>(.*?)</w:t>|<w:t(?: [^>]*)?/>`)
	pPrRe   = regexp.MustCompile(`(?s)^<w:p(?: [^>]*)?>\s*(<w:pPr>.*?</w:pPr>|<w:pPr/>)?`)
	firstRP = regexp.MustCompile(`(?s)<w:r(?: [^>]*)?>\s*(<w:rPr>.*?</w:rPr>)`)
)

// span is a paragraph's byte range in document.xml.
type span struct{ start, end int }

// paragraphs finds the top-level w:p elements (a paragraph inside a text
// box inside a paragraph belongs to the outer one).
func docxParagraphs(doc string) []span {
	var out []span
	i := 0
	for {
		loc := pOpen.FindStringIndex(doc[i:])
		if loc == nil {
			return out
		}
		start := i + loc[0]
		// <w:p/> is an empty paragraph.
		gt := strings.IndexByte(doc[start:], '>')
		if gt < 0 {
			return out
		}
		if doc[start+gt-1] == '/' {
			out = append(out, span{start, start + gt + 1})
			i = start + gt + 1
			continue
		}
		depth, j := 1, start+gt+1
		for depth > 0 {
			nextOpen := pOpen.FindStringIndex(doc[j:])
			nextClose := strings.Index(doc[j:], "</w:p>")
			if nextClose < 0 {
				return out
			}
			if nextOpen != nil && nextOpen[0] < nextClose {
				k := j + nextOpen[0]
				g := strings.IndexByte(doc[k:], '>')
				if g > 0 && doc[k+g-1] != '/' {
					depth++
				}
				j = k + max(g, 1)
				continue
			}
			depth--
			j += nextClose + len("</w:p>")
		}
		out = append(out, span{start, j})
		i = j
	}
}

// paraText is the text of a paragraph's runs.
func paraText(p string) string {
	var b strings.Builder
	for _, m := range tText.FindAllStringSubmatch(p, -1) {
		b.WriteString(unescapeXML(m[1]))
	}
	return b.String()
}

func unescapeXML(s string) string {
	var out strings.Builder
	d := xml.NewDecoder(strings.NewReader("<x>" + s + "</x>"))
	for {
		tok, err := d.Token()
		if err != nil {
			break
		}
		if cd, ok := tok.(xml.CharData); ok {
			out.Write(cd)
		}
	}
	return out.String()
}

// rewrite gives paragraph p the text, keeping its properties and first
// run's formatting.
func rewrite(p, text string) string {
	open := p[:strings.IndexByte(p, '>')+1]
	if strings.HasSuffix(open, "/>") {
		open = strings.TrimSuffix(open, "/>") + ">"
	}
	ppr := ""
	if m := pPrRe.FindStringSubmatch(p); m != nil {
		ppr = m[1]
	}
	rpr := ""
	if m := firstRP.FindStringSubmatch(p); m != nil {
		rpr = m[1]
	}
	r := runs(text, false)
	r = strings.Replace(r, "<w:r>", "<w:r>"+rpr, 1)
	return open + ppr + r + "</w:p>"
}

func editDOCX(data []byte, a EditArgs) ([]byte, string, error) {
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return nil, "", fmt.Errorf("%w: not a DOCX package: %v", errEdit, err)
	}
	var docFile *zip.File
	for _, f := range zr.File {
		if f.Name == "word/document.xml" {
			docFile = f
		}
	}
	if docFile == nil {
		return nil, "", fmt.Errorf("%w: the package has no word/document.xml", errEdit)
	}
	rc, err := docFile.Open()
	if err != nil {
		return nil, "", err
	}
	raw, err := io.ReadAll(io.LimitReader(rc, 64<<20))
	rc.Close()
	if err != nil {
		return nil, "", err
	}
	doc := string(raw)
	paras := docxParagraphs(doc)
	texts := make([]string, len(paras))
	for i, sp := range paras {
		texts[i] = paraText(doc[sp.start:sp.end])
	}
	type change struct {
		i    int
		text string
	}
	var changes []change
	var what string
	switch a.Mode {
	case "replaceText":
		if a.Find == "" {
			return nil, "", fmt.Errorf("%w: replaceText needs 'find'", errEdit)
		}
		n := 0
		for i, t := range texts {
			c := strings.Count(t, a.Find)
			if c == 0 || (!a.All && n > 0) {
				continue
			}
			if a.All {
				changes = append(changes, change{i, strings.ReplaceAll(t, a.Find, a.Replace)})
				n += c
			} else {
				changes = append(changes, change{i, strings.Replace(t, a.Find, a.Replace, 1)})
				n++
			}
		}
		if n == 0 {
			return nil, "", fmt.Errorf("%w: %q does not occur in any paragraph (text split by a line break is not matched)", errEdit, clip(a.Find))
		}
		what = fmt.Sprintf("replaced %d occurrence(s) in %d paragraph(s)", n, len(changes))
	case "replaceParagraph":
		i, err := pickParagraph(len(texts), func(i int) string { return texts[i] }, a)
		if err != nil {
			return nil, "", err
		}
		changes = append(changes, change{i, a.Content})
		what = fmt.Sprintf("replaced paragraph %d", i+1)
	case "append":
		if a.Content == "" {
			return nil, "", fmt.Errorf("%w: append needs 'content'", errEdit)
		}
		k := strings.LastIndex(doc, "<w:sectPr")
		if k < 0 {
			k = strings.LastIndex(doc, "</w:body>")
		}
		if k < 0 {
			return nil, "", fmt.Errorf("%w: word/document.xml has no body", errEdit)
		}
		var add strings.Builder
		for _, p := range strings.Split(strings.TrimSpace(a.Content), "\n\n") {
			add.WriteString(para("", strings.TrimSpace(p), false))
		}
		doc = doc[:k] + add.String() + doc[k:]
		what = "appended the content"
	case "replaceSection":
		return nil, "", fmt.Errorf("%w: replaceSection works on Markdown; for DOCX use replaceParagraph", errEdit)
	default:
		return nil, "", fmt.Errorf("%w: unknown mode %q", errEdit, a.Mode)
	}
	// Apply from the end so earlier offsets stay valid.
	for k := len(changes) - 1; k >= 0; k-- {
		sp := paras[changes[k].i]
		doc = doc[:sp.start] + rewrite(doc[sp.start:sp.end], changes[k].text) + doc[sp.end:]
	}

	var out bytes.Buffer
	zw := zip.NewWriter(&out)
	for _, f := range zr.File {
		h := f.FileHeader
		if f.Name == "word/document.xml" {
			h.Method = zip.Deflate
			w, err := zw.CreateHeader(&zip.FileHeader{Name: h.Name, Method: zip.Deflate, Modified: h.Modified})
			if err != nil {
				return nil, "", err
			}
			if _, err := io.WriteString(w, doc); err != nil {
				return nil, "", err
			}
			continue
		}
		// Other parts are copied byte for byte, still compressed.
		if err := zw.Copy(f); err != nil {
			return nil, "", err
		}
	}
	if err := zw.Close(); err != nil {
		return nil, "", err
	}
	return out.Bytes(), what, nil
}
