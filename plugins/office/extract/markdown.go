package extract

import (
	"context"
	"strings"

	"github.com/agenthost/agenthost/pdk/content"
)

// mdHeading is a heading line of a Markdown file.
type mdHeading struct {
	line  int // index into the lines; for setext headings the text line
	level int
	title string
}

// markdownHeadings finds ATX ("## Title") and setext (underlined)
// headings, ignoring fenced code blocks.
func markdownHeadings(ls []string) []mdHeading {
	var (
		out   []mdHeading
		fence string // the open fence ("```" or "~~~"), "" outside code
	)
	for i, l := range ls {
		t := strings.TrimLeft(l, " ")
		if len(l)-len(t) > 3 {
			continue // indented code
		}
		if f := fenceOf(t); f != "" {
			switch {
			case fence == "":
				fence = f
			case strings.HasPrefix(f, fence) && strings.TrimSpace(strings.TrimLeft(t, fence[:1])) == "":
				fence = ""
			}
			continue
		}
		if fence != "" {
			continue
		}
		if level := atxLevel(t); level > 0 {
			title := strings.TrimSpace(strings.TrimLeft(t, "#"))
			// A closing run of #s is not part of the title.
			if trimmed := strings.TrimRight(title, "#"); trimmed == "" || strings.HasSuffix(trimmed, " ") {
				title = strings.TrimSpace(trimmed)
			}
			out = append(out, mdHeading{line: i, level: level, title: title})
			continue
		}
		if i > 0 && !isBlank(ls[i-1]) && (len(out) == 0 || out[len(out)-1].line != i-1) {
			u := strings.TrimSpace(t)
			if u != "" && (strings.Trim(u, "=") == "" || (strings.Trim(u, "-") == "" && len(u) >= 2)) {
				prev := strings.TrimSpace(ls[i-1])
				if !strings.HasPrefix(prev, "- ") && !strings.HasPrefix(prev, "* ") && !strings.HasPrefix(prev, "|") {
					level := 1
					if u[0] == '-' {
						level = 2
					}
					out = append(out, mdHeading{line: i - 1, level: level, title: prev})
				}
			}
		}
	}
	return out
}

func fenceOf(t string) string {
	for _, f := range []string{"```", "~~~"} {
		if strings.HasPrefix(t, f) {
			n := len(t) - len(strings.TrimLeft(t, f[:1]))
			return strings.Repeat(f[:1], n)
		}
	}
	return ""
}

func atxLevel(t string) int {
	n := len(t) - len(strings.TrimLeft(t, "#"))
	if n < 1 || n > 6 {
		return 0
	}
	if len(t) > n && t[n] != ' ' && t[n] != '\t' {
		return 0
	}
	return n
}

// extractMarkdown emits one object per section (split further when long),
// each with its heading as Label and its outline number as SectionID.
func extractMarkdown(ctx context.Context, in input, s *sink) error {
	b, cut, err := readInput(in)
	if err != nil {
		return err
	}
	ls := lines(decodeText(b))
	hs := markdownHeadings(ls)
	o := outline{max: 10_000}
	start := 0
	emit := func(end int, ref content.Ref, md map[string]any) bool {
		return emitLineBlocks(s, ls[start:end], start+1, in.lim.BlockBytes, ref, md)
	}
	ref, md := content.Ref{}, map[string]any(nil)
	for _, h := range hs {
		if !emit(h.line, ref, md) {
			break
		}
		title := headingText(h.title)
		id := o.heading(h.level, title, map[string]any{"line": h.line + 1})
		ref = content.Ref{SectionID: id, Label: title}
		md = map[string]any{"heading": h.level}
		start = h.line
	}
	if !s.full() {
		emit(len(ls), ref, md)
	}
	s.structure["lines"] = len(ls)
	if len(o.sections) > 0 {
		s.structure["sections"] = o.sections
	}
	if cut {
		s.structure["inputCut"] = in.lim.MaxPartBytes
	}
	return nil
}
