package main

import (
	"net/url"
	"regexp"
	"strings"
	"unicode"

	"github.com/agenthost/agenthost/pdk"
)

// maxDepth bounds a Drive path: resolution is one request per folder, and
// a hostile drive's cycles make arbitrarily deep paths.
const maxDepth = 32

// idPattern is what a Drive file id, a Gmail message or label id, may be:
// ids go into URL paths, so nothing else is accepted from the caller or
// from the provider.
var idPattern = regexp.MustCompile(`^[A-Za-z0-9_-]{1,200}$`)

// drivePath is a parsed Drive path: an optional starting id (the "id:"
// form) and the names below it.
type drivePath struct {
	startID string // "" for My Drive
	names   []string
}

// parseDrivePath reads "/Folder/Sub/file.pdf", "id:<id>" or
// "id:<id>/Sub/file.pdf". It refuses NULs and control characters,
// backslashes, "." and ".." segments and their percent-encoded forms,
// empty segments and paths deeper than maxDepth.
func parseDrivePath(p string) (drivePath, error) {
	var out drivePath
	if rest, ok := strings.CutPrefix(p, "id:"); ok {
		id, tail, _ := strings.Cut(rest, "/")
		if !idPattern.MatchString(id) {
			return out, pdk.Errorf("invalid_path", "%q is not a Drive id", id)
		}
		out.startID, p = id, tail
	}
	p = strings.Trim(p, "/")
	if p == "" {
		return out, nil
	}
	for _, seg := range strings.Split(p, "/") {
		if err := checkName(seg); err != nil {
			return out, err
		}
		out.names = append(out.names, seg)
	}
	if len(out.names) > maxDepth {
		return out, pdk.Errorf("invalid_path", "path is %d folders deep, more than %d", len(out.names), maxDepth)
	}
	return out, nil
}

// checkName refuses a name that could mean anything but one item.
func checkName(seg string) error {
	switch {
	case seg == "":
		return pdk.Errorf("invalid_path", "empty segment in path")
	case seg == "." || seg == "..":
		return pdk.Errorf("invalid_path", "%q is not allowed in a path", seg)
	case len(seg) > 1024:
		return pdk.Errorf("invalid_path", "name longer than 1024 bytes")
	case strings.ContainsRune(seg, '\\'):
		return pdk.Errorf("invalid_path", "backslash in %q: paths use /", seg)
	}
	for _, r := range seg {
		if r == 0 || unicode.IsControl(r) {
			return pdk.Errorf("invalid_path", "control character in a path")
		}
	}
	// Encoded traversal: a segment that decodes (once or more) to "." or
	// "..", or to something holding a separator or a NUL, is refused.
	d := seg
	for range 3 {
		u, err := url.PathUnescape(d)
		if err != nil || u == d {
			break
		}
		d = u
		if d == "." || d == ".." || strings.ContainsAny(d, "/\\\x00") {
			return pdk.Errorf("invalid_path", "encoded traversal in %q", seg)
		}
	}
	return nil
}

// checkFileName checks a name to create.
func checkFileName(name string) error {
	if strings.Contains(name, "/") {
		return pdk.Errorf("invalid_name", "a file name cannot contain /")
	}
	if err := checkName(name); err != nil {
		return pdk.Errorf("invalid_name", "%s", strings.TrimPrefix(err.Error(), "invalid_path: "))
	}
	return nil
}

// quote makes a Drive query string literal: single quotes, with \ and '
// escaped by a backslash.
func quote(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(s) + "'"
}

// checkCursor accepts a page token to hand back to Google.
func checkCursor(c string) error {
	if len(c) > 4096 {
		return pdk.Errorf("invalid_cursor", "cursor too long")
	}
	for _, r := range c {
		if r <= ' ' || r > '~' {
			return pdk.Errorf("invalid_cursor", "cursor %q is not from a listing", c)
		}
	}
	return nil
}
