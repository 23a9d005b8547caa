// Command containers is the container extractor plugin: it reads a ZIP, TAR,
// gzip (GZ, TGZ), bzip2, xz, zstd, 7z or RAR (4 and 5) through the input capability (by range) and resolves it
// recursively with the archive library's limits, which hold across the
// nesting (one walk: depth 5, 500 MiB extracted, 10,000 entries, 100:1
// ratio). Every inner file goes back to the host through the output
// capability, named by its container path ("a.zip/docs/b.tar/report.pdf"),
// its bytes copied from this plugin's memory into the host's sink; nested
// containers are announced by path; every refused entry (traversal, link,
// bomb, truncated, encrypted, over a limit) is reported with its reason and
// the walk goes on; an entry is never reported twice, and never written past
// the size it declared (the host would end the call). The tool's own result
// is only a summary: counts, "truncated", and "stops" (container, entry,
// kind, limit, reason of every place the walk stopped early), also told in
// words as "stoppedBecause".
package main

import (
	"context"
	"errors"
	"io"
	"path"
	"strings"

	"github.com/agenthost/agenthost/pdk"
	"github.com/agenthost/agenthost/pdk/content"
	"github.com/agenthost/agenthost/pdk/input"
	"github.com/agenthost/agenthost/pdk/output"
	"github.com/agenthost/agenthost/plugins/containers/archive"
)

func main() {}

type extractArgs struct {
	Name     string `json:"name" description:"the container's file name, the first segment of every path"`
	MIMEType string `json:"mimeType,omitempty"`
	Path     string `json:"path,omitempty" description:"emit only the entry with this container path (on-demand extraction of one entry)"`
	// Password opens encrypted 7z and RAR archives for this call only; the
	// host passes the one its user gave and keeps it nowhere.
	Password string `json:"password,omitempty" description:"the password of an encrypted 7z or RAR archive"`
}

type result struct {
	Index   content.Index    `json:"index"`
	Objects []content.Object `json:"objects"`
}

// targetedFiles bounds the entries a walk for one path may pass: such a walk
// reads only that entry's bytes, so it may look past the 10,000 entries at
// which a full walk stops.
const targetedFiles = 100_000

// copyBuffer is the size of one write to the host.
const copyBuffer = 1 << 20

// emitter hands the walk's entries to the host.
type emitter struct {
	only                      string          // emit only this path, "" for all
	reported                  map[string]bool // paths already failed by the emitter
	buf                       []byte
	files, containers, failed int
	found                     bool
	fatal                     error // the host refused the output itself: the walk ends
}

func (em *emitter) entry(e archive.Entry, r io.Reader) error {
	if e.Depth == 0 || e.Dir {
		return nil
	}
	if em.only != "" && e.Path != em.only {
		return nil
	}
	em.found = true
	size := e.Size
	if e.Container != archive.None {
		size = 0
	}
	w, err := output.Begin(output.File{Path: e.Path, Size: size, MIMEType: e.MIMEType, Container: e.Container != archive.None})
	if err != nil {
		return em.refused(e.Path, err)
	}
	if e.Container != archive.None {
		em.containers++
		_, err := w.Close()
		return em.refused(e.Path, err)
	}
	if r != nil && size > 0 {
		// The host traps a write past the announced size, which would end
		// the whole walk: the entry's bytes are held to it here, so an
		// entry longer than it says fails alone.
		if _, err := io.CopyBuffer(&capped{w: w, left: size}, r, em.buf); err != nil {
			em.reported[e.Path] = true
			em.failed++
			return em.refused(e.Path, w.Fail(kindOf(err), "reading failed: "+err.Error()))
		}
	}
	if _, err := w.Close(); err != nil {
		em.reported[e.Path] = true
		em.failed++
		return em.refused(e.Path, output.Fail(e.Path, "size", err.Error()))
	}
	em.files++
	return nil
}

// errLonger: an entry's bytes run past its declared size.
var errLonger = errors.New("the entry's data is longer than its declared size")

// capped passes at most left bytes to w and fails, writing nothing, a write
// that would pass them.
type capped struct {
	w    io.Writer
	left int64
}

func (c *capped) Write(p []byte) (int, error) {
	if int64(len(p)) > c.left {
		return 0, errLonger
	}
	n, err := c.w.Write(p)
	c.left -= int64(n)
	return n, err
}

// refused turns a refusal by the host into the entry's failure, or into the
// end of the walk when the call has no output at all.
func (em *emitter) refused(p string, err error) error {
	if err == nil {
		return nil
	}
	var pe *pdk.Error
	if errors.As(err, &pe) && (pe.Code == "no_output" || pe.Code == "limit" && strings.Contains(pe.Message, "failures")) {
		em.fatal = err
		return err
	}
	if em.reported[p] {
		return nil
	}
	em.reported[p] = true
	em.failed++
	if ferr := output.Fail(p, "limit", err.Error()); ferr != nil {
		em.fatal = ferr
		return ferr
	}
	return nil
}

// encryptedOnly: the walk read no file, and what it could not read it
// could not for want of a password (the file entries of an encrypted RAR,
// 7z or ZIP; a RAR whose headers are encrypted). With a password given
// (withPassword), entries that decrypt to garbage count too: a RAR 4 entry
// has no password check, so a wrong password shows as a corrupt entry.
func encryptedOnly(res archive.Result, files int, withPassword bool) bool {
	if files > 0 {
		return false
	}
	enc := 0
	for _, p := range res.Problems {
		if p.Kind != archive.ProblemEncrypted && !(withPassword && p.Kind == archive.ProblemCorrupt) {
			return false
		}
		enc++
	}
	return enc > 0
}

// rootProblem is the problem of the container itself (not of an entry of
// it), nil when it opened.
func rootProblem(res archive.Result, name string) *archive.Problem {
	for i, p := range res.Problems {
		if p.Path == name {
			return &res.Problems[i]
		}
	}
	return nil
}

// kindOf classifies a read error with the library's sentinels.
func kindOf(err error) string {
	switch {
	case errors.Is(err, archive.ErrBomb):
		return archive.ProblemBomb
	case errors.Is(err, errLonger):
		return archive.ProblemCorrupt
	case errors.Is(err, archive.ErrLimit):
		return archive.ProblemLimit
	case errors.Is(err, archive.ErrTruncated), errors.Is(err, io.ErrUnexpectedEOF):
		return archive.ProblemTruncated
	case errors.Is(err, archive.ErrEncrypted):
		return archive.ProblemEncrypted
	case errors.Is(err, archive.ErrUnsupported):
		return archive.ProblemUnsupported
	case errors.Is(err, archive.ErrCorrupt):
		return archive.ProblemCorrupt
	}
	return archive.ProblemIO
}

func extract(a extractArgs) (result, error) {
	size, err := input.Size()
	if err != nil {
		return result{}, pdk.Errorf("no_input", "%v", err)
	}
	name := path.Base(strings.ReplaceAll(a.Name, "\\", "/"))
	if name == "." || name == "/" || name == "" {
		name = "input"
	}
	lim := archive.DefaultLimits()
	if a.Path != "" {
		lim.MaxFiles = targetedFiles
	}
	em := &emitter{only: a.Path, reported: map[string]bool{}, buf: make([]byte, copyBuffer)}
	// Archives may be large: read by range, small reads (headers) through
	// the block cache.
	f, err := input.Buffered(0)
	if err != nil {
		return result{}, err
	}
	res, werr := archive.WalkWithPassword(context.Background(), f, size, name, a.Password, lim, em.entry)
	if em.fatal != nil {
		return result{}, pdk.Errorf("output_refused", "%v", em.fatal)
	}
	if werr != nil && len(res.Entries) == 0 {
		return result{}, pdk.Errorf("invalid_document", "%v", werr)
	}
	if len(res.Entries) > 0 && res.Entries[0].Container == archive.None {
		return result{}, pdk.Errorf("invalid_document", "%s is not a ZIP, TAR, gzip, bzip2, xz, zstd, 7z or RAR container", name)
	}
	problems := 0
	for _, p := range res.Problems {
		if em.reported[p.Path] || (em.only != "" && p.Path != em.only && p.Path != name) {
			continue
		}
		// One failure per entry (the host keeps one record each); the
		// container itself may have several notes.
		if p.Path != name {
			em.reported[p.Path] = true
		}
		problems++
		if err := output.Fail(p.Path, p.Kind, p.Reason); err != nil {
			return result{}, pdk.Errorf("output_refused", "%v", err)
		}
	}
	if em.only != "" && !em.found && problems == 0 {
		return result{}, pdk.Errorf("not_found", "%s has no entry %q", name, em.only)
	}
	if root := rootProblem(res, name); root != nil && em.only == "" && em.files == 0 && em.containers == 0 && !encryptedOnly(res, em.files, a.Password != "") {
		// The container itself could not be opened (a lone zstd stream
		// whose window passes the bound, a gzip header that is not one):
		// nothing of it is read, which the host shows as a failure with
		// the reason, not as an indexed container of no entries.
		return result{}, pdk.Errorf("invalid_document", "%s could not be opened (%s): %s", name, root.Kind, root.Reason)
	}
	st := map[string]any{
		"container": res.Entries[0].Container.String(),
		"files":     em.files, "containers": em.containers,
		"failed": em.failed + problems, "truncated": res.Truncated,
	}
	if encryptedOnly(res, em.files, a.Password != "") {
		// Nothing could be read without the password: the host reports
		// the container as encrypted, not as an indexed empty archive.
		st["encrypted"] = true
	}
	if len(res.Stops) > 0 {
		stops := make([]map[string]any, len(res.Stops))
		why := make([]string, len(res.Stops))
		for i, s := range res.Stops {
			stops[i] = map[string]any{"container": s.Container, "at": s.At, "index": s.Index,
				"kind": s.Kind, "limit": s.Limit, "reason": s.Reason, "walk": s.Walk}
			why[i] = s.String()
		}
		st["stops"] = stops
		st["stoppedBecause"] = strings.Join(why, "; ")
	}
	return result{Index: content.Index{FileName: name, MIMEType: res.Entries[0].MIMEType, TotalSize: size, Structure: st}, Objects: []content.Object{}}, nil
}

func init() {
	pdk.Tool("extract", "Resolves a container recursively and hands every inner file back to the host by its container path.",
		extract, pdk.ReadOnly())
}
