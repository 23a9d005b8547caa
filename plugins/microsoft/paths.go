package main

import (
	"net/url"
	"strings"

	"github.com/agenthost/agenthost/pdk"
)

// maxPathLen is SharePoint's and OneDrive's bound on a decoded path.
const maxPathLen = 400

// segments splits a remote path into its segments. A leading or trailing
// "/" is allowed; an empty segment ("//"), "." or "..", a NUL or other
// control character, a backslash, or a segment that percent-decodes to any
// of those (%2e%2e, %2f) is refused: a path names something below the
// service's root, never beside or above it.
func segments(p string) ([]string, error) {
	if len(p) > maxPathLen {
		return nil, pdk.Errorf("invalid_path", "the path is longer than %d characters", maxPathLen)
	}
	p = strings.TrimSuffix(strings.TrimPrefix(p, "/"), "/")
	if p == "" {
		return nil, nil
	}
	segs := strings.Split(p, "/")
	for _, s := range segs {
		if err := checkSegment(s); err != nil {
			return nil, err
		}
	}
	return segs, nil
}

func checkSegment(s string) error {
	cur := s
	for range 4 {
		switch {
		case cur == "":
			return pdk.Errorf("invalid_path", "the path has an empty segment (//)")
		case cur == "." || cur == "..":
			return pdk.Errorf("invalid_path", "the path may not go up or sideways (%q): name things below the service's root", s)
		case strings.ContainsAny(cur, "/\\"):
			return pdk.Errorf("invalid_path", "segment %q hides a path separator", s)
		}
		for _, r := range cur {
			if r < 0x20 || r == 0x7f {
				return pdk.Errorf("invalid_path", "the path has a control character")
			}
		}
		d, err := url.PathUnescape(cur)
		if err != nil || d == cur {
			return nil
		}
		cur = d
	}
	return pdk.Errorf("invalid_path", "segment %q is encoded too many times", s)
}

// itemName checks a drive item's name against OneDrive's and SharePoint's
// rules (no " * : < > ? / \ |), besides the checks of segments.
func itemName(s string) error {
	if err := checkSegment(s); err != nil {
		return err
	}
	if strings.ContainsAny(s, `"*:<>?/\|`) || strings.TrimSpace(s) != s {
		return pdk.Errorf("invalid_path", "%q is not a valid OneDrive or SharePoint name (no \" * : < > ? / \\ | nor leading or trailing spaces)", s)
	}
	return nil
}

// escape joins segments for a Graph path, each percent-encoded.
func escape(segs []string) string {
	out := make([]string, len(segs))
	for i, s := range segs {
		out[i] = url.PathEscape(s)
	}
	return strings.Join(out, "/")
}

// join joins path parts, skipping empty ones.
func join(parts ...string) string {
	var out []string
	for _, p := range parts {
		if p = strings.Trim(p, "/"); p != "" {
			out = append(out, p)
		}
	}
	return strings.Join(out, "/")
}

// driveSegments checks a path below a drive's root: every segment a valid
// item name.
func driveSegments(segs []string) error {
	for _, s := range segs {
		if err := itemName(s); err != nil {
			return err
		}
	}
	return nil
}
