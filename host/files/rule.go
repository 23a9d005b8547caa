package files

import (
	"fmt"
	"path"
	"strings"

	"github.com/agenthost/agenthost/host/files/filemeta"
	"github.com/agenthost/agenthost/host/tenancy"
)

// rule is a parsed folder auto-rule.
type rule struct{ kind, arg string }

// parseRule parses "tag:X", "mime:type/sub" or "mime:type/*", "name:GLOB".
func parseRule(s string) (rule, error) {
	kind, arg, ok := strings.Cut(s, ":")
	arg = strings.TrimSpace(arg)
	if !ok || arg == "" {
		return rule{}, fmt.Errorf("%w: auto-rule %q: want tag:NAME, mime:TYPE or name:GLOB", tenancy.ErrInvalid, clip(s))
	}
	switch kind {
	case "tag", "mime":
	case "name":
		if _, err := path.Match(arg, ""); err != nil {
			return rule{}, fmt.Errorf("%w: auto-rule %q: %v", tenancy.ErrInvalid, clip(s), err)
		}
	default:
		return rule{}, fmt.Errorf("%w: auto-rule %q: unknown kind %q (tag, mime, name)", tenancy.ErrInvalid, clip(s), kind)
	}
	return rule{kind, arg}, nil
}

// matches reports whether the file falls under the rule.
func (r rule) matches(f filemeta.Item) bool {
	switch r.kind {
	case "tag":
		for _, t := range f.Tags {
			if t == r.arg {
				return true
			}
		}
	case "mime":
		return mimeMatches(r.arg, f.MIMEType)
	case "name":
		ok, _ := path.Match(strings.ToLower(r.arg), strings.ToLower(f.Name))
		return ok
	}
	return false
}

// mimeMatches compares a pattern ("image/*" or an exact type) with a type,
// ignoring parameters such as "; charset=utf-8".
func mimeMatches(pattern, mimeType string) bool {
	mimeType, _, _ = strings.Cut(mimeType, ";")
	mimeType = strings.TrimSpace(strings.ToLower(mimeType))
	pattern = strings.ToLower(pattern)
	if family, ok := strings.CutSuffix(pattern, "/*"); ok {
		return strings.HasPrefix(mimeType, family+"/")
	}
	return mimeType == pattern
}
