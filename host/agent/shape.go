package agent

import (
	"fmt"
	"strings"
)

// shape is what a large result holds, told to the model beside its head so
// it can decide what to read: pages, sections, rows, entries, bytes.
type shape struct {
	summary   string
	mime, ext string
}

// maxShapeKeys bounds the top-level keys of a JSON object the shape names.
const maxShapeKeys = 12

// describeShape looks at text in one pass or two (a 10 MB result takes
// milliseconds): JSON arrays and objects by their entries, delimited rows
// by rows and columns, pages by form feeds (pdftotext's page break),
// sections by Markdown headings, and always lines and bytes.
func describeShape(text string) shape {
	s := shape{mime: "text/plain", ext: "txt"}
	var parts []string
	trimmed := strings.TrimSpace(text)
	if j, ok := jsonShape(trimmed); ok {
		s.mime, s.ext = "application/json", "json"
		parts = append(parts, j)
	} else if rows, cols, sep, ok := delimited(text); ok {
		s.mime, s.ext = "text/csv", "csv"
		if sep == '\t' {
			s.mime, s.ext = "text/tab-separated-values", "tsv"
		}
		parts = append(parts, fmt.Sprintf("a table of %d rows (the first a header) and %d columns", rows, cols))
	}
	if n := strings.Count(text, "\f"); n > 0 {
		parts = append(parts, fmt.Sprintf("%d pages (form-feed separated)", n+1))
	}
	if n := headings(text); n > 0 {
		parts = append(parts, fmt.Sprintf("%d sections (Markdown headings)", n))
		if s.ext == "txt" {
			s.mime, s.ext = "text/markdown", "md"
		}
	}
	lines := strings.Count(text, "\n")
	if !strings.HasSuffix(text, "\n") && text != "" {
		lines++
	}
	parts = append(parts, fmt.Sprintf("%d lines", lines), fmt.Sprintf("%d bytes", len(text)))
	s.summary = strings.Join(parts, "; ")
	return s
}

// jsonShape describes a JSON array by its entries and an object by its
// keys (and the entries of the arrays they hold), with a scanner that
// tracks strings and depth only: no value is decoded. ok is false for text
// that is not a JSON array or object.
func jsonShape(t string) (string, bool) {
	if len(t) < 2 || !((t[0] == '[' && t[len(t)-1] == ']') || (t[0] == '{' && t[len(t)-1] == '}')) {
		return "", false
	}
	depth, inStr, esc := 0, false, false
	entries := 0        // top-level array entries
	nonEmpty := false   // whether the current top-level container has content
	var keys []string   // top-level object keys
	var counts []int    // entries of the array value of each key, -1 for other values
	keyStart := -1      // start of a string at depth 1 that may be a key
	expectKey := true   // at depth 1 of an object: the next string is a key
	childArray := false // the current top-level value is an array
	childNonEmpty := false
	for i := 0; i < len(t); i++ {
		ch := t[i]
		if inStr {
			switch {
			case esc:
				esc = false
			case ch == '\\':
				esc = true
			case ch == '"':
				inStr = false
				if keyStart >= 0 && depth == 1 && t[0] == '{' && expectKey {
					keys = append(keys, t[keyStart:i])
					counts = append(counts, -1)
					expectKey = false
				}
				keyStart = -1
			}
			continue
		}
		switch ch {
		case '"':
			inStr = true
			if depth == 1 {
				keyStart = i + 1
				nonEmpty = true
			}
			if depth == 2 && childArray {
				childNonEmpty = true
			}
		case '[', '{':
			depth++
			if depth == 2 {
				nonEmpty = true
				if t[0] == '{' && ch == '[' && len(counts) > 0 {
					childArray, childNonEmpty = true, false
					counts[len(counts)-1] = 0
				}
			} else if depth == 3 && childArray {
				childNonEmpty = true
			}
		case ']', '}':
			if depth == 2 && childArray {
				if childNonEmpty {
					counts[len(counts)-1]++
				}
				childArray = false
			}
			depth--
			if depth < 0 {
				return "", false
			}
		case ',':
			switch {
			case depth == 1 && t[0] == '[':
				entries++
			case depth == 1:
				expectKey = true
			case depth == 2 && childArray:
				counts[len(counts)-1]++
			}
		case ' ', '\t', '\n', '\r', ':':
		default:
			if depth == 1 {
				nonEmpty = true
			}
			if depth == 2 && childArray {
				childNonEmpty = true
			}
		}
	}
	if depth != 0 || inStr {
		return "", false
	}
	if t[0] == '[' {
		if nonEmpty {
			entries++
		}
		return fmt.Sprintf("a JSON array of %d entries", entries), true
	}
	var b strings.Builder
	fmt.Fprintf(&b, "a JSON object with %d keys", len(keys))
	for i, k := range keys {
		if i == maxShapeKeys {
			fmt.Fprintf(&b, ", … (%d more)", len(keys)-i)
			break
		}
		sep := ", "
		if i == 0 {
			sep = ": "
		}
		if counts[i] >= 0 {
			fmt.Fprintf(&b, "%s%q (an array of %d entries)", sep, clipText(k, 60), counts[i])
		} else {
			fmt.Fprintf(&b, "%s%q", sep, clipText(k, 60))
		}
	}
	return b.String(), true
}

// delimited reports a table of comma-, semicolon- or tab-separated rows:
// the first lines (up to 20) have the same number of separators, at least
// one, outside quotes.
func delimited(text string) (rows, cols int, sep byte, ok bool) {
	lines := strings.SplitN(text, "\n", 21)
	if len(lines) < 3 {
		return 0, 0, 0, false
	}
	if len(lines) == 21 {
		lines = lines[:20] // the last holds the rest of the text
	}
	for _, sep = range []byte{'\t', ',', ';'} {
		want := -1
		same := true
		for _, l := range lines {
			l = strings.TrimRight(l, "\r")
			if l == "" {
				continue
			}
			n := countOutsideQuotes(l, sep)
			if want < 0 {
				want = n
			}
			if n != want || n == 0 {
				same = false
				break
			}
		}
		if same && want > 0 {
			rows = strings.Count(text, "\n")
			if !strings.HasSuffix(text, "\n") {
				rows++
			}
			return rows, want + 1, sep, true
		}
	}
	return 0, 0, 0, false
}

func countOutsideQuotes(l string, sep byte) int {
	n, quoted := 0, false
	for i := 0; i < len(l); i++ {
		switch l[i] {
		case '"':
			quoted = !quoted
		case sep:
			if !quoted {
				n++
			}
		}
	}
	return n
}

// headings counts Markdown ATX headings ("# ", "## " at a line's start).
func headings(text string) int {
	n := 0
	for i := 0; i < len(text); {
		j := strings.IndexByte(text[i:], '\n')
		line := text[i:]
		if j >= 0 {
			line = text[i : i+j]
		}
		if strings.HasPrefix(line, "#") {
			k := strings.IndexFunc(line, func(r rune) bool { return r != '#' })
			if k > 0 && k <= 6 && line[k] == ' ' {
				n++
			}
		}
		if j < 0 {
			break
		}
		i += j + 1
	}
	return n
}
