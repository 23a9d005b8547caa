package extract

import (
	"context"
	"encoding/binary"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf16"

	"github.com/agenthost/agenthost/pdk/content"
)

// Record types of the PowerPoint 97-2003 binary format (MS-PPT 2.13.24).
const (
	pptDocument        = 0x03E8
	pptSlide           = 0x03EE
	pptNotes           = 0x03F0
	pptNotesAtom       = 0x03F1
	pptSlidePersist    = 0x03F3
	pptSlideShowInfo   = 0x03F9
	pptSlideList       = 0x0FF0
	pptUserEdit        = 0x0FF5
	pptCurrentUserAtom = 0x0FF6
	pptTextHeader      = 0x0F9F
	pptTextChars       = 0x0FA0
	pptTextBytes       = 0x0FA8
	pptPersistDir      = 0x1772

	pptTokenPlain     = 0xE391C05F // CurrentUserAtom.headerToken of an unencrypted file
	pptTokenEncrypted = 0xF3D1C4DF
	pptMaxDepth       = 64 // container nesting followed; real files use fewer than 10
	pptMaxEdits       = 4096
)

// pptRec is one record: its header fields and its body.
type pptRec struct {
	ver, inst, typ uint16
	data           []byte
}

// pptAt reads the record at off in b; ok is false when its header or body
// does not fit.
func pptAt(b []byte, off int64) (pptRec, bool) {
	if off < 0 || off+8 > int64(len(b)) {
		return pptRec{}, false
	}
	vi := binary.LittleEndian.Uint16(b[off:])
	n := int64(binary.LittleEndian.Uint32(b[off+4:]))
	if off+8+n > int64(len(b)) {
		return pptRec{}, false
	}
	return pptRec{ver: vi & 0xF, inst: vi >> 4, typ: binary.LittleEndian.Uint16(b[off+2:]), data: b[off+8 : off+8+n]}, true
}

// pptChildren splits a container's body into its records; a record that
// runs past the body ends the list (ok false).
func pptChildren(b []byte) (recs []pptRec, ok bool) {
	for off := int64(0); off < int64(len(b)); {
		r, fits := pptAt(b, off)
		if !fits {
			return recs, false
		}
		recs = append(recs, r)
		off += 8 + int64(len(r.data))
	}
	return recs, true
}

// pptText decodes a TextCharsAtom (UTF-16LE) or TextBytesAtom (the low
// bytes of UTF-16 code units, that is Latin-1): carriage returns end
// paragraphs, vertical tabs break lines.
func pptText(r pptRec) string {
	var s string
	if r.typ == pptTextChars {
		u := make([]uint16, len(r.data)/2)
		for i := range u {
			u[i] = binary.LittleEndian.Uint16(r.data[2*i:])
		}
		s = string(utf16.Decode(u))
	} else {
		rs := make([]rune, len(r.data))
		for i, c := range r.data {
			rs[i] = rune(c)
		}
		s = string(rs)
	}
	s = strings.NewReplacer("\r", "\n", "\v", "\n", "\x00", "").Replace(s)
	return strings.TrimSpace(s)
}

// pptTexts is the text of a slide or notes: its text atoms in order, the
// title (a TextHeaderAtom of type title or centred title) apart.
type pptTexts struct {
	title  string
	blocks []string
	hidden bool
}

func (t *pptTexts) add(headerType uint32, s string) {
	if s == "" || s == "*" { // "*" stands for a field (slide number, date) drawn by the master
		return
	}
	if t.title == "" && (headerType == 0 || headerType == 6) {
		t.title = s
		return
	}
	t.blocks = append(t.blocks, s)
}

// walk collects the text atoms of a container's tree (its drawing's text
// boxes included), depth-first in file order.
func (t *pptTexts) walk(b []byte, depth int) {
	recs, _ := pptChildren(b)
	header := uint32(0xFFFF)
	for _, r := range recs {
		switch {
		case r.typ == pptTextHeader && len(r.data) >= 4:
			header = binary.LittleEndian.Uint32(r.data)
		case r.typ == pptTextChars || r.typ == pptTextBytes:
			t.add(header, pptText(r))
			header = 0xFFFF
		case r.typ == pptSlideShowInfo && len(r.data) >= 12:
			t.hidden = binary.LittleEndian.Uint16(r.data[10:])&0x0004 != 0
		case r.ver == 0xF && depth < pptMaxDepth:
			t.walk(r.data, depth+1)
		}
	}
}

// pptPersist follows the chain of user edits from the current one to the
// first, and returns the persist directory (persist id → stream offset,
// later edits winning) and the document's persist id. An encrypted file is
// an ErrEncrypted; a broken chain an ErrMalformed.
func pptPersist(doc []byte, cur []byte) (map[uint32]int64, uint32, error) {
	cu, ok := pptAt(cur, 0)
	if !ok || cu.typ != pptCurrentUserAtom || len(cu.data) < 12 {
		return nil, 0, fmt.Errorf("%w: a PowerPoint 97-2003 presentation whose Current User stream is unreadable", ErrMalformed)
	}
	switch binary.LittleEndian.Uint32(cu.data[4:]) {
	case pptTokenEncrypted:
		return nil, 0, fmt.Errorf("%w: a password-protected PowerPoint 97-2003 presentation", ErrEncrypted)
	case pptTokenPlain:
	default:
		return nil, 0, fmt.Errorf("%w: a PowerPoint presentation whose Current User stream is not PowerPoint 97-2003's", ErrMalformed)
	}
	dir := map[uint32]int64{}
	var docRef uint32
	seen := map[int64]bool{}
	for off := int64(binary.LittleEndian.Uint32(cu.data[8:])); ; {
		if seen[off] || len(seen) >= pptMaxEdits {
			return nil, 0, fmt.Errorf("%w: the PowerPoint edit chain loops", ErrMalformed)
		}
		seen[off] = true
		ue, ok := pptAt(doc, off)
		if !ok || ue.typ != pptUserEdit || len(ue.data) < 28 {
			return nil, 0, fmt.Errorf("%w: no PowerPoint user edit at offset %d", ErrMalformed, off)
		}
		if len(ue.data) >= 32 && binary.LittleEndian.Uint32(ue.data[28:]) != 0 {
			return nil, 0, fmt.Errorf("%w: a password-protected PowerPoint 97-2003 presentation (an encrypted session)", ErrEncrypted)
		}
		if docRef == 0 {
			docRef = binary.LittleEndian.Uint32(ue.data[16:])
		}
		pd, ok := pptAt(doc, int64(binary.LittleEndian.Uint32(ue.data[12:])))
		if !ok || pd.typ != pptPersistDir {
			return nil, 0, fmt.Errorf("%w: a PowerPoint user edit whose persist directory is missing", ErrMalformed)
		}
		for i := 0; i+4 <= len(pd.data); {
			v := binary.LittleEndian.Uint32(pd.data[i:])
			id, n := v&0xFFFFF, int(v>>20)
			i += 4
			if i+4*n > len(pd.data) {
				return nil, 0, fmt.Errorf("%w: a cut PowerPoint persist directory", ErrMalformed)
			}
			for k := range n {
				if _, newer := dir[id+uint32(k)]; !newer {
					dir[id+uint32(k)] = int64(binary.LittleEndian.Uint32(pd.data[i+4*k:]))
				}
			}
			i += 4 * n
		}
		last := int64(binary.LittleEndian.Uint32(ue.data[8:]))
		if last == 0 {
			break
		}
		off = last
	}
	return dir, docRef, nil
}

// extractPPT reads a PowerPoint 97-2003 presentation (MS-PPT): per slide in
// presentation order (the document's slide list), its text (placeholders
// from the slide list, text boxes from the slide's drawing; the title as
// Label), then its notes. References as for PPTX: SlideIndex, Part
// "slideN" or "notesN", Location "slide:N" or "slide:N/notes"; hidden
// slides are marked.
func extractPPT(ctx context.Context, o *oleFile, s *sink) error {
	cur, err := o.read("Current User")
	if err != nil {
		return err
	}
	doc, err := o.read("PowerPoint Document")
	if err != nil {
		return err
	}
	return pptSlides(ctx, doc, cur, s)
}

// pptSlides reads the presentation from its two streams' bytes.
func pptSlides(ctx context.Context, doc, cur []byte, s *sink) error {
	dir, docRef, err := pptPersist(doc, cur)
	if err != nil {
		return err
	}
	dc, ok := pptAt(doc, dir[docRef])
	if _, known := dir[docRef]; !known || !ok || dc.typ != pptDocument {
		return fmt.Errorf("%w: the PowerPoint document container is missing", ErrMalformed)
	}
	type slideRef struct {
		persist, id uint32
		texts       pptTexts // from the slide list: the placeholders' text
	}
	var slides []*slideRef
	notesOf := map[uint32][]byte{} // slide id → notes container body
	seenNotes := map[uint32]bool{} // notes persist ids read, each once
	kids, _ := pptChildren(dc.data)
	for _, l := range kids {
		if l.typ != pptSlideList || l.inst != 0 && l.inst != 2 {
			continue
		}
		recs, _ := pptChildren(l.data)
		var sl *slideRef
		header := uint32(0xFFFF)
		for _, r := range recs {
			switch {
			case r.typ == pptSlidePersist && len(r.data) >= 16:
				ref := binary.LittleEndian.Uint32(r.data)
				if l.inst == 2 {
					if seenNotes[ref] {
						continue
					}
					seenNotes[ref] = true
					if nc, ok := pptAt(doc, dir[ref]); ok && nc.typ == pptNotes {
						if na, ok := pptFirst(nc.data, pptNotesAtom); ok && len(na.data) >= 4 {
							notesOf[binary.LittleEndian.Uint32(na.data)] = nc.data
						}
					}
					continue
				}
				sl = &slideRef{persist: ref, id: binary.LittleEndian.Uint32(r.data[12:])}
				slides = append(slides, sl)
			case l.inst != 0 || sl == nil:
			case r.typ == pptTextHeader && len(r.data) >= 4:
				header = binary.LittleEndian.Uint32(r.data)
			case r.typ == pptTextChars || r.typ == pptTextBytes:
				sl.texts.add(header, pptText(r))
				header = 0xFFFF
			}
		}
	}
	var (
		list    []map[string]any
		skipped []string
		dropped int // skipped slides beyond what the index lists
		notes   int
		read    = map[int64]int{} // slide record offset → the slide that read it
	)
	skip := func(msg string) {
		if len(skipped) < 100 {
			skipped = append(skipped, msg)
		} else {
			dropped++
		}
	}
	for i, sr := range slides {
		if s.full() {
			break
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		k := i + 1
		num := strconv.Itoa(k)
		sc, ok := pptAt(doc, dir[sr.persist])
		if _, known := dir[sr.persist]; !known || !ok || sc.typ != pptSlide {
			skip(fmt.Sprintf("slide %d: no slide record for persist id %d", k, sr.persist))
			continue
		}
		// A slide record listed twice is read once: a hostile list
		// could otherwise make one large slide cost its size many times.
		if j, dup := read[dir[sr.persist]]; dup {
			skip(fmt.Sprintf("slide %d: the slide record of slide %d again", k, j))
			continue
		}
		read[dir[sr.persist]] = k
		t := sr.texts
		var drawn pptTexts
		drawn.walk(sc.data, 0)
		t.hidden = drawn.hidden
		if t.title == "" {
			t.title = drawn.title
		} else if drawn.title != "" && drawn.title != t.title {
			drawn.blocks = append([]string{drawn.title}, drawn.blocks...)
		}
		for _, b := range drawn.blocks {
			if !slices.Contains(t.blocks, b) && b != t.title {
				t.blocks = append(t.blocks, b)
			}
		}
		entry := map[string]any{"index": k, "part": "slide" + num}
		var md map[string]any
		if t.title != "" {
			entry["title"] = t.title
		}
		if t.hidden {
			entry["hidden"] = true
			md = map[string]any{"hidden": true}
		}
		text := t.blocks
		if t.title != "" {
			text = append([]string{t.title}, text...)
		}
		if len(text) > 0 {
			s.add(content.Object{ContentType: content.Text, Data: strings.Join(text, "\n\n"), Metadata: md,
				Ref: content.Ref{SlideIndex: k, Part: "slide" + num, Label: headingText(t.title), Location: "slide:" + num}})
		}
		if nb, ok := notesOf[sr.id]; ok {
			var nt pptTexts
			nt.walk(nb, 0)
			if nt.title != "" {
				nt.blocks = append([]string{nt.title}, nt.blocks...)
			}
			if len(nt.blocks) > 0 {
				notes++
				entry["notes"] = "notes" + num
				s.add(content.Object{ContentType: content.Text, Data: strings.Join(nt.blocks, "\n\n"), Metadata: md,
					Ref: content.Ref{SlideIndex: k, Part: "notes" + num, Label: headingText(t.title), Location: "slide:" + num + "/notes"}})
			}
		}
		if len(list) < 10_000 {
			list = append(list, entry)
		}
	}
	if len(slides) > 0 && len(skipped)+dropped == len(slides) && len(read) == 0 {
		return fmt.Errorf("%w: none of the %d slides of the PowerPoint presentation could be found (%s)", ErrMalformed, len(slides), skipped[0])
	}
	s.structure["format"] = "ppt"
	s.structure["slides"] = len(slides)
	s.structure["slideList"] = list
	s.structure["notes"] = notes
	if len(skipped) > 0 {
		s.structure["skipped"] = skipped
	}
	if dropped > 0 {
		s.structure["skippedMore"] = dropped
	}
	return nil
}

// pptFirst is the first child record of type typ in a container's body.
func pptFirst(b []byte, typ uint16) (pptRec, bool) {
	recs, _ := pptChildren(b)
	for _, r := range recs {
		if r.typ == typ {
			return r, true
		}
	}
	return pptRec{}, false
}
