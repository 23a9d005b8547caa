package extract

import (
	"bytes"
	"context"
	"encoding/xml"
	"fmt"
	"io"
	"strings"

	"golang.org/x/net/html/charset"

	"github.com/agenthost/agenthost/pdk/content"
)

// newTextXMLDecoder reads a document's XML as leniently as a reader of its
// text needs (not well-formed, any declared charset) while it expands no
// entity beyond XML's own, unlike newXMLDecoder's HTML ones for parts of
// office packages.
func newTextXMLDecoder(b []byte) *xml.Decoder {
	d := xml.NewDecoder(bytes.NewReader(b))
	d.Strict = false
	d.CharsetReader = charset.NewReaderLabel
	return d
}

// extractXML pretty-prints XML, one element per line and short text on its
// element's line, split into blocks at the root's children (Location
// "xml:/root/*[A-B]"). Comments, processing instructions and the DOCTYPE
// are left out; entities are never expanded beyond XML's own, so entity
// bombs do nothing. Text that is not well-formed XML is extracted as plain
// text.
func extractXML(ctx context.Context, in input, s *sink) error {
	b, cut, err := readInput(in)
	if err != nil {
		return err
	}
	d := newTextXMLDecoder(b)
	var (
		buf      strings.Builder
		depth    int
		root     string
		first    = 1  // index of the first root child in buf
		child    int  // root children so far
		open     bool // the last start tag is not closed yet: its '>' is pending
		inline   bool // the last line is a start tag followed by its text
		elements int
	)
	indent := func() {
		if open {
			buf.WriteByte('>')
			open = false
		}
		if buf.Len() > 0 {
			buf.WriteByte('\n')
		}
		buf.WriteString(strings.Repeat("  ", min(depth, 40)))
	}
	flush := func() bool {
		if strings.TrimSpace(buf.String()) == "" {
			return true
		}
		loc := "xml:/" + root
		switch {
		case child == 0:
		case first == child:
			loc += fmt.Sprintf("/*[%d]", first)
		default:
			loc += fmt.Sprintf("/*[%d-%d]", first, child)
		}
		ok := s.add(content.Object{ContentType: content.Text, Data: buf.String(), Ref: content.Ref{Location: loc}})
		buf.Reset()
		first = child + 1
		return ok
	}
	for {
		t, err := d.RawToken()
		if err != nil {
			if elements == 0 {
				s.structure["invalid"] = err.Error()
				return extractPlain(ctx, in, s)
			}
			if !cut && err != io.EOF {
				s.structure["error"] = err.Error()
			}
			break
		}
		switch e := t.(type) {
		case xml.StartElement:
			elements++
			if depth == 0 && root == "" {
				root = qname(e.Name)
			}
			if depth == 1 {
				child++
			}
			indent()
			buf.WriteString("<" + qname(e.Name))
			for _, a := range e.Attr {
				buf.WriteString(" " + qname(a.Name) + `="`)
				xml.EscapeText(&buf, []byte(a.Value))
				buf.WriteByte('"')
			}
			depth++
			open, inline = true, false
		case xml.CharData:
			text := strings.TrimSpace(string(e))
			if text == "" {
				continue
			}
			if open && !strings.Contains(text, "\n") && len(text) < 200 {
				buf.WriteByte('>')
				open, inline = false, true
			} else {
				indent()
			}
			xml.EscapeText(&buf, []byte(text))
		case xml.EndElement:
			depth = max(0, depth-1)
			switch {
			case open:
				buf.WriteString("/>")
			case inline:
				buf.WriteString("</" + qname(e.Name) + ">")
			default:
				indent()
				buf.WriteString("</" + qname(e.Name) + ">")
			}
			open, inline = false, false
			if depth == 1 && buf.Len() >= in.lim.BlockBytes && !flush() {
				return nil
			}
		}
	}
	flush()
	s.structure["elements"] = elements
	s.structure["root"] = root
	if cut {
		s.structure["inputCut"] = in.lim.MaxPartBytes
	}
	return nil
}

// qname writes a raw name with its prefix, as it stood in the file.
func qname(n xml.Name) string {
	if n.Space == "" {
		return n.Local
	}
	return n.Space + ":" + n.Local
}
