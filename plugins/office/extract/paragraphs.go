package extract

import (
	"strconv"
	"strings"

	"github.com/agenthost/agenthost/pdk/content"
)

// paragraphRange is a Location for paragraphs a to b of a part.
func paragraphRange(a, b int) string {
	if a == b {
		return "paragraph:" + strconv.Itoa(a)
	}
	return "paragraph:" + strconv.Itoa(a) + "-" + strconv.Itoa(b)
}

// emitParagraphs adds the non-empty paragraphs of one part (numbered from 1
// in order, empty ones not counted, as for DOCX) as text objects of about
// size bytes each: Ref.Part is the part, Ref.Paragraph the first paragraph
// of the block, Location "paragraph:A-B", Metadata["lastParagraph"] the
// last when it differs. It returns the number of paragraphs, and false
// once the sink is full.
func emitParagraphs(s *sink, part string, paras []string, size int) (int, bool) {
	n := 0
	var b strings.Builder
	first := 0
	flush := func() bool {
		if b.Len() == 0 {
			return true
		}
		var md map[string]any
		if n > first {
			md = map[string]any{"lastParagraph": n}
		}
		ok := s.add(content.Object{ContentType: content.Text, Data: b.String(), Metadata: md,
			Ref: content.Ref{Part: part, Paragraph: first, Location: paragraphRange(first, n)}})
		b.Reset()
		return ok
	}
	for _, p := range paras {
		p = strings.TrimSpace(p)
		if p == "" {
			continue
		}
		if b.Len() > 0 && b.Len()+len(p) > size {
			if !flush() {
				return n, false
			}
		}
		n++
		if b.Len() == 0 {
			first = n
		} else {
			b.WriteString("\n\n")
		}
		b.WriteString(p)
	}
	return n, flush()
}
