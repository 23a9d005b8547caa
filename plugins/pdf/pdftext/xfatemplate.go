package pdftext

import (
	"encoding/xml"
	"slices"
	"strings"
)

// The XFA template: which field binds each data element, and what the
// reader sees of it. A named subform is a level of the data, an unnamed
// one (or one bound to nothing) is not; a <bind match="dataRef"
// ref="..."/> puts a subform or field elsewhere in the data. The buttons
// of an exclusion group bind to the group's one data element, each with
// the value it stands for.

// xfaNode is what the template says of a field or an exclusion group.
type xfaNode struct {
	caption, toolTip, speak string
	ui                      string     // the ui's widget: textEdit, choiceList, checkButton, ...
	items                   [][]string // the item lists (a choice's texts, a button's on/off values)
	save                    int        // index in items of the saved values, -1 when one list
	options                 []xfaOption
	group                   bool
}

// xfaOption is a button of an exclusion group: the data value that picks
// it and its caption.
type xfaOption struct {
	on, caption, name string
}

// xfaTemplate indexes the template's fields by the data path they bind.
type xfaTemplate struct {
	byPath map[string]*xfaNode
	byKey  map[string][]xfaEntry
}

type xfaEntry struct {
	path string
	node *xfaNode
}

// xfaContainer is an open subform, field or exclusion group.
type xfaContainer struct {
	tag, name string
	scope     string // the data path it binds (its children bind under it)
	unbound   bool   // bind match="none": binds no data
	node      *xfaNode
	depth     int // element depth of its start tag
}

// isContainer tells the template elements that hold fields. Only named
// subforms, fields and exclusion groups are levels of the data.
func isContainer(tag string) bool {
	switch tag {
	case "subform", "subformSet", "area", "pageSet", "pageArea", "exclGroup", "field":
		return true
	}
	return false
}

// isInlineHTML tells the rich text elements that may stand inside a word
// ("Ye<span>s</span>"): they separate no words.
func isInlineHTML(tag string) bool {
	switch tag {
	case "span", "b", "i", "u", "sub", "sup", "a", "em", "strong", "font":
		return true
	}
	return false
}

// readXFATemplate reads the template packet (or the whole XDP); record is
// the name of the data's record (the first element under xfa:data), which
// $record in a bind reference names.
func readXFATemplate(b []byte, record string) *xfaTemplate {
	t := &xfaTemplate{byPath: map[string]*xfaNode{}, byKey: map[string][]xfaEntry{}}
	if len(b) == 0 {
		return t
	}
	dec := newXFADecoder(b)
	var (
		stack      []*xfaContainer
		names      []string // the open elements' names
		inTemplate bool
		tmplDepth  int
		skip       int // depth of a proto (prototypes are not fields of the form), 0 for none
		capture    *strings.Builder
		capDepth   int
		capInto    *string
		items      []string
		itemsDepth int // depth of the open items element, 0 for none
		item       strings.Builder
	)
	top := func() *xfaContainer {
		if len(stack) == 0 {
			return nil
		}
		return stack[len(stack)-1]
	}
	for len(t.byPath) < maxFormFields {
		tok, err := dec.Token()
		if err != nil {
			break // EOF, or what was read before the error
		}
		switch e := tok.(type) {
		case xml.StartElement:
			if len(names) >= maxXFADepth {
				return t
			}
			names = append(names, e.Name.Local)
			depth, name := len(names), e.Name.Local
			switch {
			case !inTemplate:
				// In a whole XDP the template is one packet among others.
				if name == "template" {
					inTemplate, tmplDepth = true, depth
				}
				continue
			case skip > 0:
				continue
			case capture != nil:
				if !isInlineHTML(name) {
					capture.WriteByte(' ') // words of a caption's paragraphs
				}
				continue
			case itemsDepth > 0:
				if depth == itemsDepth+1 {
					item.Reset()
				}
				continue
			case name == "proto":
				skip = depth
				continue
			case isContainer(name):
				stack = append(stack, newXFAContainer(e, top(), depth))
				continue
			}
			c := top()
			if c == nil {
				continue
			}
			own := depth == c.depth+1 // a property of the container itself
			switch {
			case own && name == "bind":
				parent := ""
				if len(stack) > 1 {
					parent = stack[len(stack)-2].scope
				}
				switch attr(e, "match") {
				case "none":
					c.unbound = true
					c.scope = parent // its children bind as if it were not there
				case "dataRef":
					if s, ok := resolveXFARef(attr(e, "ref"), parent, record); ok {
						c.scope = s
					}
				}
			case c.node == nil:
			case own && name == "caption":
				capture, capDepth, capInto = &strings.Builder{}, depth, &c.node.caption
			case own && name == "items":
				items, itemsDepth = nil, depth
				if attr(e, "save") == "1" {
					c.node.save = len(c.node.items)
				}
			case own && name == "ui":
				c.node.ui = "?" // its first element names the widget
			case depth == c.depth+2 && names[depth-2] == "ui" && c.node.ui == "?":
				c.node.ui = name
			case depth == c.depth+2 && names[depth-2] == "assist" && name == "toolTip":
				capture, capDepth, capInto = &strings.Builder{}, depth, &c.node.toolTip
			case depth == c.depth+2 && names[depth-2] == "assist" && name == "speak":
				capture, capDepth, capInto = &strings.Builder{}, depth, &c.node.speak
			}
		case xml.CharData:
			if capture != nil {
				writeBounded(capture, e)
			}
			if itemsDepth > 0 && len(names) == itemsDepth+1 {
				writeBounded(&item, e)
			}
		case xml.EndElement:
			depth := len(names)
			if depth == 0 {
				continue
			}
			if inTemplate && skip == 0 {
				switch {
				case capture != nil:
					if depth == capDepth {
						*capInto = cleanCaption(capture.String())
						capture = nil
					}
				case itemsDepth > 0 && depth == itemsDepth+1:
					items = append(items, strings.TrimSpace(item.String()))
				case itemsDepth > 0 && depth == itemsDepth:
					if c := top(); c != nil && c.node != nil {
						c.node.items = append(c.node.items, items)
					}
					itemsDepth = 0
				default:
					if c := top(); c != nil && c.depth == depth {
						stack = stack[:len(stack)-1]
						t.close(c, top())
					}
				}
			}
			if skip == depth {
				skip = 0
			}
			if inTemplate && depth == tmplDepth {
				inTemplate = false
			}
			names = names[:depth-1]
		}
	}
	return t
}

// newXFAContainer opens a subform, field or group: a named subform, field
// or group is a level of the data under its parent's, other containers
// bind their children where their parent does.
func newXFAContainer(e xml.StartElement, parent *xfaContainer, depth int) *xfaContainer {
	c := &xfaContainer{tag: e.Name.Local, name: attr(e, "name"), depth: depth}
	if parent != nil {
		c.scope = parent.scope
	}
	switch c.tag {
	case "subform", "exclGroup", "field":
		if c.name != "" {
			c.scope = joinPath(c.scope, c.name)
		}
	}
	if c.tag == "field" || c.tag == "exclGroup" {
		c.node = &xfaNode{save: -1, group: c.tag == "exclGroup"}
	}
	return c
}

// close files a field or group that ends: a button of a group becomes
// one of the group's options, any other field an entry of the index.
func (t *xfaTemplate) close(c, parent *xfaContainer) {
	n := c.node
	if n == nil {
		return
	}
	if n.ui == "?" {
		n.ui = ""
	}
	if parent != nil && parent.node != nil && parent.node.group && c.tag == "field" {
		on := "1" // a button's on value unless its items say otherwise
		if l := n.list(); len(l) > 0 && l[0] != "" {
			on = l[0]
		}
		parent.node.options = append(parent.node.options, xfaOption{on: on, caption: n.caption, name: c.name})
		return
	}
	if c.unbound || c.scope == "" {
		return
	}
	if _, dup := t.byPath[c.scope]; dup {
		return // a repeated instance: the first says it
	}
	t.byPath[c.scope] = n
	k := xfaKey(c.scope)
	t.byKey[k] = append(t.byKey[k], xfaEntry{path: c.scope, node: n})
}

// find is the template field that binds the data at path: the one bound
// to that very path, else the field of that name whose path shares the
// longest tail with it (data bound globally or by a reference this
// reader does not follow).
func (t *xfaTemplate) find(path string) *xfaNode {
	if n := t.byPath[path]; n != nil {
		return n
	}
	var best *xfaNode
	bestN := 0
	want := strings.Split(path, "/")
	for _, e := range t.byKey[xfaKey(path)] {
		have := strings.Split(e.path, "/")
		k := 0
		for k < len(have) && k < len(want) && have[len(have)-1-k] == want[len(want)-1-k] {
			k++
		}
		if k > bestN {
			best, bestN = e.node, k
		}
	}
	return best
}

// list is the field's shown item list (not the saved values).
func (n *xfaNode) list() []string {
	for i, l := range n.items {
		if i != n.save {
			return l
		}
	}
	return nil
}

// display is the text the reader sees for a field's data values, and
// whether the field shows as filled (an unchecked box does not). A field
// the template does not describe shows its values as they are.
func (n *xfaNode) display(vals []string) (string, bool) {
	if len(vals) == 0 {
		return "", false
	}
	if n == nil {
		return strings.Join(vals, ", "), true
	}
	if n.group {
		for _, o := range n.options {
			if o.on == vals[0] {
				if o.caption != "" {
					return o.caption, true
				}
				return o.name, true
			}
		}
		return vals[0], true
	}
	if n.ui == "checkButton" {
		on, off, neutral := "1", "0", "2"
		l := n.list()
		if len(l) > 0 {
			on = l[0]
		}
		if len(l) > 1 {
			off = l[1]
		}
		if len(l) > 2 {
			neutral = l[2]
		}
		switch vals[0] {
		case on:
			return "Yes", true
		case off, neutral:
			return "", false
		}
		return vals[0], true
	}
	// A choice that saves other values than it shows: show them.
	if len(n.items) == 2 {
		save := n.save
		if save < 0 {
			save = 1 // two lists, none marked: the second is saved
		}
		shown, saved := n.items[1-save], n.items[save]
		out := make([]string, len(vals))
		for i, v := range vals {
			out[i] = v
			if j := slices.Index(saved, v); j >= 0 && j < len(shown) && shown[j] != "" {
				out[i] = shown[j]
			}
		}
		vals = out
	}
	return strings.Join(vals, ", "), true
}

// label is the field's caption, else its tooltip or spoken text.
func (n *xfaNode) label() string {
	if n == nil {
		return ""
	}
	for _, l := range []string{n.caption, n.toolTip, n.speak} {
		if l != "" {
			return l
		}
	}
	return ""
}

// resolveXFARef is the data path of a bind reference: $record.a.b (from
// the record), $data.form1.a (from xfa:data), $.a or a.b (from the
// enclosing scope). References by search (..a) or to other datasets (!)
// are not followed.
func resolveXFARef(ref, scope, record string) (string, bool) {
	ref = strings.TrimSpace(ref)
	base := scope
	switch {
	case strings.HasPrefix(ref, "$record"):
		base, ref = record, ref[len("$record"):]
	case strings.HasPrefix(ref, "$data"):
		base, ref = "", ref[len("$data"):]
	case strings.HasPrefix(ref, "$."), ref == "$":
		ref = ref[1:]
	case strings.HasPrefix(ref, "$"), strings.HasPrefix(ref, "!"), strings.HasPrefix(ref, ".."):
		return "", false
	}
	ref = strings.TrimPrefix(ref, ".")
	if ref == "" {
		return base, base != ""
	}
	for _, p := range strings.Split(ref, ".") {
		if i := strings.IndexByte(p, '['); i >= 0 {
			p = p[:i]
		}
		if p == "" || strings.HasPrefix(p, "#") {
			return "", false
		}
		base = joinPath(base, p)
	}
	return base, true
}

func joinPath(a, b string) string {
	if a == "" {
		return b
	}
	return a + "/" + b
}

// cleanCaption is a caption as a label: its words, without a trailing
// colon or a leading required-field star.
func cleanCaption(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	s = strings.TrimRight(s, ": ")
	return strings.TrimSpace(strings.TrimLeft(s, "* "))
}

func attr(e xml.StartElement, name string) string {
	for _, a := range e.Attr {
		if a.Name.Local == name {
			return a.Value
		}
	}
	return ""
}
