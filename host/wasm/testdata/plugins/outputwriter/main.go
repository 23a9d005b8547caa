// Command outputwriter is a test plugin for the output capability: it runs a
// script of begin / write / end / fail steps, in any order (so tests can
// misuse the capability on purpose), and reports each step's outcome.
package main

import (
	"bytes"
	"errors"

	"github.com/agenthost/agenthost/pdk"
	"github.com/agenthost/agenthost/pdk/output"
)

type step struct {
	Op        string `json:"op" enum:"begin,write,end,fail,rawwrite"`
	Path      string `json:"path,omitempty"`
	Size      int64  `json:"size,omitempty"`
	MIMEType  string `json:"mimeType,omitempty"`
	Container bool   `json:"container,omitempty"`
	Bytes     int    `json:"bytes,omitempty" description:"how many bytes to write" minimum:"0"`
	Kind      string `json:"kind,omitempty"`
	Reason    string `json:"reason,omitempty"`
}

type args struct {
	Steps []step `json:"steps"`
}

type outcome struct {
	Code string `json:"code,omitempty"`
	ID   string `json:"id,omitempty"`
	Left int64  `json:"bytesLeft,omitempty"`
}

func code(err error) string {
	var pe *pdk.Error
	if errors.As(err, &pe) {
		return pe.Code
	}
	if err != nil {
		return "error"
	}
	return ""
}

func init() {
	pdk.Tool("run", "Runs output steps and reports each one's outcome.", func(a args) ([]outcome, error) {
		var w *output.Writer
		out := make([]outcome, 0, len(a.Steps))
		for _, s := range a.Steps {
			var o outcome
			switch s.Op {
			case "begin":
				nw, err := output.Begin(output.File{Path: s.Path, Size: s.Size, MIMEType: s.MIMEType, Container: s.Container})
				o.Code = code(err)
				if err == nil {
					w, o.Left = nw, nw.Budget.BytesLeft
				}
			case "write", "rawwrite":
				// rawwrite writes through a fresh writer, as a guest that
				// never began a file would.
				ww := w
				if s.Op == "rawwrite" || ww == nil {
					ww = &output.Writer{}
				}
				data := bytes.Repeat([]byte{'x'}, s.Bytes)
				_, err := ww.Write(data)
				o.Code = code(err)
			case "end":
				ww := w
				if ww == nil {
					ww = &output.Writer{}
				}
				r, err := ww.Close()
				o.Code, o.ID = code(err), r.ID
				w = nil
			case "fail":
				o.Code = code(output.Fail(s.Path, s.Kind, s.Reason))
			}
			out = append(out, o)
		}
		return out, nil
	}, pdk.ReadOnly())
}

func main() {}
