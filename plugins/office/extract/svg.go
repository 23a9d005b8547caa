package extract

import (
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/agenthost/agenthost/pdk/content"
)

// mimeSVG is a Scalable Vector Graphics drawing.
const mimeSVG = "image/svg+xml"

// svgTextElements hold a drawing's words: its text (with the spans and
// paths along which text runs inside it), its title and description.
var svgTextElements = map[string]bool{"text": true, "title": true, "desc": true}

// extractSVG reads an SVG drawing's words: each <text> element a line
// (its <tspan> and <textPath> runs joined), the drawing's <title> and
// <desc>; markup, styles, scripts and path data are left out. The
// drawing's size is structure. Entities are not expanded beyond XML's
// own.
func extractSVG(ctx context.Context, in input, s *sink) error {
	b, cut, err := readInput(in)
	if err != nil {
		return err
	}
	d := newTextXMLDecoder(b)
	var (
		lines     []string
		cur       strings.Builder
		textDepth int // depth inside a text element
		depth     int
		root      bool
		title     string
		elements  int
	)
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			if !root {
				return fmt.Errorf("%w: not an SVG drawing: %w", ErrMalformed, err)
			}
			s.truncated = "the drawing's XML is damaged past this point: " + err.Error()
			break
		}
		switch t := tok.(type) {
		case xml.StartElement:
			depth++
			elements++
			if depth > 256 || elements > 1_000_000 {
				return fmt.Errorf("%w: an SVG nested deeper than 256 elements or of more than a million", ErrLimit)
			}
			if !root {
				if t.Name.Local != "svg" {
					return fmt.Errorf("%w: not an SVG drawing (its root is <%s>)", ErrMalformed, t.Name.Local)
				}
				root = true
				for _, a := range t.Attr {
					if a.Name.Local == "width" || a.Name.Local == "height" || a.Name.Local == "viewBox" {
						s.structure[a.Name.Local] = a.Value
					}
				}
				continue
			}
			if textDepth > 0 || svgTextElements[t.Name.Local] {
				textDepth++
			}
		case xml.EndElement:
			depth--
			if textDepth > 0 {
				textDepth--
				if textDepth == 0 {
					if line := strings.Join(strings.Fields(cur.String()), " "); line != "" {
						if t.Name.Local == "title" && title == "" {
							title = line
						}
						lines = append(lines, line)
					}
					cur.Reset()
				}
			}
		case xml.CharData:
			if textDepth > 0 && cur.Len() < 1<<20 {
				cur.Write(t)
				cur.WriteByte(' ')
			}
		}
	}
	if !root {
		return fmt.Errorf("%w: not an SVG drawing", ErrMalformed)
	}
	if title != "" {
		s.structure["title"] = title
	}
	s.structure["texts"] = len(lines)
	if len(lines) > 0 {
		emitLineBlocks(s, lines, 1, in.lim.BlockBytes, content.Ref{Label: title}, nil)
	}
	if cut {
		s.structure["inputCut"] = in.lim.MaxPartBytes
	}
	return nil
}
