package extract

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/agenthost/agenthost/pdk/content"
)

// maxEmbedDepth bounds documents embedded in documents (an OLE object's
// workbook in a presentation in a presentation): each level opens a
// package of its own, all spending the extraction's one unzip budget.
const maxEmbedDepth = 3

// embedFormats are the formats an embedded OLE object is read as: office
// documents (an embedded image or media file is the replacement picture's
// business, and the picture is read already).
var embedFormats = []string{mimeDOCX, mimeXLSX, mimePPTX, mimeODT, mimeODS, mimeODP, mimeDOC, mimeXLS, mimePPT, mimeOLE, mimeRTF}

// embedder reads the documents embedded in one package (OLE objects,
// ECMA-376 Part 1 19.3.1.36 p:oleObj: the object's part in ppt/embeddings,
// a whole .xlsx/.docx/.pptx package or an OLE compound file .bin holding
// an Excel, Word or PowerPoint 97-2003 document). Each is read by its own
// format's reader into text: cells, charts (titles and series by name),
// paragraphs, slides.
type embedder struct {
	ctx     context.Context
	p       *pkg
	s       *sink
	lim     Limits
	read    int      // objects read
	skipped []string // objects not read, and why
}

// text reads the embedded document in part and returns its text objects
// joined, "" when it has none or cannot be read (then skipped says why).
func (e *embedder) text(part, progID string) string {
	if e == nil {
		return ""
	}
	text, err := e.read1(part)
	if err != nil {
		if len(e.skipped) < 100 {
			what := part
			if progID != "" {
				what += " (" + progID + ")"
			}
			e.skipped = append(e.skipped, fmt.Sprintf("%s: %v", what, err))
		}
		return ""
	}
	e.read++
	return text
}

func (e *embedder) read1(part string) (string, error) {
	if e.lim.embedDepth >= maxEmbedDepth {
		return "", fmt.Errorf("%w: embedded documents nested deeper than %d levels", ErrLimit, maxEmbedDepth)
	}
	if e.s.full() {
		return "", errFull
	}
	b, err := e.p.readAll(part)
	if err != nil {
		return "", err
	}
	lim := e.lim
	lim.embedDepth++
	lim.MaxTextBytes = max(1, e.s.lim.MaxTextBytes-e.s.text)
	lim.MaxObjects = max(1, e.s.lim.MaxObjects-len(e.s.objs))
	r := bytes.NewReader(b)
	if e.s.choose == nil {
		return "", fmt.Errorf("%w: no format dispatch for embedded documents", ErrUnsupported)
	}
	f, mt, declared, ok := e.s.choose(r, int64(len(b)), part, "")
	if !ok || !slices.Contains(embedFormats, f.mimes[0]) {
		return "", fmt.Errorf("%w: not an office document", ErrUnsupported)
	}
	sub := newSink(e.ctx, lim)
	sub.choose = e.s.choose
	in := input{r: r, size: int64(len(b)), name: part, mime: mt, declared: declared, lim: lim}
	if err := f.run(e.ctx, in, sub); err != nil {
		if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
			return "", err
		}
		if len(sub.objs) == 0 {
			return "", err
		}
	}
	var out []string
	for _, o := range sub.objs {
		if o.ContentType == content.Text && strings.TrimSpace(o.Data) != "" {
			out = append(out, o.Data)
		}
	}
	for _, k := range []string{"skipped"} {
		if v, ok := sub.structure[k].([]string); ok {
			for _, m := range v {
				if len(e.skipped) < 100 {
					e.skipped = append(e.skipped, part+": "+m)
				}
			}
		}
	}
	// An embedded document cut by the output limit took all the room
	// left: adding its text cuts the slide's object, and marks the
	// output truncated, there.
	return strings.Join(out, "\n\n"), nil
}

// finish notes in the structure what was read and skipped.
func (e *embedder) finish() {
	if e == nil {
		return
	}
	if e.read > 0 {
		e.s.structure["embedded"] = e.read
	}
	if len(e.skipped) > 0 {
		sk, _ := e.s.structure["skipped"].([]string)
		e.s.structure["skipped"] = append(sk, e.skipped...)
	}
}
