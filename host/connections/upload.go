package connections

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/agenthost/agenthost/host/egress"
	"github.com/agenthost/agenthost/pdk/connection/wire"
)

// UploadSource is the file an upload sends, read by the host in ranges
// (docs/connectors.md, "Uploads"): a connector's requests name ranges of
// it (wire.Part) and the host streams them from here, so the file never
// passes through a plugin, and a 100 MB upload holds no 100 MB buffer
// anywhere. It lives for one connector upload call (WithUpload).
type UploadSource struct {
	Name, MIMEType string
	Size           int64
	r              io.ReaderAt
}

// NewUploadSource is the source of size bytes of r.
func NewUploadSource(name, mimeType string, size int64, r io.ReaderAt) *UploadSource {
	return &UploadSource{Name: name, MIMEType: mimeType, Size: size, r: r}
}

// BytesSource is the source of data held in memory (a caller that has
// the file already: tests, small files).
func BytesSource(name, mimeType string, data []byte) *UploadSource {
	return NewUploadSource(name, mimeType, int64(len(data)), bytes.NewReader(data))
}

type uploadKey struct{}

// WithUpload returns ctx for a connector call that uploads src: the
// connection and filetransfer capabilities read src's ranges in its
// calls, and only there.
func WithUpload(ctx context.Context, src *UploadSource) context.Context {
	return context.WithValue(ctx, uploadKey{}, src)
}

// UploadFrom is the upload ctx runs (WithUpload), if any.
func UploadFrom(ctx context.Context) (*UploadSource, bool) {
	s, ok := ctx.Value(uploadKey{}).(*UploadSource)
	return s, ok && s != nil
}

// ErrNoUpload: a request named bytes of an upload outside one.
var ErrNoUpload = errors.New("no upload is running in this call")

// Section is length bytes from offset, refused unless inside the file (a
// hostile connector names the ranges).
func (s *UploadSource) Section(offset, length int64) (*io.SectionReader, error) {
	if offset < 0 || length < 0 || offset > s.Size || length > s.Size-offset {
		return nil, fmt.Errorf("range %d+%d is outside the %d-byte upload", offset, length, s.Size)
	}
	return io.NewSectionReader(s.r, offset, length), nil
}

// readBuffer is what a range is read from the blob in: S3 answers each
// ReadAt with a ranged GET, so reads of a few KiB (io.Copy's) would be
// thousands of requests for one file; PostgreSQL caches a chunk anyway.
const readBuffer = 1 << 20

// Reader reads length bytes from offset in readBuffer steps.
func (s *UploadSource) Reader(offset, length int64) (io.Reader, error) {
	sec, err := s.Section(offset, length)
	if err != nil {
		return nil, err
	}
	return bufio.NewReaderSize(sec, int(min(readBuffer, max(length, 16)))), nil
}

// maxParts bounds the pieces of one body.
const maxParts = 16

// Stream is a request body made of parts: literal bytes and ranges of
// src (nil outside an upload, where only literal parts are accepted),
// read anew each time the body is sent.
func Stream(src *UploadSource, parts []wire.Part) (*egress.Stream, error) {
	if len(parts) > maxParts {
		return nil, fmt.Errorf("a body of %d parts (at most %d)", len(parts), maxParts)
	}
	var total int64
	for i, p := range parts {
		switch {
		case p.Upload != nil && len(p.Data) > 0:
			return nil, fmt.Errorf("body part %d has both data and a range of the upload", i)
		case p.Upload != nil:
			if src == nil {
				return nil, ErrNoUpload
			}
			if _, err := src.Section(p.Upload.Offset, p.Upload.Length); err != nil {
				return nil, fmt.Errorf("body part %d: %w", i, err)
			}
			total += p.Upload.Length
		default:
			total += int64(len(p.Data))
		}
	}
	return &egress.Stream{Length: total, Open: func() (io.Reader, error) {
		rs := make([]io.Reader, 0, len(parts))
		for _, p := range parts {
			if p.Upload == nil {
				rs = append(rs, bytes.NewReader(p.Data))
				continue
			}
			r, err := src.Reader(p.Upload.Offset, p.Upload.Length)
			if err != nil {
				return nil, err
			}
			rs = append(rs, r)
		}
		return io.MultiReader(rs...), nil
	}}, nil
}
