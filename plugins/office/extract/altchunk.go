package extract

import (
	"bytes"
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"path"
	"strings"

	"github.com/agenthost/agenthost/pdk/content"
)

// Bounds on imported parts (w:altChunk). A chunk that is itself a Word
// document may import chunks of its own; each level opens a package, so
// the depth and the number of chunks read in one extraction are bounded,
// and every level spends the one unzip budget (MaxUnzippedBytes) of the
// extraction (Limits.unzipped).
const (
	maxAltChunkDepth = 3
	maxAltChunks     = 256
)

// chunkBudget is what the altChunk levels of one extraction share.
type chunkBudget struct {
	read int // chunks read so far, all levels
}

// altChunk reads an imported part, ECMA-376 Part 1, 17.17.2.1 "altChunk
// (Anchor for Imported External Content)": the r:id names a relationship
// of type aFChunk (15.2.1 "Alternative Format Import Part") to a part in
// another format (HTML, RTF, plain text, MHTML, a whole WordprocessingML
// package) whose content Word shows at this place of the body. Its text is
// read by the format's own reader and emitted here as paragraphs of this
// part (or written into the table cell being read), each with
// Metadata["altChunk"] naming the imported part. A chunk that cannot be
// read is named in the structure's "skipped", never an error of the file.
func (w *docxWalker) altChunk(id string, cell *docxCell) error {
	rl, ok := w.rels[id]
	if !ok || rl.External {
		w.x.skipped = append(w.x.skipped, fmt.Sprintf("altChunk %q: no such internal relationship", id))
		return nil
	}
	objs, cut, err := w.x.readChunk(rl.Target)
	if err != nil {
		if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
			return err
		}
		w.x.skipped = append(w.x.skipped, fmt.Sprintf("altChunk %s: %v", rl.Target, err))
	}
	for _, o := range objs {
		if o.ContentType != content.Text || strings.TrimSpace(o.Data) == "" {
			continue
		}
		w.para++
		if cell != nil {
			cell.parts = append(cell.parts, strings.TrimSpace(o.Data))
			cell.mark(w.para, w.para)
			continue
		}
		md := w.metadata()
		if md == nil {
			md = map[string]any{}
		}
		md["altChunk"] = rl.Target
		if o.Ref.Part != "" && o.Ref.Part != "document" {
			md["chunkPart"] = o.Ref.Part // a header, a note, a mail body
		}
		for _, k := range []string{"table", "rows", "cols", "heading"} {
			if v, ok := o.Metadata[k]; ok {
				md[k] = v
			}
		}
		ref := w.ref(w.para)
		ref.Label = o.Ref.Label
		if !w.x.s.add(content.Object{ContentType: content.Text, Data: o.Data, Ref: ref, Metadata: md}) {
			return errFull
		}
	}
	if cut != "" && w.x.s.truncated == "" {
		// The chunk had only what the output had left.
		w.x.s.truncated = cut
		return errFull
	}
	return nil
}

// readChunk reads an imported part into objects of its own, within what
// the output and the package have left; cut says why its output stopped
// early, "" when it did not.
func (x *docx) readChunk(target string) (objs []content.Object, cut string, err error) {
	sub, err := x.chunkInto(target)
	if sub == nil {
		return nil, "", err
	}
	return sub.objs, sub.truncated, err
}

func (x *docx) chunkInto(target string) (*sink, error) {
	if x.nest >= maxAltChunkDepth {
		return nil, fmt.Errorf("%w: imported parts nested deeper than %d levels", ErrLimit, maxAltChunkDepth)
	}
	if x.chunks.read >= maxAltChunks {
		return nil, fmt.Errorf("%w: more than %d imported parts", ErrLimit, maxAltChunks)
	}
	x.chunks.read++
	b, err := x.p.readAll(target)
	if err != nil {
		return nil, err
	}
	ctx := x.s.ctx
	lim := x.lim
	lim.MaxTextBytes = max(1, x.s.lim.MaxTextBytes-x.s.text)
	lim.MaxObjects = max(1, x.s.lim.MaxObjects-len(x.s.objs))
	sub := newSink(ctx, lim)
	sub.choose = x.s.choose
	in := input{r: bytes.NewReader(b), size: int64(len(b)), name: target, lim: lim}
	switch kind := chunkKind(x.p.contentType(target), b); kind {
	case "docx":
		cp, err := openPackage(in.r, in.size, lim)
		if err != nil {
			return nil, err
		}
		cx := &docx{p: cp, s: sub, lim: lim, media: map[string]bool{}, outline: outline{max: 10_000}, nest: x.nest + 1, chunks: x.chunks,
			embed: &embedder{ctx: ctx, p: cp, s: sub, lim: lim}}
		err = cx.run(ctx) // lim shares the file's unzip count
		x.skipped = append(x.skipped, cx.skipped...)
		if err != nil {
			return sub, err
		}
	case "html":
		in.mime = "text/html"
		err = extractHTML(ctx, in, sub)
	case "rtf":
		in.mime = mimeRTF
		err = extractRTF(ctx, in, sub)
	case "text":
		in.mime = "text/plain"
		err = extractPlain(ctx, in, sub)
	case "mht":
		// MHTML (RFC 2557): a MIME message whose HTML part is the page.
		m, merr := readMail(b, lim)
		if merr != nil {
			return sub, merr
		}
		for _, para := range strings.Split(m.body, "\n\n") {
			sub.add(content.Object{ContentType: content.Text, Data: strings.TrimSpace(para), Ref: content.Ref{Part: "document"}})
		}
	default:
		return nil, fmt.Errorf("%w: an imported part of type %q", ErrUnsupported, x.p.contentType(target))
	}
	return sub, err
}

// chunkKind tells an imported part's format by its content type, else by
// its bytes (Word names the type; other writers do not always).
func chunkKind(ct string, b []byte) string {
	ct = strings.ToLower(strings.TrimSpace(strings.Split(ct, ";")[0]))
	switch ct {
	case "application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml",
		"application/vnd.ms-word.document.macroenabled.main+xml",
		"application/vnd.openxmlformats-officedocument.wordprocessingml.template.main+xml",
		"application/vnd.ms-word.template.macroenabledtemplate.main+xml",
		mimeDOCX:
		return "docx"
	case "text/html", "application/xhtml+xml":
		return "html"
	case "application/rtf", "text/rtf":
		return "rtf"
	case "text/plain":
		return "text"
	case "message/rfc822", "multipart/related", "application/x-mimearchive":
		return "mht"
	}
	head := bytes.TrimLeft(b[:min(len(b), 512)], " \t\r\n\xef\xbb\xbf")
	switch {
	case bytes.HasPrefix(head, []byte("PK\x03\x04")):
		return "docx"
	case bytes.HasPrefix(head, []byte(`{\rtf`)):
		return "rtf"
	case bytes.HasPrefix(bytes.ToLower(head), []byte("mime-version:")):
		return "mht"
	case bytes.Contains(bytes.ToLower(head), []byte("<html")), bytes.Contains(bytes.ToLower(head), []byte("<!doctype html")):
		return "html"
	}
	return ""
}

// contentType is a part's content type by [Content_Types].xml (ECMA-376
// Part 2, 10.1.2: an Override for the part name, else the Default for its
// extension), "" when the package does not say.
func (p *pkg) contentType(part string) string {
	if p.types == nil {
		p.types = map[string]string{}
		if rc, err := p.open("[Content_Types].xml"); err == nil {
			d := newXMLDecoder(rc)
			for {
				t, err := d.RawToken()
				if err != nil {
					break // io.EOF, or a broken part: what was read stands
				}
				if e, ok := t.(xml.StartElement); ok {
					switch e.Name.Local {
					case "Override":
						p.types[partKey(attr(e, "PartName"))] = attr(e, "ContentType")
					case "Default":
						p.types["*."+strings.ToLower(attr(e, "Extension"))] = attr(e, "ContentType")
					}
				}
				if len(p.types) > 10_000 {
					break
				}
			}
			rc.Close()
		}
	}
	if ct, ok := p.types[partKey(part)]; ok {
		return ct
	}
	return p.types["*."+strings.ToLower(strings.TrimPrefix(path.Ext(part), "."))]
}
