package extract

import (
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/agenthost/agenthost/pdk/content"
)

// slideContent is what one slide (or notes page) holds.
type slideContent struct {
	title  string
	blocks []string // shape texts and tables, in tree order, title excluded
	images []imgRef
	media  []imgRef // video and audio
	hidden bool
}

// notesSkip are the placeholders of a notes page that repeat the slide or
// carry page furniture, not notes.
var notesSkip = map[string]bool{"sldImg": true, "sldNum": true, "dt": true, "hdr": true, "ftr": true}

// slideSkip are placeholders whose text is a field (slide number, date).
var slideSkip = map[string]bool{"sldNum": true, "dt": true}

// extractPPTX emits, per slide in presentation order, its text (title as
// Label), its notes, then its pictures and media.
func extractPPTX(ctx context.Context, in input, s *sink) error {
	p, err := openPackage(in.r, in.size, in.lim)
	if err != nil {
		return err
	}
	main, err := p.mainPart("ppt/presentation.xml")
	if err != nil {
		return err
	}
	rels, err := p.relsOf(main)
	if err != nil {
		return err
	}
	slides, size, err := presentationSlides(p, main, relByID(rels))
	if err != nil {
		return err
	}
	if slides == nil {
		// No slide list at all: the slides the presentation relates to.
		slides = relTargets(rels, "slide", p)
	}
	var (
		list    []map[string]any
		skipped []string
		notes   int
		media   = map[string]bool{}
		embed   = &embedder{ctx: ctx, p: p, s: s, lim: in.lim}
	)
	for i, part := range slides {
		if s.full() {
			break
		}
		k := i + 1
		srels, err := p.relsOf(part)
		if err != nil {
			return err
		}
		sc, err := readSlide(p, part, relByID(srels), slideSkip, embed)
		if err != nil {
			if errors.Is(err, ErrLimit) || errors.Is(err, ErrMalformed) {
				// One broken slide does not lose the others.
				skipped = append(skipped, fmt.Sprintf("%s: %v", part, err))
				continue
			}
			return err
		}
		label := partBase(part)
		entry := map[string]any{"index": k, "part": label}
		if sc.title != "" {
			entry["title"] = sc.title
		}
		if sc.hidden {
			entry["hidden"] = true
		}
		text := sc.blocks
		if sc.title != "" {
			text = append([]string{sc.title}, text...)
		}
		if len(text) > 0 {
			var md map[string]any
			if sc.hidden {
				md = map[string]any{"hidden": true}
			}
			s.add(content.Object{ContentType: content.Text, Data: strings.Join(text, "\n\n"), Metadata: md,
				Ref: content.Ref{SlideIndex: k, Part: label, Label: headingText(sc.title), Location: "slide:" + strconv.Itoa(k)}})
		}
		for _, target := range relTargets(srels, "notesSlide", p) {
			nrels, _ := p.relsOf(target)
			nc, err := readSlide(p, target, relByID(nrels), notesSkip, nil)
			if err != nil {
				skipped = append(skipped, fmt.Sprintf("%s: %v", target, err))
				continue
			}
			if len(nc.blocks) == 0 {
				continue
			}
			notes++
			entry["notes"] = partBase(target)
			var nmd map[string]any
			if sc.hidden {
				nmd = map[string]any{"hidden": true}
			}
			s.add(content.Object{ContentType: content.Text, Data: strings.Join(nc.blocks, "\n\n"), Metadata: nmd,
				Ref: content.Ref{SlideIndex: k, Part: partBase(target), Label: headingText(sc.title), Location: "slide:" + strconv.Itoa(k) + "/notes"}})
		}
		for _, im := range append(sc.images, sc.media...) {
			n := len(s.objs)
			emitSlideMedia(p, s, in.lim, im, k, label, media)
			if sc.hidden && len(s.objs) > n {
				o := &s.objs[len(s.objs)-1]
				if o.Metadata == nil {
					o.Metadata = map[string]any{}
				}
				o.Metadata["hidden"] = true
			}
		}
		if len(list) < 10_000 {
			list = append(list, entry)
		}
	}
	s.structure["slides"] = len(slides)
	s.structure["slideList"] = list
	s.structure["notes"] = notes
	if size != "" {
		s.structure["slideSize"] = size
	}
	if len(skipped) > 0 {
		s.structure["skipped"] = skipped
	}
	embed.finish()
	return nil
}

// presentationSlides reads the slide list (p:sldIdLst) of the presentation
// part: the order the slides are shown in, which file names do not tell.
// It returns nil when the presentation has no list.
func presentationSlides(p *pkg, main string, rels map[string]rel) (slides []string, size string, err error) {
	d, c, err := p.decoder(main)
	if err != nil {
		return nil, "", err
	}
	defer c.Close()
	err = xmlRoot(d, func(root xml.StartElement) error {
		return xmlChildren(d, func(e xml.StartElement) error {
			switch e.Name.Local {
			case "sldIdLst":
				slides = []string{}
				return xmlChildren(d, func(id xml.StartElement) error {
					if r, ok := rels[attrNS(id, "relationships", "id")]; ok && id.Name.Local == "sldId" && !r.External && p.has(r.Target) {
						slides = append(slides, r.Target)
					}
					return d.Skip()
				})
			case "sldSz":
				cx, _ := strconv.Atoi(attr(e, "cx"))
				cy, _ := strconv.Atoi(attr(e, "cy"))
				if cx > 0 && cy > 0 {
					// EMU: 914400 per inch; reported in points.
					size = fmt.Sprintf("%.0fx%.0fpt", float64(cx)/12700, float64(cy)/12700)
				}
			}
			return d.Skip()
		})
	})
	if err != nil {
		return nil, "", fmt.Errorf("%s: %w", main, err)
	}
	return slides, size, nil
}

// readSlide walks a slide's (or notes page's) shape tree.
// OLE objects are read by embed (nil: not read).
func readSlide(p *pkg, part string, rels map[string]rel, skip map[string]bool, embed *embedder) (slideContent, error) {
	var sc slideContent
	d, c, err := p.decoder(part)
	if err != nil {
		return sc, err
	}
	defer c.Close()
	w := &slideWalker{p: p, d: d, rels: rels, skip: skip, sc: &sc, embed: embed}
	if err := w.run(); err != nil {
		return sc, fmt.Errorf("%s: %w", part, err)
	}
	return sc, nil
}

// slideWalker reads DrawingML shapes.
type slideWalker struct {
	p     *pkg
	d     *xml.Decoder
	rels  map[string]rel
	skip  map[string]bool
	sc    *slideContent
	depth int
	embed *embedder
}

// children runs f on each child element, skipping content nested deeper
// than maxDepth (groups of groups of shapes recurse once per level).
func (w *slideWalker) children(f func(xml.StartElement) error) error {
	if w.depth >= maxDepth {
		return w.d.Skip()
	}
	w.depth++
	defer func() { w.depth-- }()
	return xmlChildren(w.d, f)
}

// alternate takes the first choice of an mc:AlternateContent.
func (w *slideWalker) alternate(f func(xml.StartElement) error) error {
	done := false
	return w.children(func(c xml.StartElement) error {
		if done || (c.Name.Local != "Choice" && c.Name.Local != "Fallback") {
			return w.d.Skip()
		}
		done = true
		return w.children(f)
	})
}

// run reads from the root element (p:sld, p:notes) down.
func (w *slideWalker) run() error {
	return xmlRoot(w.d, func(e xml.StartElement) error {
		w.sc.hidden = attr(e, "show") == "0"
		return w.children(w.element)
	})
}

// element handles any element of the tree: shapes, groups, frames,
// pictures; everything else is descended into or skipped.
func (w *slideWalker) element(e xml.StartElement) error {
	switch e.Name.Local {
	case "sp":
		return w.shape()
	case "graphicFrame":
		return w.frame()
	case "pic":
		return w.picture()
	case "AlternateContent":
		return w.alternate(w.element)
	case "cSld", "spTree", "grpSp":
		return w.children(w.element)
	}
	return w.d.Skip()
}

// shape reads a p:sp: its placeholder type and its text.
func (w *slideWalker) shape() error {
	var (
		ph    string
		isPh  bool
		paras []string
	)
	err := w.children(func(e xml.StartElement) error {
		switch e.Name.Local {
		case "nvSpPr":
			return w.children(func(e xml.StartElement) error {
				if e.Name.Local == "nvPr" {
					return w.children(func(e xml.StartElement) error {
						if e.Name.Local == "ph" {
							isPh, ph = true, attr(e, "type")
						}
						return w.d.Skip()
					})
				}
				return w.d.Skip()
			})
		case "txBody":
			var err error
			paras, err = w.textBody()
			return err
		}
		return w.d.Skip()
	})
	if err != nil {
		return err
	}
	text := strings.TrimRight(strings.Join(paras, "\n"), "\n ")
	if strings.TrimSpace(text) == "" || (isPh && w.skip[ph]) {
		return nil
	}
	if isPh && (ph == "title" || ph == "ctrTitle") && w.sc.title == "" {
		w.sc.title = strings.TrimSpace(text)
		return nil
	}
	w.sc.blocks = append(w.sc.blocks, text)
	return nil
}

// textBody reads the paragraphs of a txBody (of a shape or a table cell).
func (w *slideWalker) textBody() ([]string, error) {
	var paras []string
	err := w.children(func(e xml.StartElement) error {
		if e.Name.Local != "p" {
			return w.d.Skip()
		}
		var b strings.Builder
		err := w.children(func(e xml.StartElement) error {
			switch e.Name.Local {
			case "r", "fld":
				return w.children(func(e xml.StartElement) error {
					if e.Name.Local == "t" {
						return xmlText(w.d, &b)
					}
					return w.d.Skip()
				})
			case "br":
				b.WriteByte('\n')
			}
			return w.d.Skip()
		})
		paras = append(paras, b.String())
		return err
	})
	return paras, err
}

// frame reads a p:graphicFrame: a table becomes a Markdown block, a chart
// or SmartArt diagram its text.
func (w *slideWalker) frame() error {
	var rows [][]string
	var find func(e xml.StartElement) error
	find = func(e xml.StartElement) error {
		switch e.Name.Local {
		case "tbl":
			return w.children(func(e xml.StartElement) error {
				if e.Name.Local != "tr" {
					return w.d.Skip()
				}
				var row []string
				err := w.children(func(e xml.StartElement) error {
					if e.Name.Local != "tc" {
						return w.d.Skip()
					}
					// Cells covered by a merge repeat nothing.
					covered := attr(e, "hMerge") == "1" || attr(e, "vMerge") == "1"
					var cell []string
					err := w.children(func(e xml.StartElement) error {
						if e.Name.Local == "txBody" {
							p, err := w.textBody()
							cell = p
							return err
						}
						return w.d.Skip()
					})
					if covered {
						cell = nil
					}
					row = append(row, strings.TrimSpace(strings.Join(cell, "\n")))
					return err
				})
				rows = append(rows, row)
				return err
			})
		case "chart": // a chart's titles, series and values
			if r, ok := w.rels[attrNS(e, "relationships", "id")]; ok && !r.External {
				if text := chartText(w.p, r.Target); text != "" {
					w.sc.blocks = append(w.sc.blocks, text)
				}
			}
		case "relIds": // SmartArt: its text is in the diagram's data part
			if r, ok := w.rels[attrNS(e, "relationships", "dm")]; ok && !r.External {
				if text := diagramText(w.p, r.Target); text != "" {
					w.sc.blocks = append(w.sc.blocks, text)
				}
			}
		case "oleObj":
			// An embedded document: its own text where it stands (the
			// p:pic inside is only its replacement picture).
			if r, ok := w.rels[attrNS(e, "relationships", "id")]; ok && !r.External {
				if text := w.embed.text(r.Target, attr(e, "progId")); text != "" {
					w.sc.blocks = append(w.sc.blocks, text)
				}
			}
			return w.children(find)
		case "graphic", "graphicData":
			return w.children(find)
		case "AlternateContent":
			return w.alternate(find)
		}
		return w.d.Skip()
	}
	if err := w.children(find); err != nil {
		return err
	}
	for _, r := range rows {
		for _, c := range r {
			if c != "" {
				w.sc.blocks = append(w.sc.blocks, markdownTable(rows))
				return nil
			}
		}
	}
	return nil
}

// picture reads a p:pic: its alt text, its image and any video or audio it
// plays.
func (w *slideWalker) picture() error {
	var alt string
	var walk func(e xml.StartElement) error
	walk = func(e xml.StartElement) error {
		switch e.Name.Local {
		case "cNvPr":
			alt = firstNonEmpty(attr(e, "descr"), attr(e, "title"), alt)
		case "blip":
			if r, ok := w.rels[attrNS(e, "relationships", "embed")]; ok {
				w.sc.images = append(w.sc.images, imgRef{rel: r, alt: alt})
			}
		case "videoFile", "audioFile", "media", "quickTimeFile":
			id := firstNonEmpty(attrNS(e, "relationships", "link"), attrNS(e, "relationships", "embed"))
			if r, ok := w.rels[id]; ok {
				w.sc.media = append(w.sc.media, imgRef{rel: r, alt: alt})
			}
		}
		return w.children(walk)
	}
	return w.children(walk)
}

// emitSlideMedia adds a picture or media object of slide k, each part once.
func emitSlideMedia(p *pkg, s *sink, lim Limits, im imgRef, k int, part string, seen map[string]bool) {
	ref := content.Ref{SlideIndex: k, Part: part, Label: headingText(im.alt), Location: "slide:" + strconv.Itoa(k)}
	if im.rel.External {
		kind := content.Other
		switch im.rel.Type {
		case "image":
			kind = content.Image
		case "video":
			kind = content.VideoStream
		case "audio":
			kind = content.AudioStream
		}
		s.add(content.Object{ContentType: kind, Data: im.rel.Target, Ref: ref, Metadata: map[string]any{"encoding": "url"}})
		return
	}
	if seen[im.rel.Target] {
		return
	}
	seen[im.rel.Target] = true
	o := p.mediaObject(im.rel.Target, lim)
	o.Ref = ref
	s.add(o)
}
