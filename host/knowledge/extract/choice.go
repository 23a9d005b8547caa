package extract

import (
	"fmt"
	"path"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/agenthost/agenthost/host/knowledge/kindex"
	"github.com/agenthost/agenthost/host/wasm"
)

// Which extractor a document gets is decided here, deterministically and by
// the operator, never by the plugins: any plugin may declare any MIME type,
// so a third-party plugin named to sort first must not receive the
// documents of a type a built-in serves (issue 10 item 6). The rules:
//
//  1. The operator's choice for the document's MIME type (exact, then its
//     family "type/*") wins, when the operator made one.
//  2. Otherwise a built-in plugin that serves the document wins: by exact
//     MIME type, then family, then extension, then by name among built-ins
//     (they ship with the host). A built-in serving the document by its
//     family or extension still wins over a third-party plugin declaring its
//     exact type.
//  3. Otherwise the one third-party plugin that claims the document serves it.
//  4. Several third-party plugins claim it and the operator named none: none
//     is chosen. Picking by name order is what let a plugin take over a type.

// OperatorChoice is the operator's choice of extractor by MIME type: an
// exact type ("application/pdf") or a family ("text/*") to the name of the
// plugin that extracts it, whether built-in or third-party. A document's
// exact type is looked up first, then its family. Extensions are not keys:
// a document is chosen for by its MIME type.
type OperatorChoice map[string]string

// mimeKey is what an operator may name: type/subtype or type/*, lower case.
var mimeKey = regexp.MustCompile(`^[a-z0-9][a-z0-9!#$&^_.+-]*/([a-z0-9][a-z0-9!#$&^_.+-]*|\*)$`)

// pluginName is the manifest's rule for plugin names.
var pluginName = regexp.MustCompile(`^[a-z][a-z0-9-]{1,62}[a-z0-9]$`)

// ParseOperatorChoice reads the operator's choice from "MIME=PLUGIN"
// items; an item may hold several, comma-separated (as the environment
// variable AGENTHOST_EXTRACTORS does). MIME types are case-insensitive. A
// malformed item, or a type named twice for different plugins, is an error
// that names it.
func ParseOperatorChoice(items ...string) (OperatorChoice, error) {
	out := OperatorChoice{}
	for _, item := range items {
		for _, part := range strings.Split(item, ",") {
			part = strings.TrimSpace(part)
			if part == "" {
				continue
			}
			k, v, ok := strings.Cut(part, "=")
			if !ok {
				return nil, fmt.Errorf("extractor choice %q: want MIME=PLUGIN (e.g. application/pdf=pdf)", part)
			}
			k, v = strings.ToLower(strings.TrimSpace(k)), strings.TrimSpace(v)
			if !mimeKey.MatchString(k) {
				return nil, fmt.Errorf("extractor choice %q: %q is not a MIME type (type/subtype or type/*)", part, k)
			}
			if !pluginName.MatchString(v) {
				return nil, fmt.Errorf("extractor choice %q: %q is not a plugin name", part, v)
			}
			if old, ok := out[k]; ok && old != v {
				return nil, fmt.Errorf("extractor choice %q: %s is already given to %q", part, k, old)
			}
			out[k] = v
		}
	}
	return out, nil
}

// lookup returns the operator's plugin for a document's MIME type and the
// key it was found under.
func (c OperatorChoice) lookup(mime string) (plugin, key string, ok bool) {
	if mime == "" || len(c) == 0 {
		return "", "", false
	}
	if p, ok := c[mime]; ok {
		return p, mime, true
	}
	if t, _, found := strings.Cut(mime, "/"); found {
		if p, ok := c[t+"/*"]; ok {
			return p, t + "/*", true
		}
	}
	return "", "", false
}

// Candidate is an extractor plugin as the choice sees it: who it is and
// what its manifest declares.
type Candidate struct {
	Name    string
	Version string
	SHA256  string
	Builtin bool
	// MIMETypes are exact types and families ("text/*"), lower case.
	MIMETypes []string
	// Extensions start with a dot, lower case.
	Extensions []string
}

// candidateOf describes p, or reports that it is no extractor (no
// extractor section, or no extract tool).
func candidateOf(p *wasm.Plugin) (Candidate, bool) {
	m := p.Manifest()
	if m.Extractor == nil || !p.HasTool(Tool) {
		return Candidate{}, false
	}
	c := Candidate{Name: m.Name, Version: m.Version, SHA256: p.SHA256(), Builtin: p.Builtin()}
	for _, t := range m.Extractor.MIMETypes {
		c.MIMETypes = append(c.MIMETypes, strings.ToLower(strings.TrimSpace(t)))
	}
	for _, x := range m.Extractor.Extensions {
		c.Extensions = append(c.Extensions, strings.ToLower(strings.TrimSpace(x)))
	}
	return c, true
}

// Match levels: how specifically a candidate claims a document.
const (
	levelExact = iota
	levelFamily
	levelExtension
)

// claims reports how c claims a document of that MIME type and extension:
// its best level and what it declared that matched.
func (c Candidate) claims(mime, ext string) (level int, match string, ok bool) {
	family := ""
	for _, t := range c.MIMETypes {
		if mime == "" {
			break
		}
		if t == mime {
			return levelExact, t, true
		}
		if f, ok := strings.CutSuffix(t, "/*"); ok && strings.HasPrefix(mime, f+"/") && family == "" {
			family = t
		}
	}
	if family != "" {
		return levelFamily, family, true
	}
	if ext != "" && slices.Contains(c.Extensions, ext) {
		return levelExtension, ext, true
	}
	return 0, "", false
}

// declares reports whether c declares the operator's key: an exact type by
// itself or by its family, a family by itself.
func (c Candidate) declares(key string) bool {
	if slices.Contains(c.MIMETypes, key) {
		return true
	}
	if strings.HasSuffix(key, "/*") {
		return false
	}
	t, _, _ := strings.Cut(key, "/")
	return slices.Contains(c.MIMETypes, t+"/*")
}

// Choice is the extractor a document gets, and why.
type Choice struct {
	// Extractor is the chosen plugin (zero when By is ChosenNone).
	Extractor Candidate
	By        kindex.ChosenBy
	// Match is what decided it: the operator's key, or the MIME type,
	// family or extension the extractor declares.
	Match string
	// Competitors are the other plugins that claim the document, by name;
	// with none chosen, every plugin that does.
	Competitors []string
	// Reason says why none was chosen.
	Reason string
}

// OK reports whether an extractor was chosen.
func (c Choice) OK() bool { return c.By != kindex.ChosenNone && c.By != "" }

// Record is the choice as a file's index record keeps it.
func (c Choice) Record() kindex.ExtractorRecord {
	r := kindex.ExtractorRecord{ChosenBy: c.By, Match: c.Match, Competitors: c.Competitors, Reason: c.Reason}
	if c.OK() {
		r.Name, r.Version, r.Builtin = c.Extractor.Name, c.Extractor.Version, c.Extractor.Builtin
		r.SHA256 = c.Extractor.SHA256[:min(len(c.Extractor.SHA256), shaPrefix)]
	}
	return r
}

// shaPrefix is how many hex digits of a plugin's sha256 a record keeps:
// enough to tell two builds apart, as the host's own messages do.
const shaPrefix = 12

// normalizeMIME is a document's MIME type without parameters, lower case.
func normalizeMIME(mimeType string) string {
	m, _, _ := strings.Cut(mimeType, ";")
	return strings.ToLower(strings.TrimSpace(m))
}

// Choose picks a document's extractor among cands by the rules above (see
// the top of this file). It depends only on its arguments: the order of
// cands does not matter.
func Choose(cands []Candidate, operator OperatorChoice, name, mimeType string) Choice {
	mime := normalizeMIME(mimeType)
	ext := strings.ToLower(path.Ext(name))
	type claim struct {
		c     Candidate
		level int
		match string
	}
	var claims []claim
	for _, c := range cands {
		if level, match, ok := c.claims(mime, ext); ok {
			claims = append(claims, claim{c, level, match})
		}
	}
	// Deterministic whatever the caller's order: built-ins first, then by
	// level and name.
	sort.Slice(claims, func(i, j int) bool {
		a, b := claims[i], claims[j]
		if a.c.Builtin != b.c.Builtin {
			return a.c.Builtin
		}
		if a.level != b.level {
			return a.level < b.level
		}
		return a.c.Name < b.c.Name
	})
	others := func(chosen string) []string {
		var out []string
		for _, cl := range claims {
			if cl.c.Name != chosen {
				out = append(out, cl.c.Name)
			}
		}
		slices.Sort(out)
		return slices.Compact(out)
	}
	what := describe(mime, ext, name)

	if op, key, ok := operator.lookup(mime); ok {
		for _, c := range cands {
			if c.Name != op {
				continue
			}
			if !c.declares(key) {
				return Choice{By: kindex.ChosenNone, Match: key, Competitors: others(""),
					Reason: fmt.Sprintf("the operator chose %q for %s, which it does not declare", op, key)}
			}
			return Choice{Extractor: c, By: kindex.ChosenOperator, Match: key, Competitors: others(c.Name)}
		}
		return Choice{By: kindex.ChosenNone, Match: key, Competitors: others(""),
			Reason: fmt.Sprintf("the operator chose %q for %s, which is not a loaded extractor", op, key)}
	}
	if len(claims) == 0 {
		return Choice{By: kindex.ChosenNone, Reason: "no extractor plugin declares " + what}
	}
	if first := claims[0]; first.c.Builtin {
		return Choice{Extractor: first.c, By: kindex.ChosenBuiltin, Match: first.match, Competitors: others(first.c.Name)}
	}
	if all := others(""); len(all) > 1 {
		return Choice{By: kindex.ChosenNone, Competitors: all,
			Reason: fmt.Sprintf("third-party plugins %s all claim %s, no built-in serves it and the operator chose none (serve -extractor MIME=PLUGIN)",
				strings.Join(all, ", "), what)}
	}
	return Choice{Extractor: claims[0].c, By: kindex.ChosenSole, Match: claims[0].match}
}

// describe names a document's type for messages.
func describe(mime, ext, name string) string {
	switch {
	case mime != "" && ext != "":
		return mime + " or " + ext
	case mime != "":
		return mime
	case ext != "":
		return ext
	}
	return fmt.Sprintf("%q (no MIME type, no extension)", name)
}
