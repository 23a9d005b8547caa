package scim

import (
	"encoding/json"
	"strings"
)

// ParseFilter reads the filters the providers send (RFC 7644 §3.4.2.2):
// one or more `attribute eq "value"` joined by `and`. Other operators,
// `or`, `not` and groupings are invalidFilter: they are not needed to
// provision, and a filter half-understood would answer wrong users.
func ParseFilter(s string) ([]Condition, error) {
	var out []Condition
	rest := strings.TrimSpace(s)
	if rest == "" {
		return nil, nil
	}
	for {
		attr, after, ok := strings.Cut(rest, " ")
		if !ok || attr == "" {
			return nil, badRequest("invalidFilter", "filter %q: want attribute eq \"value\"", s)
		}
		after = strings.TrimLeft(after, " ")
		op, after, ok := strings.Cut(after, " ")
		if !ok || !strings.EqualFold(op, "eq") {
			return nil, badRequest("invalidFilter", "filter %q: only eq (and and) is supported", s)
		}
		after = strings.TrimLeft(after, " ")
		if !strings.HasPrefix(after, `"`) {
			return nil, badRequest("invalidFilter", "filter %q: the value must be a quoted string", s)
		}
		dec := json.NewDecoder(strings.NewReader(after))
		var v string
		if err := dec.Decode(&v); err != nil {
			return nil, badRequest("invalidFilter", "filter %q: the value is not a JSON string: %v", s, err)
		}
		out = append(out, Condition{Attr: normalizeAttr(attr), Value: v})
		rest = strings.TrimSpace(after[dec.InputOffset():])
		if rest == "" {
			return out, nil
		}
		and, r, ok := strings.Cut(rest, " ")
		if !ok || !strings.EqualFold(and, "and") {
			return nil, badRequest("invalidFilter", "filter %q: conditions are joined by and only", s)
		}
		rest = strings.TrimSpace(r)
	}
}

// normalizeAttr lower-cases an attribute and drops the core schema's URN
// prefix ("urn:…:User:userName" is userName).
func normalizeAttr(a string) string {
	a = strings.ToLower(a)
	for _, urn := range []string{strings.ToLower(UserSchema) + ":", strings.ToLower(GroupSchema) + ":"} {
		a = strings.TrimPrefix(a, urn)
	}
	return a
}
