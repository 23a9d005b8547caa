// Command office is the extractor plugin for Office documents, mail, text
// formats, images and media (library: plugins/office/extract). It reads its
// document by range through the input capability and returns content
// objects with their references; malformed and hostile files (zip bombs
// inside a DOCX, truncated archives, mail bombs) end in a clear error or a
// stated stop inside the sandbox. Its attachments tool hands a mail's
// attached files (a mailbox's messages) back through the output capability,
// as a container's entries, for the host to extract each on its own.
package main

import (
	"context"
	"errors"
	"strings"

	"github.com/agenthost/agenthost/pdk"
	"github.com/agenthost/agenthost/pdk/content"
	"github.com/agenthost/agenthost/pdk/input"
	"github.com/agenthost/agenthost/pdk/output"
	"github.com/agenthost/agenthost/plugins/office/extract"
)

type args struct {
	Name     string `json:"name"`
	MIMEType string `json:"mimeType"`
}

type result struct {
	Index   content.Index    `json:"index"`
	Objects []content.Object `json:"objects"`
}

func init() {
	pdk.Tool("extract", "Extracts the content objects of a document.", func(a args) (result, error) {
		// Office files are read in many small pieces (ZIP entries, OLE
		// sectors): up to 32 MiB they are read into the plugin at once.
		f, err := input.Buffered(32 << 20)
		if err != nil {
			return result{}, err
		}
		idx, objs, err := extract.Extract(context.Background(), f, f.Size(), a.Name, a.MIMEType, extract.DefaultLimits())
		// Neither is "encrypted", the code the host answers with a request
		// for the file's password: no password opens them here.
		if errors.Is(err, extract.ErrEncryptedMail) {
			return result{}, pdk.Errorf("unsupported", "%v (an encrypted mail is read only with a recipient's private key, which the server does not hold; a password does not open it)", err)
		}
		if errors.Is(err, extract.ErrEncrypted) {
			// No decryption of Office's encryption (ECMA-376 agile, RC4
			// CryptoAPI) is implemented, so the file stays unread with or
			// without its password.
			return result{}, pdk.Errorf("unsupported", "%v (password-protected Office files cannot be opened yet, even with their password: save it without one)", err)
		}
		if err != nil {
			return result{}, pdk.Errorf("invalid_document", "%v", err)
		}
		if objs == nil {
			objs = []content.Object{}
		}
		return result{Index: idx, Objects: objs}, nil
	}, pdk.ReadOnly())
	pdk.Tool("attachments", "Hands a mail's attached files (and those of attached messages; a mailbox's messages) back to the host by their container paths, as a container's entries.",
		attachments, pdk.ReadOnly())
}

// attachmentsArgs are the attachments tool's arguments.
type attachmentsArgs struct {
	Name     string `json:"name" description:"the mail's file name, the first segment of every path"`
	MIMEType string `json:"mimeType,omitempty"`
	Path     string `json:"path,omitempty" description:"emit only the attachment with this path"`
}

// hostSink hands attachments to the host's output capability. A refusal
// of the output as a whole (no output for this call, too many failures)
// ends the walk.
type hostSink struct{ fatal error }

func (h *hostSink) File(p, mt string, data []byte) error {
	w, err := output.Begin(output.File{Path: p, Size: int64(len(data)), MIMEType: mt})
	if err != nil {
		return h.check(err)
	}
	if _, err := w.Write(data); err != nil {
		return h.check(w.Fail("io", err.Error()))
	}
	_, err = w.Close()
	return h.check(err)
}

func (h *hostSink) Fail(p, kind, reason string) error {
	if h.fatal != nil {
		return h.fatal
	}
	if err := output.Fail(p, kind, reason); err != nil {
		h.fatal = err
		return err
	}
	return nil
}

// check keeps a refusal that ends the walk.
func (h *hostSink) check(err error) error {
	var pe *pdk.Error
	if errors.As(err, &pe) && (pe.Code == "no_output" || pe.Code == "limit" && strings.Contains(pe.Message, "failures")) {
		h.fatal = err
	}
	return err
}

func attachments(a attachmentsArgs) (result, error) {
	f, err := input.Buffered(32 << 20)
	if err != nil {
		return result{}, err
	}
	out := &hostSink{}
	res, err := extract.Attachments(context.Background(), f, f.Size(), a.Name, a.MIMEType, a.Path, extract.DefaultLimits(), out)
	if out.fatal != nil {
		return result{}, pdk.Errorf("output_refused", "%v", out.fatal)
	}
	if err != nil {
		return result{}, pdk.Errorf("invalid_document", "%v", err)
	}
	if a.Path != "" && !res.Found && res.Failed == 0 {
		return result{}, pdk.Errorf("not_found", "%s has no attachment %q", a.Name, a.Path)
	}
	st := map[string]any{"container": res.Container, "files": res.Files, "failed": res.Failed, "truncated": len(res.Stops) > 0}
	if len(res.Stops) > 0 {
		st["stoppedBecause"] = strings.Join(res.Stops, "; ")
	}
	return result{Index: content.Index{FileName: a.Name, Structure: st}, Objects: []content.Object{}}, nil
}

func main() {}
