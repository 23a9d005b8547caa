package archive

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// maxNameLen bounds a cleaned member name: longer names are not paths anyone
// wrote, and they would make every derived path and log line large.
const maxNameLen = 4096

// cleanName turns a member name as written in an archive into a relative,
// slash-separated path whose segments are never empty, "." or "..". It
// refuses rather than repairs: an entry that tries to leave its container is
// hostile, and quietly renaming it would hide that. The returned kind is
// ProblemTraversal or ProblemName when the name is refused.
func cleanName(raw string) (name string, dir bool, kind, reason string) {
	switch {
	case strings.IndexByte(raw, 0) >= 0:
		return "", false, ProblemTraversal, "NUL byte in the name"
	case strings.IndexByte(raw, '\\') >= 0:
		return "", false, ProblemTraversal, "backslash in the name (a Windows path separator)"
	case strings.HasPrefix(raw, "/"):
		return "", false, ProblemTraversal, "absolute path"
	case len(raw) >= 2 && raw[1] == ':' && isLetter(raw[0]):
		return "", false, ProblemTraversal, "drive letter"
	}
	dir = strings.HasSuffix(raw, "/")
	segs := make([]string, 0, strings.Count(raw, "/")+1)
	for _, s := range strings.Split(raw, "/") {
		switch s {
		case "", ".":
			continue
		case "..":
			return "", false, ProblemTraversal, `".." leaves the container`
		}
		segs = append(segs, s)
	}
	name = strings.Join(segs, "/")
	switch {
	case name == "":
		return "", false, ProblemName, "empty name"
	case len(name) > maxNameLen:
		return "", false, ProblemName, fmt.Sprintf("name longer than %d bytes", maxNameLen)
	case !strings.ContainsFunc(name, isControl):
		return name, dir, "", ""
	}
	return "", false, ProblemName, "control character in the name"
}

func isLetter(c byte) bool { return c|0x20 >= 'a' && c|0x20 <= 'z' }

func isControl(r rune) bool { return r < 0x20 || r == 0x7f }

// display shows a refused name in a Problem: as written, with anything
// non-printable escaped so logs and UIs show what was there.
func display(raw string) string {
	if len(raw) > maxNameLen {
		raw = raw[:maxNameLen] + "…"
	}
	if utf8.ValidString(raw) && strings.IndexFunc(raw, func(r rune) bool { return !strconv.IsPrint(r) }) < 0 {
		return raw
	}
	q := strconv.QuoteToGraphic(raw)
	return q[1 : len(q)-1]
}

func baseName(p string) string {
	if i := strings.LastIndexByte(p, '/'); i >= 0 {
		return p[i+1:]
	}
	return p
}

// CleanName is the rule every member name passes, for other extractors
// that hand files back as a container's entries (a PDF's attachments): the
// relative, slash-separated path to use, or, when the name is refused, its
// Problem kind (ProblemTraversal, ProblemName) and the reason.
func CleanName(raw string) (name, kind, reason string) {
	name, _, kind, reason = cleanName(raw)
	return name, kind, reason
}
