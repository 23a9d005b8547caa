package extract

import (
	"context"
	"encoding/xml"
	"fmt"
	"path"
	"strings"

	"golang.org/x/net/html"

	"github.com/agenthost/agenthost/pdk/content"
)

const mimeEPUB = "application/epub+zip"

// maxEPUBChapters bounds the spine's documents read.
const maxEPUBChapters = 5_000

// An EPUB (EPUB 2 and 3, OCF): META-INF/container.xml names the package
// document (OPF), whose manifest lists the content documents and whose
// spine gives their reading order; the table of contents is the EPUB 3
// navigation document's toc nav, or the EPUB 2 NCX. The chapters are read
// in spine order as HTML pages (headings, lists, tables), each object
// referring to its chapter's document; the table of contents gives the
// sections.

type opfPackage struct {
	Metadata struct {
		Title    []string `xml:"title"`
		Creator  []string `xml:"creator"`
		Language []string `xml:"language"`
	} `xml:"metadata"`
	Items []struct {
		ID         string `xml:"id,attr"`
		Href       string `xml:"href,attr"`
		MediaType  string `xml:"media-type,attr"`
		Properties string `xml:"properties,attr"`
	} `xml:"manifest>item"`
	Spine struct {
		Toc   string `xml:"toc,attr"`
		Items []struct {
			IDRef  string `xml:"idref,attr"`
			Linear string `xml:"linear,attr"`
		} `xml:"itemref"`
	} `xml:"spine"`
}

// tocEntry is one entry of the table of contents.
type tocEntry struct {
	title, href string
	level       int
}

func extractEPUB(ctx context.Context, in input, s *sink) error {
	p, err := openPackage(in.r, in.size, in.lim)
	if err != nil {
		return err
	}
	if p.has("META-INF/encryption.xml") {
		if b, err := p.readAll("META-INF/encryption.xml"); err == nil && strings.Contains(string(b), "EncryptedData") && !strings.Contains(string(b), "http://www.idpf.org/2008/embedding") && !strings.Contains(string(b), "http://ns.adobe.com/pdf/enc#RC") {
			return fmt.Errorf("%w: an EPUB with encrypted content (DRM)", ErrEncrypted)
		}
	}
	var container struct {
		Rootfiles []struct {
			FullPath string `xml:"full-path,attr"`
		} `xml:"rootfiles>rootfile"`
	}
	if err := readXML(p, "META-INF/container.xml", &container); err != nil || len(container.Rootfiles) == 0 {
		return fmt.Errorf("%w: an EPUB without META-INF/container.xml naming its package document (%v)", ErrMalformed, err)
	}
	opfPath := strings.TrimPrefix(container.Rootfiles[0].FullPath, "/")
	var opf opfPackage
	if err := readXML(p, opfPath, &opf); err != nil {
		return fmt.Errorf("%w: the package document %s: %v", ErrMalformed, opfPath, err)
	}
	base := path.Dir(opfPath)
	resolve := func(href string) string {
		href, _, _ = strings.Cut(href, "#")
		if strings.HasPrefix(href, "/") {
			return path.Clean(strings.TrimPrefix(href, "/")) // from the root (relTo)
		}
		if base == "." {
			return path.Clean(href)
		}
		return path.Clean(base + "/" + href)
	}
	byID := map[string]string{}
	var nav, ncx string
	for _, it := range opf.Items {
		byID[it.ID] = resolve(it.Href)
		if strings.Contains(" "+it.Properties+" ", " nav ") {
			nav = resolve(it.Href)
		}
		if it.ID == opf.Spine.Toc || it.MediaType == "application/x-dtbncx+xml" && ncx == "" {
			ncx = resolve(it.Href)
		}
	}
	if t := first(opf.Metadata.Title); t != "" {
		s.structure["title"] = t
	}
	if c := first(opf.Metadata.Creator); c != "" {
		s.structure["creator"] = c
	}
	if l := first(opf.Metadata.Language); l != "" {
		s.structure["language"] = l
	}
	var toc []tocEntry
	if nav != "" {
		toc = navTOC(p, nav)
	}
	if len(toc) == 0 && ncx != "" {
		toc = ncxTOC(p, ncx)
	}
	titleOf := map[string]string{}
	for _, e := range toc {
		if h := resolve(e.href); titleOf[h] == "" {
			titleOf[h] = e.title
		}
	}
	h := &htmlRenderer{s: s, lim: in.lim, outline: outline{max: 10_000}}
	chapters := 0
	var missing []string
	for i, ref := range opf.Spine.Items {
		if s.full() || i >= maxEPUBChapters {
			break
		}
		doc, ok := byID[ref.IDRef]
		if !ok || !p.has(doc) {
			missing = append(missing, ref.IDRef)
			continue
		}
		b, err := p.readAll(doc)
		if err != nil {
			missing = append(missing, doc)
			continue
		}
		text, _ := decodeTextAs(b, metaCharset(b))
		root, err := parseHTML(text)
		if err != nil {
			missing = append(missing, doc)
			continue
		}
		chapters++
		label := titleOf[doc]
		if label == "" {
			label = findTitle(root)
		}
		h.ref = content.Ref{Part: doc, Location: fmt.Sprintf("chapter:%d", chapters), Label: label}
		h.walk(root)
		h.flush()
	}
	if chapters == 0 {
		return fmt.Errorf("%w: an EPUB whose spine names no readable content document", ErrMalformed)
	}
	s.structure["chapters"] = chapters
	if len(missing) > 0 {
		s.structure["missingChapters"] = missing
	}
	if len(toc) > 0 {
		// The table of contents is the book's sections.
		var o outline
		o.max = 10_000
		for _, e := range toc {
			o.heading(e.level, e.title, map[string]any{"part": resolve(e.href)})
		}
		s.structure["sections"] = o.sections
		s.structure["sectionsFrom"] = "toc"
	} else if len(h.outline.sections) > 0 {
		s.structure["sections"] = h.outline.sections
		s.structure["sectionsFrom"] = "headings"
	}
	return nil
}

func first(ss []string) string {
	for _, s := range ss {
		if s = strings.TrimSpace(s); s != "" {
			return s
		}
	}
	return ""
}

// readXML decodes a part into v.
func readXML(p *pkg, name string, v any) error {
	d, c, err := p.decoder(name)
	if err != nil {
		return err
	}
	defer c.Close()
	return d.Decode(v)
}

// navTOC reads the toc nav of an EPUB 3 navigation document: nested lists
// of links, their depth the entries' levels. hrefs are made relative to
// the package document's folder by the caller, so they are resolved from
// the nav document's own folder here.
func navTOC(p *pkg, nav string) []tocEntry {
	b, err := p.readAll(nav)
	if err != nil {
		return nil
	}
	root, err := parseHTML(string(b))
	if err != nil {
		return nil
	}
	var toc []tocEntry
	var tocNav *html.Node
	var find func(n *html.Node, depth int)
	find = func(n *html.Node, depth int) {
		if tocNav != nil || depth > 100 {
			return
		}
		if n.Type == html.ElementNode && n.Data == "nav" {
			for _, a := range n.Attr {
				if strings.HasSuffix(a.Key, "type") && strings.Contains(" "+a.Val+" ", " toc ") {
					tocNav = n
					return
				}
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			find(c, depth+1)
		}
	}
	find(root, 0)
	if tocNav == nil {
		return nil
	}
	dir := path.Dir(nav)
	var walk func(n *html.Node, level, depth int)
	walk = func(n *html.Node, level, depth int) {
		if depth > 200 || len(toc) >= 10_000 {
			return
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			if c.Type != html.ElementNode {
				continue
			}
			switch c.Data {
			case "ol", "ul":
				walk(c, level+1, depth+1)
			case "a":
				if href := attrOf(c, "href"); href != "" {
					toc = append(toc, tocEntry{title: strings.Join(strings.Fields(textOf(c)), " "), href: relTo(dir, href), level: max(level, 1)})
				}
			default:
				walk(c, level, depth+1)
			}
		}
	}
	walk(tocNav, 0, 0)
	return toc
}

// ncxTOC reads an EPUB 2 NCX navMap: nested navPoints.
func ncxTOC(p *pkg, ncx string) []tocEntry {
	d, c, err := p.decoder(ncx)
	if err != nil {
		return nil
	}
	defer c.Close()
	dir := path.Dir(ncx)
	var toc []tocEntry
	level := 0
	var label strings.Builder
	inText := false
	for len(toc) < 10_000 {
		tok, err := d.Token()
		if err != nil {
			break
		}
		switch t := tok.(type) {
		case xml.StartElement:
			switch t.Name.Local {
			case "navPoint":
				level++
				label.Reset()
			case "text":
				inText = true
			case "content":
				if src := attr(t, "src"); src != "" && level > 0 {
					toc = append(toc, tocEntry{title: strings.Join(strings.Fields(label.String()), " "), href: relTo(dir, src), level: level})
				}
			}
		case xml.EndElement:
			switch t.Name.Local {
			case "navPoint":
				level--
			case "text":
				inText = false
			}
		case xml.CharData:
			if inText {
				label.Write(t)
			}
		}
	}
	return toc
}

// relTo turns an href found in a document of folder dir into its path from
// the package's root, marked by a leading "/" so resolve takes it as it
// is (a nav document may sit in another folder than the package
// document).
func relTo(dir, href string) string {
	return "/" + path.Clean(dir+"/"+href)
}
