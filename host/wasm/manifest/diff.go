package manifest

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/agenthost/agenthost/host/egress"
)

// Change is one difference between two versions of a plugin's manifest.
type Change struct {
	// What changed: "timeoutMs", "tool deleteAll", "capability http",
	// "host api.example.com", ...
	What string `json:"what"`
	// From and To are its values; "" is absent (added or removed).
	From string `json:"from,omitempty"`
	To   string `json:"to,omitempty"`
	// Widens: the new version may do more than the old one (a higher
	// limit, a tool, a capability, a host, write access).
	Widens bool `json:"widens"`
}

// String reads as the operator is shown it: "timeoutMs 1000 → 600000",
// "tool deleteAll added", "tool read: readOnly → writing".
func (c Change) String() string {
	switch {
	case c.From == "" && c.To == "":
		return c.What + " changed"
	case c.From == "":
		return c.What + " added"
	case c.To == "":
		return c.What + " removed"
	case strings.HasPrefix(c.What, "tool "):
		return c.What + ": " + c.From + " → " + c.To
	}
	return c.What + " " + c.From + " → " + c.To
}

// Widenings keeps the changes that widen.
func Widenings(changes []Change) []Change {
	var out []Change
	for _, c := range changes {
		if c.Widens {
			out = append(out, c)
		}
	}
	return out
}

// Compare lists what changes from old to new, in a stable order: the
// kind, the limits, the capabilities, the tools, the hosts (the http
// allow-list and a connector's), the paths asked for, a connector's
// provider, auth, services and scopes, an extractor's types. Limits are
// compared as given: a caller comparing what two versions run under passes
// manifests whose limits hold the effective values (0 takes the host's
// default, which Compare cannot know). It reads nothing else and changes
// neither manifest.
func Compare(old, new *Manifest) []Change {
	var out []Change
	add := func(what, from, to string, widens bool) {
		out = append(out, Change{What: what, From: from, To: to, Widens: widens})
	}
	if old.Kind != new.Kind {
		// Another kind is another contract with the host (a tool becoming a
		// connector gets users' connections): never a narrowing.
		add("kind", string(old.Kind), string(new.Kind), true)
	}
	limit := func(what string, from, to int64) {
		if from != to {
			add(what, fmt.Sprint(from), fmt.Sprint(to), to > from)
		}
	}
	limit("memoryMiB", int64(old.Limits.MemoryMiB), int64(new.Limits.MemoryMiB))
	limit("timeoutMs", int64(old.Limits.TimeoutMs), int64(new.Limits.TimeoutMs))
	limit("maxOutputBytes", old.Limits.MaxOutputBytes, new.Limits.MaxOutputBytes)
	limit("maxHttpResponseBytes", old.Limits.MaxHTTPResponseBytes, new.Limits.MaxHTTPResponseBytes)
	set(old.Capabilities, new.Capabilities, func(c string, added bool) { present("capability "+c, added, add) })
	out = append(out, compareTools(old, new)...)
	hosts(old.Limits.AllowedHosts, new.Limits.AllowedHosts, "host ", add)
	paths(old.Limits.AllowedPaths, new.Limits.AllowedPaths, add)
	oc, nc := old.Connector, new.Connector
	if oc == nil {
		oc = &Connector{}
	}
	if nc == nil {
		nc = &Connector{}
	}
	switch {
	case oc.Provider == nc.Provider:
	case oc.Provider == "":
		present("connector provider "+nc.Provider, true, add)
	case nc.Provider == "":
		present("connector provider "+oc.Provider, false, add)
	default:
		// Another provider's connections: other users' credentials.
		add("connector provider", oc.Provider, nc.Provider, true)
	}
	if oc.Auth != nc.Auth {
		// "" accepts a connection of any scheme.
		add("connector auth", oc.Auth, orAny(nc.Auth), nc.Auth == "" && oc.Auth != "")
	}
	hosts(oc.Hosts, nc.Hosts, "connector host ", add)
	set(oc.Services, nc.Services, func(s string, added bool) { present("connector service "+s, added, add) })
	set(oc.Scopes, nc.Scopes, func(s string, added bool) { present("connector scope "+s, added, add) })
	var oe, ne []string
	if old.Extractor != nil {
		oe = slices.Concat(old.Extractor.MIMETypes, old.Extractor.Extensions)
	}
	if new.Extractor != nil {
		ne = slices.Concat(new.Extractor.MIMETypes, new.Extractor.Extensions)
	}
	set(oe, ne, func(s string, added bool) { present("extractor type "+s, added, add) })
	return out
}

func orAny(s string) string {
	if s == "" {
		return "any"
	}
	return s
}

// present adds an entry that appeared (widening) or went away.
func present(what string, added bool, add func(what, from, to string, widens bool)) {
	if added {
		add(what, "", "present", true)
	} else {
		add(what, "present", "", false)
	}
}

// set calls f for each entry of new not in old (added) and of old not in
// new, sorted.
func set(old, new []string, f func(s string, added bool)) {
	for _, s := range sortedMinus(new, old) {
		f(s, true)
	}
	for _, s := range sortedMinus(old, new) {
		f(s, false)
	}
}

func sortedMinus(a, b []string) []string {
	var out []string
	for _, s := range a {
		if !slices.Contains(b, s) && !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	sort.Strings(out)
	return out
}

func compareTools(old, new *Manifest) []Change {
	var out []Change
	byName := func(ts []Tool) map[string]Tool {
		m := make(map[string]Tool, len(ts))
		for _, t := range ts {
			m[t.Name] = t
		}
		return m
	}
	om, nm := byName(old.Tools), byName(new.Tools)
	for _, name := range slices.Sorted(maps.Keys(nm)) {
		o, had := om[name]
		t := nm[name]
		switch {
		case !had:
			mode := "writing"
			if t.ReadOnly {
				mode = "readOnly"
			}
			out = append(out, Change{What: "tool " + name, To: mode, Widens: true})
		case o.ReadOnly && !t.ReadOnly:
			out = append(out, Change{What: "tool " + name, From: "readOnly", To: "writing", Widens: true})
		case !o.ReadOnly && t.ReadOnly:
			out = append(out, Change{What: "tool " + name, From: "writing", To: "readOnly"})
		}
	}
	for _, name := range slices.Sorted(maps.Keys(om)) {
		if _, ok := nm[name]; !ok {
			out = append(out, Change{What: "tool " + name, From: "present"})
		}
	}
	return out
}

// hosts compares allow-list entries: an entry of new that no entry of old
// covers widens ("api.example.com" is covered by "*.example.com", and
// "host:443" by "host"); one of old that went away narrows.
func hosts(old, new []string, prefix string, add func(what, from, to string, widens bool)) {
	for _, h := range sortedMinus(new, old) {
		add(prefix+h, "", "present", !covered(h, old))
	}
	for _, h := range sortedMinus(old, new) {
		add(prefix+h, "present", "", false)
	}
}

// covered reports whether every host and port entry e allows, one of
// entries allows too. Entries are compared as the egress allow-list reads
// them ("*.x" any subdomain of x, no port any port); one that does not
// parse is never covered.
func covered(e string, entries []string) bool {
	ne, err := egress.ParseHostEntry(e)
	if err != nil {
		return false
	}
	for _, o := range entries {
		oe, err := egress.ParseHostEntry(o)
		if err != nil || (oe.Port != "" && oe.Port != ne.Port) {
			continue
		}
		h, oh := ne.Host, oe.Host
		if oh == h {
			return true
		}
		// *.x covers a.x and *.a.x.
		if rest, isPattern := strings.CutPrefix(oh, "*."); isPattern && strings.HasSuffix(h, "."+rest) {
			return true
		}
	}
	return false
}

// paths compares the directories asked for: a new one widens, and so
// does one whose access goes from "ro:" to read-write.
func paths(old, new map[string]string, add func(what, from, to string, widens bool)) {
	for _, dir := range slices.Sorted(maps.Keys(new)) {
		nv := new[dir]
		ov, had := old[dir]
		switch {
		case !had:
			add("path "+dir, "", nv, true)
		case ov != nv:
			add("path "+dir, ov, nv, strings.HasPrefix(ov, "ro:") && !strings.HasPrefix(nv, "ro:"))
		}
	}
	for _, dir := range slices.Sorted(maps.Keys(old)) {
		if _, ok := new[dir]; !ok {
			add("path "+dir, old[dir], "", false)
		}
	}
}
