package extract

import (
	"strconv"
	"strings"
)

// outline numbers headings as they come ("1", "1.1", "1.2", "2"), the
// section IDs of DOCX, Markdown and HTML. Skipped levels do not show up as
// zeros: a level-3 heading right under a level-1 heading is "1.1".
type outline struct {
	stack    []outlineEntry // open headings, outermost first
	top      int            // count of top-level headings
	sections []map[string]any
	max      int // bound on the sections listed in the structure
}

type outlineEntry struct {
	level    int
	id       string
	children int
}

// heading opens a section for a heading of the level (1 = highest) and
// returns its ID. where says where it starts (e.g. paragraph or line).
func (o *outline) heading(level int, title string, where map[string]any) string {
	for len(o.stack) > 0 && o.stack[len(o.stack)-1].level >= level {
		o.stack = o.stack[:len(o.stack)-1]
	}
	var id string
	if len(o.stack) == 0 {
		o.top++
		id = strconv.Itoa(o.top)
	} else {
		parent := &o.stack[len(o.stack)-1]
		parent.children++
		id = parent.id + "." + strconv.Itoa(parent.children)
	}
	o.stack = append(o.stack, outlineEntry{level: level, id: id})
	if o.max == 0 || len(o.sections) < o.max {
		s := map[string]any{"id": id, "title": title, "level": level}
		for k, v := range where {
			s[k] = v
		}
		o.sections = append(o.sections, s)
	}
	return id
}

// current is the ID of the innermost open section, "" before the first
// heading.
func (o *outline) current() string {
	if len(o.stack) == 0 {
		return ""
	}
	return o.stack[len(o.stack)-1].id
}

// headingText cleans a heading for use as a label: one line, no runs of
// spaces, bounded.
func headingText(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	return cutUTF8(s, 200)
}
