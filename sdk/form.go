package sdk

import (
	"context"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/textproto"
	"path/filepath"
	"strings"
)

// formPart is one field of a multipart/form-data body: a file (content,
// filename) or a value.
type formPart struct {
	name, filename, value string
	content               io.Reader
	required              bool
}

// streamForm returns a multipart/form-data body that is written while it
// is sent: the files are copied from their readers through a pipe, never
// held in memory whole. The writer stops when the request's reader is
// closed (the transport closes it when the request ends, sent or not) or
// ctx ends.
func streamForm(ctx context.Context, parts []formPart) (io.ReadCloser, string, error) {
	for _, p := range parts {
		if p.required && p.content == nil && p.value == "" {
			return nil, "", fmt.Errorf("form field %q is required", p.name)
		}
	}
	pr, pw := io.Pipe()
	mw := multipart.NewWriter(pw)
	go func() {
		err := writeForm(ctx, mw, parts)
		if err == nil {
			err = mw.Close()
		}
		pw.CloseWithError(err)
	}()
	return pr, mw.FormDataContentType(), nil
}

func writeForm(ctx context.Context, mw *multipart.Writer, parts []formPart) error {
	for _, p := range parts {
		switch {
		case p.content != nil:
			h := make(textproto.MIMEHeader)
			h.Set("Content-Disposition", fmt.Sprintf(`form-data; name="%s"; filename="%s"`, quote(p.name), quote(p.filename)))
			ct := mime.TypeByExtension(strings.ToLower(filepath.Ext(p.filename)))
			if ct == "" {
				ct = "application/octet-stream"
			}
			h.Set("Content-Type", ct)
			w, err := mw.CreatePart(h)
			if err != nil {
				return err
			}
			if _, err := io.Copy(w, ctxReader{ctx, p.content}); err != nil {
				return fmt.Errorf("form field %q: %w", p.name, err)
			}
		case p.value != "":
			if err := mw.WriteField(p.name, p.value); err != nil {
				return err
			}
		}
	}
	return nil
}

var quoter = strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\r", "", "\n", "")

func quote(s string) string { return quoter.Replace(s) }

// ctxReader stops a copy once ctx ends.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}
