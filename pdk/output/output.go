// Package output hands files back to the host (capability "output"; declare
// it in plugin.json): the container extractor emits an archive's members
// with it. A file's bytes go from the plugin's memory straight into the
// host's sink, one copy, never through JSON.
//
//	w, err := output.Begin(output.File{Path: "a.zip/report.pdf", Size: n})
//	if err != nil { /* refused: over a limit, no sink; record and go on */ }
//	io.Copy(w, r)
//	_, err = w.Close()
//
// The host bounds what a call may emit (files and bytes, 10,000 and 500 MiB
// by default): Begin refuses a file that would pass them and says what is
// left, and writing past an announced size or the budget ends the call.
package output

import (
	"errors"

	"github.com/agenthost/agenthost/pdk"
)

// File is the metadata of one emitted file.
type File struct {
	// Path is the file's container path, e.g. "a.zip/docs/report.pdf".
	Path string `json:"path"`
	// Size is the exact length when known, −1 when not.
	Size int64 `json:"size"`
	// MIMEType is the plugin's guess.
	MIMEType string `json:"mimeType,omitempty"`
	// Container marks a nested container listed by its path, without bytes.
	Container bool `json:"container,omitempty"`
}

// Budget is what the call may still emit after a Begin.
type Budget struct {
	BytesLeft int64 `json:"bytesLeft"`
	FilesLeft int64 `json:"filesLeft"`
}

// Receipt is the host's answer to a completed file.
type Receipt struct {
	Size int64 `json:"size"`
	// ID is the host's name for the stored file (e.g. its sha256).
	ID string `json:"id"`
}

// maxWrite mirrors the host's limit for one write.
const maxWrite = 16 << 20

// ErrClosed: the writer was closed or failed already.
var ErrClosed = errors.New("output: file already ended")

// Writer is the open file: write its bytes, then Close (or Fail).
type Writer struct {
	path   string
	Budget Budget
	done   bool
}

// Begin starts a file. A refusal is a *pdk.Error with the host's code
// ("limit", "no_output", "invalid_request", "refused").
func Begin(f File) (*Writer, error) {
	w := &Writer{path: f.Path}
	if err := pdk.Invoke(begin, f, &w.Budget); err != nil {
		return nil, err
	}
	return w, nil
}

// Write copies p into the file (io.Writer).
func (w *Writer) Write(p []byte) (int, error) {
	if w.done {
		return 0, ErrClosed
	}
	total := 0
	for total < len(p) {
		chunk := p[total:min(len(p), total+maxWrite)]
		total += write(chunk)
	}
	return total, nil
}

// Close ends the file; the host checks its size against the announced one.
func (w *Writer) Close() (Receipt, error) {
	if w.done {
		return Receipt{}, ErrClosed
	}
	w.done = true
	var r Receipt
	err := pdk.Invoke(end, struct{}{}, &r)
	return r, err
}

// Fail discards the open file and records why it could not be emitted.
func (w *Writer) Fail(kind, reason string) error {
	if w.done {
		return ErrClosed
	}
	w.done = true
	return Fail(w.path, kind, reason)
}

// Fail records an entry that could not be emitted: its path, a short kind
// ("bomb", "traversal", "truncated"…) and a reason a user can act on.
func Fail(path, kind, reason string) error {
	return pdk.Invoke(fail, struct {
		Path   string `json:"path"`
		Kind   string `json:"kind"`
		Reason string `json:"reason"`
	}{path, kind, reason}, nil)
}
