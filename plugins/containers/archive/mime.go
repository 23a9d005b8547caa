package archive

import (
	"bytes"
	"path"
	"strings"
	"unicode/utf8"
)

// mimeByExt is our own table rather than package mime's: that one reads the
// system's mime.types, which differs between hosts and is absent in the
// sandbox, so results would depend on where the plugin runs.
var mimeByExt = map[string]string{
	".pdf": "application/pdf", ".txt": "text/plain; charset=utf-8", ".md": "text/markdown; charset=utf-8",
	".csv": "text/csv; charset=utf-8", ".tsv": "text/tab-separated-values; charset=utf-8",
	".json": "application/json", ".xml": "application/xml", ".html": "text/html; charset=utf-8",
	".htm": "text/html; charset=utf-8", ".rtf": "application/rtf", ".yaml": "application/yaml",
	".yml": "application/yaml", ".log": "text/plain; charset=utf-8", ".eml": "message/rfc822",
	".docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
	".xlsx": "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
	".pptx": "application/vnd.openxmlformats-officedocument.presentationml.presentation",
	".doc":  "application/msword", ".xls": "application/vnd.ms-excel", ".ppt": "application/vnd.ms-powerpoint",
	".odt": "application/vnd.oasis.opendocument.text", ".ods": "application/vnd.oasis.opendocument.spreadsheet",
	".odp": "application/vnd.oasis.opendocument.presentation", ".epub": "application/epub+zip",
	".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".gif": "image/gif",
	".webp": "image/webp", ".bmp": "image/bmp", ".tif": "image/tiff", ".tiff": "image/tiff",
	".svg": "image/svg+xml", ".mp3": "audio/mpeg", ".wav": "audio/wav", ".ogg": "audio/ogg",
	".flac": "audio/flac", ".m4a": "audio/mp4", ".mp4": "video/mp4", ".webm": "video/webm",
	".mov": "video/quicktime", ".mkv": "video/x-matroska", ".avi": "video/x-msvideo",
	".zip": "application/zip", ".tar": "application/x-tar", ".gz": "application/gzip",
	".tgz": "application/gzip", ".bz2": "application/x-bzip2", ".tbz2": "application/x-bzip2",
	".tbz": "application/x-bzip2", ".xz": "application/x-xz", ".txz": "application/x-xz",
	".7z": "application/x-7z-compressed", ".rar": "application/vnd.rar", ".zst": "application/zstd",
	".tzst": "application/zstd", ".mbox": "application/mbox", ".msg": "application/vnd.ms-outlook",
}

// containerMIME wins over the extension: the bytes were recognised.
var containerMIME = [...]string{Zip: "application/zip", Tar: "application/x-tar", Gzip: "application/gzip",
	Bzip2: "application/x-bzip2", Xz: "application/x-xz", SevenZip: "application/x-7z-compressed", Rar: "application/vnd.rar",
	Zstd: "application/zstd"}

// sniffs are magic prefixes at offset 0, checked in order.
var sniffs = []struct {
	magic string
	mime  string
}{
	{"%PDF-", "application/pdf"},
	{"\x89PNG\r\n\x1a\n", "image/png"},
	{"\xff\xd8\xff", "image/jpeg"},
	{"GIF87a", "image/gif"},
	{"GIF89a", "image/gif"},
	{"BM", "image/bmp"},
	{"II*\x00", "image/tiff"},
	{"MM\x00*", "image/tiff"},
	{"ID3", "audio/mpeg"},
	{"OggS", "audio/ogg"},
	{"fLaC", "audio/flac"},
	{"\x1a\x45\xdf\xa3", "video/webm"},
	{"{\\rtf", "application/rtf"},
	{"%!PS", "application/postscript"},
	{"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1", "application/x-ole-storage"},
	{"<?xml", "application/xml"},
	{"PK\x03\x04", "application/zip"},
}

// mimeType names the type of an entry: a recognised container by its format,
// then by extension, then by its first bytes.
func mimeType(name string, head []byte, kind Kind) string {
	if kind != None {
		return containerMIME[kind]
	}
	if t, ok := mimeByExt[strings.ToLower(path.Ext(name))]; ok {
		return t
	}
	return sniff(head)
}

func sniff(head []byte) string {
	for _, s := range sniffs {
		if bytes.HasPrefix(head, []byte(s.magic)) {
			return s.mime
		}
	}
	if len(head) >= 12 {
		switch {
		case string(head[0:4]) == "RIFF" && string(head[8:12]) == "WEBP":
			return "image/webp"
		case string(head[0:4]) == "RIFF" && string(head[8:12]) == "WAVE":
			return "audio/wav"
		case string(head[4:8]) == "ftyp":
			return "video/mp4"
		}
	}
	if isText(head) {
		lower := bytes.ToLower(bytes.TrimSpace(head))
		if bytes.HasPrefix(lower, []byte("<!doctype html")) || bytes.HasPrefix(lower, []byte("<html")) {
			return "text/html; charset=utf-8"
		}
		return "text/plain; charset=utf-8"
	}
	return "application/octet-stream"
}

// isText accepts UTF-8 without control characters other than whitespace; a
// rune cut at the end of the head is allowed.
func isText(head []byte) bool {
	if len(head) == 0 {
		return false
	}
	for i := 0; i < len(head); {
		r, n := utf8.DecodeRune(head[i:])
		if r == utf8.RuneError && n <= 1 {
			return len(head)-i < utf8.UTFMax && !utf8.FullRune(head[i:])
		}
		if r < 0x20 && r != '\t' && r != '\n' && r != '\r' && r != '\f' {
			return false
		}
		i += n
	}
	return true
}

// MIMEType names the type of a file that is not a recognised container,
// as the walk names its entries: by extension, then by its first bytes.
func MIMEType(name string, head []byte) string { return mimeType(name, head, None) }
