package sdk

import (
	"context"
	"fmt"
	"io"
	"io/fs"
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
// ctx ends. When every file's size is known (an *os.File, a bytes or
// strings reader) the body's length is computed ahead, so it is sent with
// a Content-Length rather than chunked (which not every server reads
// whole); otherwise length is -1.
func streamForm(ctx context.Context, parts []formPart) (body io.ReadCloser, contentType string, length int64, err error) {
	length = 0
	for _, p := range parts {
		if p.required && p.content == nil && p.value == "" {
			return nil, "", 0, fmt.Errorf("form field %q is required", p.name)
		}
		if p.content != nil && length >= 0 {
			if n, ok := readerSize(p.content); ok {
				length += n
			} else {
				length = -1
			}
		}
	}
	pr, pw := io.Pipe()
	mw := multipart.NewWriter(pw)
	if length >= 0 {
		// The framing's length: the same parts with their contents left out.
		var framing countWriter
		fw := multipart.NewWriter(&framing)
		if err := fw.SetBoundary(mw.Boundary()); err != nil {
			return nil, "", 0, err
		}
		if err := writeForm(ctx, fw, parts, false); err != nil {
			return nil, "", 0, err
		}
		if err := fw.Close(); err != nil {
			return nil, "", 0, err
		}
		length += framing.n
	}
	go func() {
		err := writeForm(ctx, mw, parts, true)
		if err == nil {
			err = mw.Close()
		}
		pw.CloseWithError(err)
	}()
	return pr, mw.FormDataContentType(), length, nil
}

// readerSize is what is left to read of r, when r knows.
func readerSize(r io.Reader) (int64, bool) {
	switch v := r.(type) {
	case interface{ Len() int }:
		return int64(v.Len()), true
	case interface {
		Stat() (fs.FileInfo, error)
		io.Seeker
	}:
		st, err := v.Stat()
		if err != nil || !st.Mode().IsRegular() {
			return 0, false
		}
		off, err := v.Seek(0, io.SeekCurrent)
		if err != nil || off > st.Size() {
			return 0, false
		}
		return st.Size() - off, true
	}
	return 0, false
}

type countWriter struct{ n int64 }

func (c *countWriter) Write(p []byte) (int, error) {
	c.n += int64(len(p))
	return len(p), nil
}

func writeForm(ctx context.Context, mw *multipart.Writer, parts []formPart, contents bool) error {
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
			if !contents {
				continue
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
