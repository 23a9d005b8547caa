package files

import (
	"bufio"
	"strings"
	"testing"
)

// TestDetectMIME: without a known extension, documents and archives that
// net/http's sniffing misses are known by their first bytes, so an RTF is
// never handed on as plain text nor a Word file as octet-stream.
func TestDetectMIME(t *testing.T) {
	for _, c := range []struct{ name, head, want string }{
		{"letter", `{\rtf1\ansi Hello}`, "application/rtf"},
		{"scan", "\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1\x00\x00", "application/x-ole-storage"},
		{"bundle", "7z\xbc\xaf\x27\x1c\x00\x04", "application/x-7z-compressed"},
		{"bundle", "Rar!\x1a\x07\x01\x00", "application/vnd.rar"},
		{"data", "\xfd7zXZ\x00\x00", "application/x-xz"},
		{"data", "BZh91AY&SY", "application/x-bzip2"},
		{"notes", "plain words", "text/plain; charset=utf-8"},
		{"x.json", `{"a": 1}`, "application/json"},
	} {
		if got := detectMIME(c.name, bufio.NewReader(strings.NewReader(c.head))); got != c.want {
			t.Errorf("%s %q: %s, want %s", c.name, c.head, got, c.want)
		}
	}
}
