package extract

import (
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"path"
	"strings"

	"github.com/agenthost/agenthost/plugins/containers/archive"
)

// AttachmentSink receives a mail's attached files: the host's output
// capability in the plugin, a recorder in tests.
type AttachmentSink interface {
	// File hands one attached file over; an error fails that file alone.
	File(path, mimeType string, data []byte) error
	// Fail records a file that is not handed over, and why (kind is an
	// archive.Problem kind); an error ends the walk.
	Fail(path, kind, reason string) error
}

// AttachmentResult sums up an attachments walk.
type AttachmentResult struct {
	Container string // "eml", "msg" or "mbox"
	Files     int
	Failed    int
	Found     bool     // the entry asked for (only) was met
	Stops     []string // where the walk stopped early, and why
}

// CarriesAttachments reports whether Attachments reads documents of this
// name and type (mails and mailboxes).
func CarriesAttachments(name, mimeType string) bool {
	switch mailKind(name, mimeType) {
	case mimeEML, mimeMSG, mimeMbox:
		return true
	}
	return false
}

func mailKind(name, mimeType string) string {
	mt := strings.ToLower(strings.TrimSpace(mimeType))
	if i := strings.IndexByte(mt, ';'); i >= 0 {
		mt = strings.TrimSpace(mt[:i])
	}
	switch mt {
	case mimeEML, "message/global":
		return mimeEML
	case mimeMSG, "application/x-msg":
		return mimeMSG
	case mimeMbox:
		return mimeMbox
	}
	switch strings.ToLower(path.Ext(strings.ReplaceAll(name, `\`, "/"))) {
	case ".eml":
		return mimeEML
	case ".msg":
		return mimeMSG
	case ".mbox", ".mbx":
		return mimeMbox
	}
	return ""
}

// Attachments hands the files attached to a mail (an .eml, an Outlook
// .msg) or the messages of a mailbox (.mbox) to out, each named by its
// container path below name ("mail.eml/report.pdf"); an attached message
// is an .eml entry and its own attachments follow below its path
// ("mail.eml/fwd.eml/scan.pdf"). The archives' limits hold
// (archive.DefaultLimits: messages nested 5 deep, 10,000 files, 500 MiB in
// all); names are cleaned by the archives' rule. only, when set, emits
// that path alone.
func Attachments(ctx context.Context, r io.ReaderAt, size int64, name, mimeType, only string, lim Limits, out AttachmentSink) (res AttachmentResult, err error) {
	lim = lim.withDefaults()
	root := path.Base(strings.ReplaceAll(name, `\`, "/"))
	if root == "." || root == "/" || root == "" {
		root = "input"
	}
	in := input{r: r, size: size, name: name, lim: lim}
	var top *mailMsg
	switch mailKind(name, mimeType) {
	case mimeEML:
		res.Container = "eml"
		b, _, err := readInput(in)
		if err != nil {
			return res, err
		}
		if top, err = readMail(b, lim); err != nil {
			return res, fmt.Errorf("attachments of %s: %w", name, err)
		}
	case mimeMbox:
		res.Container = "mbox"
		b, _, err := readInput(in)
		if err != nil {
			return res, err
		}
		if top, _, err = readMbox(b, lim); err != nil {
			return res, fmt.Errorf("attachments of %s: %w", name, err)
		}
	case mimeMSG:
		res.Container = "msg"
		o, err := openOLE(in)
		if err != nil {
			return res, fmt.Errorf("attachments of %s: %w", name, err)
		}
		top = readMSG(o, "", 32, 0)
	default:
		return res, fmt.Errorf("attachments of %s (%q): %w: not a mail", name, mimeType, ErrUnsupported)
	}
	w := &mailWalk{ctx: ctx, lim: archive.DefaultLimits(), out: out, only: only, mlim: lim}
	err = w.message(top, root, 0)
	res.Files, res.Failed, res.Found, res.Stops = w.files, w.failed, w.found, append(top.stops, w.stops...)
	if errors.Is(err, errWalkStop) {
		err = nil
	}
	return res, err
}

// errWalkStop ends a walk at a limit.
var errWalkStop = errors.New("attachment walk stopped")

// mailWalk emits a mail's attachments, and those of attached messages.
type mailWalk struct {
	ctx           context.Context
	lim           archive.Limits
	mlim          Limits
	out           AttachmentSink
	only          string
	found         bool
	files, failed int
	total         int64
	stops         []string
}

func (w *mailWalk) fail(p, kind, reason string) error {
	if w.only != "" && p != w.only {
		return nil
	}
	w.failed++
	return w.out.Fail(p, kind, reason)
}

// message emits m's attachments below prefix; depth is m's nesting (the
// input is 0).
func (w *mailWalk) message(m *mailMsg, prefix string, depth int) error {
	used := map[string]int{}
	for i, a := range m.atts {
		if err := w.ctx.Err(); err != nil {
			return err
		}
		if w.files+w.failed >= w.lim.MaxFiles {
			w.stops = append(w.stops, fmt.Sprintf("%s: stopped after %d entries (the limit)", prefix, w.lim.MaxFiles))
			return errWalkStop
		}
		seg := a.name
		if j := strings.LastIndexAny(seg, `/\`); j >= 0 {
			seg = seg[j+1:] // a file name is a label, not a path
		}
		if strings.TrimSpace(seg) == "" || seg == "." || seg == ".." {
			seg = fmt.Sprintf("attachment-%d", i+1)
		}
		n, kind, reason := archive.CleanName(seg)
		if kind != "" {
			if err := w.fail(fmt.Sprintf("%s/attachment-%d", prefix, i+1), kind, reason); err != nil {
				return err
			}
			continue
		}
		used[n]++
		if used[n] > 1 {
			ext := path.Ext(n)
			n = fmt.Sprintf("%s~%d%s", strings.TrimSuffix(n, ext), used[n], ext)
		}
		if err := w.attachment(a, prefix+"/"+n, depth+1); err != nil {
			return err
		}
	}
	return nil
}

// attachment emits one attached file at depth, and what an attached
// message holds.
func (w *mailWalk) attachment(a mailAttachment, p string, depth int) error {
	if w.only != "" && w.only != p && !strings.HasPrefix(w.only, p+"/") {
		return nil
	}
	if depth > w.lim.MaxDepth {
		return w.fail(p, archive.ProblemDepth, fmt.Sprintf("nested deeper than %d", w.lim.MaxDepth))
	}
	if size := int64(len(a.data)); size > w.lim.MaxFileBytes || w.total+size > w.lim.MaxTotalBytes {
		return w.fail(p, archive.ProblemLimit, fmt.Sprintf("%d bytes: over the %d bytes a file, or the %d in all, that may be extracted", size, w.lim.MaxFileBytes, w.lim.MaxTotalBytes))
	}
	if w.only == "" || w.only == p {
		w.found = true
		// Named as an archive names its members (extension, then bytes),
		// so the host's extractors take them alike; the mail's own type
		// only for bytes that say nothing.
		mt := archive.MIMEType(p, a.data[:min(len(a.data), 512)])
		if a.message {
			mt = mimeEML
		} else if mt == "application/octet-stream" && strings.Contains(a.mimeType, "/") {
			mt = a.mimeType
		}
		if base, _, _ := strings.Cut(mt, ";"); strings.HasPrefix(base, "text/") && a.charset != "" {
			// The mail's word on a text's charset, not the extension's
			// guess (the text extractors still check it against the bytes).
			mt = mime.FormatMediaType(strings.TrimSpace(base), map[string]string{"charset": a.charset})
		}
		if err := w.out.File(p, mt, a.data); err != nil {
			if ferr := w.fail(p, archive.ProblemLimit, err.Error()); ferr != nil {
				return ferr
			}
		} else {
			w.files++
			w.total += int64(len(a.data))
		}
	}
	if !a.message {
		return nil
	}
	inner, err := readMail(a.data, w.mlim)
	if err != nil {
		return nil // its extractor will say so
	}
	return w.message(inner, p, depth)
}
