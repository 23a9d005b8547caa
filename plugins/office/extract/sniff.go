package extract

import (
	"archive/zip"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"unicode/utf8"
)

// sniff names the MIME type the leading bytes show, or "". It is the last
// resort of dispatch, for inputs with neither a useful type nor extension.
func sniff(r io.ReaderAt, size int64) string {
	head := make([]byte, min(size, 4096))
	n, _ := r.ReadAt(head, 0)
	head = head[:n]
	switch {
	case bytes.HasPrefix(head, []byte("PK\x03\x04")):
		return sniffZip(r, size)
	case bytes.HasPrefix(head, oleMagic):
		return mimeOLE
	case bytes.HasPrefix(bytes.TrimLeft(head, " \t\r\n"), []byte(`{\rtf`)):
		return mimeRTF
	case bytes.HasPrefix(head, []byte("\x89PNG\r\n\x1a\n")):
		return "image/png"
	case bytes.HasPrefix(head, []byte{0xff, 0xd8, 0xff}):
		return "image/jpeg"
	case bytes.HasPrefix(head, []byte("GIF87a")), bytes.HasPrefix(head, []byte("GIF89a")):
		return "image/gif"
	case len(head) >= 12 && string(head[:4]) == "RIFF" && string(head[8:12]) == "WEBP":
		return "image/webp"
	case len(head) >= 12 && (string(head[:4]) == "RIFF" || string(head[:4]) == "RF64") && string(head[8:12]) == "WAVE":
		return "audio/wav"
	case bytes.HasPrefix(head, []byte("II*\x00")), bytes.HasPrefix(head, []byte("MM\x00*")):
		return "image/tiff"
	case len(head) >= 18 && string(head[:2]) == "BM" && bmpHeaderSize(binary.LittleEndian.Uint32(head[14:18])):
		return "image/bmp"
	case len(head) >= 8 && string(head[4:8]) == "ftyp":
		return "video/mp4"
	case bytes.HasPrefix(head, []byte{0x1a, 0x45, 0xdf, 0xa3}):
		return "video/webm"
	case bytes.HasPrefix(head, []byte("ID3")):
		return "audio/mpeg"
	case len(head) >= 4 && head[0] == 0xff && head[1]&0xe0 == 0xe0:
		if _, ok := parseMP3Header(head[:4]); ok {
			return "audio/mpeg"
		}
	}
	return sniffText(head)
}

func bmpHeaderSize(n uint32) bool {
	switch n {
	case 12, 40, 52, 56, 108, 124:
		return true
	}
	return false
}

// sniffZip tells the three OOXML packages apart by their main parts, and
// OpenDocument packages by their mimetype entry.
func sniffZip(r io.ReaderAt, size int64) string {
	zr, err := zip.NewReader(r, size)
	if err != nil && zr == nil {
		return ""
	}
	for _, f := range zr.File {
		if f.Name == "mimetype" && f.UncompressedSize64 < 100 {
			if rc, err := f.Open(); err == nil {
				b, _ := io.ReadAll(io.LimitReader(rc, 100))
				rc.Close()
				if m := strings.TrimSpace(string(b)); odfKind(m) != "" || m == mimeEPUB {
					return m
				}
			}
		}
	}
	for _, f := range zr.File {
		switch strings.ToLower(strings.ReplaceAll(f.Name, `\`, "/")) {
		case "word/document.xml":
			return mimeDOCX
		case "xl/workbook.xml":
			return mimeXLSX
		case "ppt/presentation.xml":
			return mimePPTX
		}
	}
	return ""
}

// sniffText recognises text by its bytes (UTF-8 or a UTF-16 byte-order
// mark, no NULs) and then markup and JSON by their first characters.
func sniffText(head []byte) string {
	if len(head) == 0 {
		return ""
	}
	utf16 := bytes.HasPrefix(head, []byte{0xff, 0xfe}) || bytes.HasPrefix(head, []byte{0xfe, 0xff})
	if !utf16 {
		if bytes.IndexByte(head, 0) >= 0 {
			return ""
		}
		// A 4 KiB window may end inside a rune.
		valid := head
		for i := 0; i < 3 && len(valid) > 0 && !utf8.Valid(valid); i++ {
			valid = valid[:len(valid)-1]
		}
		if !utf8.Valid(valid) {
			return ""
		}
	}
	t := strings.ToLower(strings.TrimLeft(string(bytes.TrimPrefix(head, []byte("\xef\xbb\xbf"))), " \t\r\n"))
	switch {
	case utf16:
		return "text/plain"
	case strings.HasPrefix(t, "<!doctype html"), strings.HasPrefix(t, "<html"):
		return "text/html"
	case strings.HasPrefix(t, "<?xml"), strings.HasPrefix(t, "<"):
		if strings.Contains(t, "<html") {
			return "text/html"
		}
		return "application/xml"
	case strings.HasPrefix(t, "{"), strings.HasPrefix(t, "["):
		if looksLikeJSON(head) {
			return "application/json"
		}
	}
	return "text/plain"
}

// looksLikeJSON reports whether head is the start of JSON: its tokens parse
// until the window ends. RTF ("{\rtf1") and other brace-led text do not.
func looksLikeJSON(head []byte) bool {
	d := json.NewDecoder(bytes.NewReader(bytes.TrimPrefix(head, []byte("\xef\xbb\xbf"))))
	for {
		_, err := d.Token()
		switch {
		case err == nil:
			continue
		case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
			return true
		}
		var syn *json.SyntaxError
		// A window that ends inside a string or a number fails as a
		// syntax error at its very end.
		return errors.As(err, &syn) && syn.Offset >= int64(len(head))-1
	}
}

// strongSniff reports whether a sniffed type is sure enough to override the
// declared type and the extension: a document format known by its magic or
// its package structure (an RTF file named .doc, a DOCX sent as
// application/octet-stream or text/plain).
func strongSniff(m string) bool {
	switch m {
	case mimeRTF, mimeOLE, mimeDOCX, mimeXLSX, mimePPTX:
		return true
	}
	return odfKind(m) != ""
}
