package files

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/agenthost/agenthost/host/tenancy"
)

// MaxNameBytes bounds file and folder names (the common file-system limit).
const MaxNameBytes = 255

// ValidateName checks a file or folder name: one path element, no path tricks.
// It refuses empty names, "." and "..", separators (/ and \), NUL and other
// control characters, invalid UTF-8, leading or trailing white space and names
// longer than MaxNameBytes. The error wraps tenancy.ErrInvalid and says why.
func ValidateName(kind, name string) error {
	bad := func(why string) error {
		return fmt.Errorf("%w: %s name %q: %s", tenancy.ErrInvalid, kind, clip(name), why)
	}
	switch {
	case name == "":
		return fmt.Errorf("%w: %s name is empty", tenancy.ErrInvalid, kind)
	case !utf8.ValidString(name):
		return bad("not valid UTF-8")
	case len(name) > MaxNameBytes:
		return bad(fmt.Sprintf("longer than %d bytes", MaxNameBytes))
	case name == "." || name == "..":
		return bad("a relative path element")
	case strings.ContainsAny(name, `/\`):
		return bad("contains a path separator")
	case strings.TrimSpace(name) != name:
		return bad("starts or ends with white space")
	}
	for _, r := range name {
		if unicode.IsControl(r) {
			return bad("contains a control character")
		}
	}
	return nil
}

// MaxTagBytes bounds a tag.
const MaxTagBytes = 64

// normalizeTags trims, de-duplicates and validates tags.
func normalizeTags(tags []string) ([]string, error) {
	seen := make(map[string]bool, len(tags))
	out := make([]string, 0, len(tags))
	for _, t := range tags {
		t = strings.TrimSpace(t)
		switch {
		case t == "":
			return nil, fmt.Errorf("%w: empty tag", tenancy.ErrInvalid)
		case len(t) > MaxTagBytes || !utf8.ValidString(t):
			return nil, fmt.Errorf("%w: tag %q: longer than %d bytes or not UTF-8", tenancy.ErrInvalid, clip(t), MaxTagBytes)
		case strings.IndexFunc(t, unicode.IsControl) >= 0 || strings.ContainsRune(t, ','):
			return nil, fmt.Errorf("%w: tag %q: contains a control character or a comma", tenancy.ErrInvalid, clip(t))
		}
		if !seen[t] {
			seen[t] = true
			out = append(out, t)
		}
	}
	return out, nil
}

func clip(s string) string {
	if len(s) > 80 {
		return s[:80] + "…"
	}
	return s
}
