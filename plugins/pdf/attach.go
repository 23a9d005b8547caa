package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"path"
	"strings"

	"github.com/agenthost/agenthost/pdk"
	"github.com/agenthost/agenthost/pdk/content"
	"github.com/agenthost/agenthost/pdk/input"
	"github.com/agenthost/agenthost/pdk/output"
	"github.com/agenthost/agenthost/plugins/containers/archive"
	"github.com/agenthost/agenthost/plugins/pdf/pdftext"
)

// A PDF's attachments are handed back like an archive's members: each
// embedded file through the output capability, named by its container path
// ("report.pdf/data.csv"), under the archives' limits (archive.Limits:
// depth 5, 500 MiB, 10,000 entries, 100:1 beyond 8 MiB) and name rule
// (archive.CleanName); an attached PDF's own attachments follow below its
// path. A file specification's name is a label, not a path (a PDF keeps no
// folders): only its last segment, after a slash or backslash, names the
// entry, so no attachment can leave its document's place.

// maxAttachmentBytes bounds one attachment decoded in the plugin's memory.
const maxAttachmentBytes = 256 << 20

// fileWriter is one emitted file.
type fileWriter interface {
	io.Writer
	Close() error
	Fail(kind, reason string) error
}

// emitTarget is where the walk hands files: the host's output capability
// in the plugin, a recorder in tests.
type emitTarget interface {
	Begin(f output.File) (fileWriter, error)
	Fail(path, kind, reason string) error
}

// hostTarget is the output capability.
type hostTarget struct{}

type hostWriter struct{ w *output.Writer }

func (h hostWriter) Write(p []byte) (int, error)    { return h.w.Write(p) }
func (h hostWriter) Close() error                   { _, err := h.w.Close(); return err }
func (h hostWriter) Fail(kind, reason string) error { return h.w.Fail(kind, reason) }

func (hostTarget) Begin(f output.File) (fileWriter, error) {
	w, err := output.Begin(f)
	if err != nil {
		return nil, err
	}
	return hostWriter{w}, nil
}

func (hostTarget) Fail(p, kind, reason string) error { return output.Fail(p, kind, reason) }

// attachWalk emits the attachments of a document and of the PDFs attached
// to it.
type attachWalk struct {
	lim   archive.Limits
	out   emitTarget
	only  string // emit only this path, "" for all
	found bool

	files, failed int
	total         int64
	stops         []string
	fatal         error // the host refused the output itself
}

// errStop ends the walk at a limit.
var errStop = errors.New("attachment walk stopped")

// entryName is the entry name of an attachment's file name: its last
// segment, cleaned by the archives' rule; a name with none usable is
// "attachment-N" (N its place, from 1).
func entryName(raw string, n int) (name, kind, reason string) {
	s := strings.ReplaceAll(raw, "\\", "/")
	seg := ""
	for part := range strings.SplitSeq(s, "/") {
		if p := strings.TrimSpace(part); p != "" {
			seg = p
		}
	}
	if seg == "" || seg == "." || seg == ".." {
		seg = fmt.Sprintf("attachment-%d", n)
	}
	return archive.CleanName(seg)
}

// unique names the n-th file of a name (from 2) "name~n.ext".
func unique(name string, n int) string {
	ext := path.Ext(name)
	return fmt.Sprintf("%s~%d%s", strings.TrimSuffix(name, ext), n, ext)
}

// fail records an attachment that is not emitted.
func (w *attachWalk) fail(p, kind, reason string) error {
	if w.only != "" && p != w.only {
		return nil
	}
	w.failed++
	if err := w.out.Fail(p, kind, reason); err != nil {
		w.fatal = err
		return err
	}
	return nil
}

// doc emits d's attachments under prefix (the document's own path); depth
// is d's depth (the input is 0, an attached PDF 1…).
func (w *attachWalk) doc(d *pdftext.Document, prefix string, depth int) error {
	atts, err := d.Attachments()
	if err != nil {
		return w.fail(prefix, archive.ProblemCorrupt, "its attachments cannot be read: "+err.Error())
	}
	used := map[string]int{}
	for i, a := range atts {
		if w.files+w.failed >= w.lim.MaxFiles {
			w.stops = append(w.stops, fmt.Sprintf("%s: stopped after %d entries (the limit)", prefix, w.lim.MaxFiles))
			return errStop
		}
		name, kind, reason := entryName(a.Name, i+1)
		if kind != "" {
			if err := w.fail(prefix+"/"+fmt.Sprintf("attachment-%d", i+1), kind, reason); err != nil {
				return err
			}
			continue
		}
		used[name]++
		if used[name] > 1 {
			name = unique(name, used[name])
		}
		p := prefix + "/" + name
		if err := w.attachment(a, p, depth+1); err != nil {
			return err
		}
	}
	return nil
}

// attachment emits one attachment at depth, and what it holds.
func (w *attachWalk) attachment(a pdftext.Attachment, p string, depth int) error {
	within := w.only == "" || w.only == p || strings.HasPrefix(w.only, p+"/")
	if !within {
		return nil
	}
	if depth > w.lim.MaxDepth {
		return w.fail(p, archive.ProblemDepth, fmt.Sprintf("nested deeper than %d", w.lim.MaxDepth))
	}
	limit := min(w.lim.MaxFileBytes, w.lim.MaxTotalBytes-w.total, maxAttachmentBytes)
	data, packed, err := a.Data(limit)
	switch {
	case errors.Is(err, pdftext.ErrTooLarge):
		return w.fail(p, archive.ProblemLimit, fmt.Sprintf("larger than the %d bytes left to extract", limit))
	case err != nil:
		return w.fail(p, archive.ProblemCorrupt, err.Error())
	case int64(len(data)) > w.lim.RatioFloor && packed > 0 && float64(len(data)) > w.lim.MaxRatio*float64(packed):
		return w.fail(p, archive.ProblemBomb, fmt.Sprintf("expands %d bytes to %d, more than %.0f:1", packed, len(data), w.lim.MaxRatio))
	}
	// Named as an archive names its members (by extension, then by the
	// bytes), so that the host's extractors take them alike; the PDF's
	// own /Subtype only for bytes that say nothing.
	mt := archive.MIMEType(p, data[:min(len(data), 512)])
	if mt == "application/octet-stream" && strings.Contains(a.MIMEType, "/") {
		mt = a.MIMEType
	}
	if w.only == "" || w.only == p {
		w.found = true
		fw, err := w.out.Begin(output.File{Path: p, Size: int64(len(data)), MIMEType: mt})
		if err != nil {
			var pe *pdk.Error
			if errors.As(err, &pe) && pe.Code == "no_output" {
				w.fatal = err
				return err
			}
			return w.fail(p, archive.ProblemLimit, err.Error())
		}
		if _, err := fw.Write(data); err != nil {
			return w.fail(p, archive.ProblemIO, err.Error())
		}
		if err := fw.Close(); err != nil {
			return w.fail(p, archive.ProblemLimit, err.Error())
		}
		w.files++
		w.total += int64(len(data))
	}
	// An attached PDF may carry attachments of its own.
	if bytes.HasPrefix(data, []byte("%PDF")) || strings.HasPrefix(mt, "application/pdf") {
		inner, err := pdftext.Open(bytes.NewReader(data))
		if err != nil {
			return nil // not readable as a PDF: its extractor will say so
		}
		return w.doc(inner, p, depth)
	}
	return nil
}

// attachmentsArgs are the attachments tool's arguments.
type attachmentsArgs struct {
	Name     string `json:"name" description:"the document's file name, the first segment of every path"`
	MIMEType string `json:"mimeType,omitempty"`
	Path     string `json:"path,omitempty" description:"emit only the attachment with this path"`
}

// rootName is the first segment of the entries' paths, as the containers
// plugin names it.
func rootName(name string) string {
	n := path.Base(strings.ReplaceAll(name, "\\", "/"))
	if n == "." || n == "/" || n == "" {
		return "input"
	}
	return n
}

// attachments walks the input document's attachments into out.
func attachments(a attachmentsArgs, d *pdftext.Document, out emitTarget) (result, error) {
	root := rootName(a.Name)
	w := &attachWalk{lim: archive.DefaultLimits(), out: out, only: a.Path}
	err := w.doc(d, root, 0)
	if w.fatal != nil {
		return result{}, pdk.Errorf("output_refused", "%v", w.fatal)
	}
	if err != nil && !errors.Is(err, errStop) {
		return result{}, pdk.Errorf("invalid_document", "%v", err)
	}
	if w.only != "" && !w.found && w.failed == 0 {
		return result{}, pdk.Errorf("not_found", "%s has no attachment %q", root, w.only)
	}
	st := map[string]any{"container": "pdf", "files": w.files, "failed": w.failed, "truncated": len(w.stops) > 0}
	if len(w.stops) > 0 {
		st["stoppedBecause"] = strings.Join(w.stops, "; ")
	}
	return result{Index: content.Index{FileName: root, MIMEType: "application/pdf", Structure: st}, Objects: []content.Object{}}, nil
}

// attachmentList is the index's list of a document's attachments.
func attachmentList(d *pdftext.Document) []map[string]any {
	atts, err := d.Attachments()
	if err != nil || len(atts) == 0 {
		return nil
	}
	out := make([]map[string]any, len(atts))
	for i, a := range atts {
		m := map[string]any{"name": a.Name}
		if a.Size >= 0 {
			m["size"] = a.Size
		}
		if a.MIMEType != "" {
			m["mimeType"] = a.MIMEType
		}
		if a.Page > 0 {
			m["page"] = a.Page
		}
		if a.Description != "" {
			m["description"] = a.Description
		}
		out[i] = m
	}
	return out
}

func init() {
	pdk.Tool("attachments", "Hands the document's attached files (and those of attached PDFs) back to the host by their container paths, as a container's entries.",
		func(a attachmentsArgs) (result, error) {
			r, err := input.Open()
			if err != nil {
				return result{}, err
			}
			d, err := pdftext.Open(r)
			if err != nil {
				return result{}, pdk.Errorf("invalid_document", "%v", err)
			}
			return attachments(a, d, hostTarget{})
		}, pdk.ReadOnly())
}
