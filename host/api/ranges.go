package api

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/agenthost/agenthost/host/blob"
)

// sendBlob answers with a stored blob's bytes, or with the one byte range
// the request asks for (RFC 9110 §14): a PDF viewer loads only the pages it
// shows. etag is the content's quoted sha256; an If-Range that names
// another content gets the whole blob, as does a request for several ranges
// (a server may ignore Range; multipart/byteranges is not worth its
// weight here). A range that starts past the end is 416 with the size.
func sendBlob(c *fiber.Ctx, r blob.Reader, etag string) error {
	size := r.Size()
	c.Set(fiber.HeaderETag, etag)
	c.Set(fiber.HeaderAcceptRanges, "bytes")
	spec := c.Get(fiber.HeaderRange)
	if ir := c.Get(fiber.HeaderIfRange); ir != "" && ir != etag {
		spec = ""
	}
	start, end, ok, err := parseRange(spec, size)
	switch {
	case err != nil:
		r.Close()
		c.Set(fiber.HeaderContentRange, fmt.Sprintf("bytes */%d", size))
		return c.Status(fiber.StatusRequestedRangeNotSatisfiable).SendString(err.Error())
	case !ok:
		// fasthttp closes the reader once the response is written.
		return c.SendStream(r, int(size))
	}
	c.Set(fiber.HeaderContentRange, fmt.Sprintf("bytes %d-%d/%d", start, end-1, size))
	c.Status(fiber.StatusPartialContent)
	return c.SendStream(sectionCloser{io.NewSectionReader(r, start, end-start), r}, int(end-start))
}

// sectionCloser is a range of a blob that closes the blob.
type sectionCloser struct {
	*io.SectionReader
	io.Closer
}

// parseRange reads a Range header of one byte range against a blob of
// size bytes: [start, end) and ok, or ok false when the whole blob is
// answered (no header, another unit, several ranges, a malformed one, which
// RFC 9110 lets a server ignore), or an error when the one range cannot be
// satisfied.
func parseRange(h string, size int64) (start, end int64, ok bool, err error) {
	spec, found := strings.CutPrefix(h, "bytes=")
	if !found || strings.Contains(spec, ",") {
		return 0, 0, false, nil
	}
	first, last, found := strings.Cut(strings.TrimSpace(spec), "-")
	if !found {
		return 0, 0, false, nil
	}
	if first == "" {
		// A suffix: the last n bytes.
		n, perr := strconv.ParseInt(last, 10, 64)
		if perr != nil || n < 0 {
			return 0, 0, false, nil
		}
		if n == 0 {
			return 0, 0, false, fmt.Errorf("range %q selects no bytes", h)
		}
		return max(0, size-n), size, true, nil
	}
	s, perr := strconv.ParseInt(first, 10, 64)
	if perr != nil || s < 0 {
		return 0, 0, false, nil
	}
	e := size - 1
	if last != "" {
		if e, perr = strconv.ParseInt(last, 10, 64); perr != nil || e < s {
			return 0, 0, false, nil
		}
	}
	if s >= size {
		return 0, 0, false, fmt.Errorf("range %q starts past the end (%d bytes)", h, size)
	}
	return s, min(e+1, size), true, nil
}
