package extract

import (
	"encoding/xml"
	"slices"
	"strconv"
	"strings"
)

// Bounds on what a chart contributes: its text is for finding and quoting,
// not a copy of the data behind it.
const (
	chartMaxSeries = 50
	chartMaxPoints = 200
)

// chartText renders a DrawingML chart part (c:chartSpace) as text: its
// titles, then each series with its name and points ("Q1 = 10; Q2 = 12"),
// from the values cached in the chart. "" when the part has no text.
func chartText(p *pkg, part string) string {
	d, c, err := p.decoder(part)
	if err != nil {
		return ""
	}
	defer c.Close()
	type series struct {
		name       string
		cats, vals []string
	}
	var (
		stack  []string
		titles []string
		title  strings.Builder
		cur    *series
		all    []series
	)
	in := func(name string) bool { return slices.Contains(stack, name) }
	for {
		t, err := d.RawToken()
		if err != nil {
			break
		}
		switch e := t.(type) {
		case xml.StartElement:
			if len(stack) > maxDepth {
				return ""
			}
			stack = append(stack, e.Name.Local)
			if e.Name.Local == "ser" {
				cur = &series{}
			}
		case xml.EndElement:
			if len(stack) == 0 {
				break
			}
			stack = stack[:len(stack)-1]
			switch e.Name.Local {
			case "ser":
				if cur != nil && len(all) < chartMaxSeries {
					all = append(all, *cur)
				}
				cur = nil
			case "title":
				if s := strings.TrimSpace(title.String()); s != "" {
					titles = append(titles, s)
				}
				title.Reset()
			case "p":
				if in("title") && title.Len() > 0 {
					title.WriteByte(' ')
				}
			}
		case xml.CharData:
			if len(stack) == 0 {
				continue
			}
			top := stack[len(stack)-1]
			switch {
			case in("title") && top == "t":
				title.Write(e)
			case cur != nil && top == "v" && in("tx"):
				cur.name += string(e)
			case cur != nil && top == "v" && (in("cat") || in("xVal")):
				if len(cur.cats) < chartMaxPoints {
					cur.cats = append(cur.cats, string(e))
				}
			case cur != nil && top == "v" && (in("val") || in("yVal")):
				if len(cur.vals) < chartMaxPoints {
					cur.vals = append(cur.vals, string(e))
				}
			}
		}
	}
	var b strings.Builder
	if len(titles) > 0 {
		b.WriteString("Chart: " + strings.Join(titles, " / "))
	}
	for i, s := range all {
		if b.Len() > 0 {
			b.WriteByte('\n')
		}
		name := strings.TrimSpace(s.name)
		if name == "" {
			name = "Series " + strconv.Itoa(i+1)
		}
		b.WriteString(name + ":")
		for j, v := range s.vals {
			if j > 0 {
				b.WriteByte(';')
			}
			b.WriteByte(' ')
			if j < len(s.cats) {
				b.WriteString(chartNumber(s.cats[j]) + " = ")
			}
			b.WriteString(chartNumber(v))
		}
	}
	return b.String()
}

// diagramText renders a SmartArt data part (dgm:dataModel) as one line per
// point that has text, in document order.
func diagramText(p *pkg, part string) string {
	d, c, err := p.decoder(part)
	if err != nil {
		return ""
	}
	defer c.Close()
	var (
		lines []string
		cur   strings.Builder
		depth int // inside a dgm:pt
		inT   bool
	)
	for {
		t, err := d.RawToken()
		if err != nil {
			break
		}
		switch e := t.(type) {
		case xml.StartElement:
			switch e.Name.Local {
			case "pt":
				depth++
			case "t":
				inT = depth > 0
			case "p":
				if cur.Len() > 0 {
					cur.WriteByte(' ')
				}
			}
		case xml.EndElement:
			switch e.Name.Local {
			case "pt":
				depth = max(0, depth-1)
				if s := strings.Join(strings.Fields(cur.String()), " "); s != "" && depth == 0 {
					lines = append(lines, s)
					cur.Reset()
				}
			case "t":
				inT = false
			}
		case xml.CharData:
			if inT {
				cur.Write(e)
			}
		}
	}
	return strings.Join(lines, "\n")
}

// chartNumber prints a cached chart value as Excel shows it (15
// significant digits: 2.3, not 2.2999999999999998); text stays as it is.
func chartNumber(v string) string {
	f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
	if err != nil {
		return v
	}
	return formatNumber(f)
}
