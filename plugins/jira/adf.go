package main

import (
	"encoding/json"
	"strconv"
	"strings"
)

// adfNode is a node of the Atlassian Document Format, the rich text of
// Jira Cloud's REST v3 (descriptions, comments): a type, its attributes,
// children, and text with marks.
type adfNode struct {
	Type    string         `json:"type"`
	Text    string         `json:"text,omitempty"`
	Attrs   map[string]any `json:"attrs,omitempty"`
	Content []adfNode      `json:"content,omitempty"`
	Marks   []adfMark      `json:"marks,omitempty"`
	Version int            `json:"version,omitempty"`
}

type adfMark struct {
	Type  string         `json:"type"`
	Attrs map[string]any `json:"attrs,omitempty"`
}

// richText reads a rich-text field: ADF (v3) as Markdown-like text that
// keeps its structure, a plain string (v2, Data Center: wiki markup or
// plain text) as it is.
func richText(raw json.RawMessage) string {
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var doc adfNode
	if json.Unmarshal(raw, &doc) != nil {
		return ""
	}
	var b strings.Builder
	blocks(&b, doc.Content, "")
	return strings.TrimSpace(b.String())
}

func attr(n adfNode, k string) string {
	switch v := n.Attrs[k].(type) {
	case string:
		return v
	case float64:
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	return ""
}

// blocks writes block nodes, each line after prefix (a quote's "> ").
func blocks(b *strings.Builder, nodes []adfNode, prefix string) {
	for _, n := range nodes {
		switch n.Type {
		case "paragraph":
			b.WriteString(prefix + inline(n.Content) + "\n\n")
		case "heading":
			level, _ := strconv.Atoi(attr(n, "level"))
			level = min(max(level, 1), 6)
			b.WriteString(prefix + strings.Repeat("#", level) + " " + inline(n.Content) + "\n\n")
		case "bulletList", "orderedList":
			list(b, n, prefix, "")
			b.WriteString("\n")
		case "codeBlock":
			b.WriteString(prefix + "```" + attr(n, "language") + "\n")
			for _, line := range strings.Split(inline(n.Content), "\n") {
				b.WriteString(prefix + line + "\n")
			}
			b.WriteString(prefix + "```\n\n")
		case "blockquote":
			blocks(b, n.Content, prefix+"> ")
		case "panel", "expand", "nestedExpand", "layoutSection", "layoutColumn":
			if t := attr(n, "title"); t != "" {
				b.WriteString(prefix + "**" + t + "**\n\n")
			}
			blocks(b, n.Content, prefix)
		case "rule":
			b.WriteString(prefix + "---\n\n")
		case "table":
			table(b, n, prefix)
		case "mediaSingle", "mediaGroup":
			for _, m := range n.Content {
				name := attr(m, "alt")
				if name == "" {
					name = attr(m, "id")
				}
				b.WriteString(prefix + "[attachment: " + name + "]\n\n")
			}
		default:
			if len(n.Content) > 0 {
				blocks(b, n.Content, prefix)
			} else if s := inline([]adfNode{n}); s != "" {
				b.WriteString(prefix + s + "\n\n")
			}
		}
	}
}

// list writes a list's items, nested lists indented.
func list(b *strings.Builder, n adfNode, prefix, indent string) {
	start, _ := strconv.Atoi(attr(n, "order"))
	if start == 0 {
		start = 1
	}
	for i, item := range n.Content {
		marker := "- "
		if n.Type == "orderedList" {
			marker = strconv.Itoa(start+i) + ". "
		}
		first := true
		for _, c := range item.Content {
			switch c.Type {
			case "bulletList", "orderedList":
				list(b, c, prefix, indent+"  ")
			default:
				var sub strings.Builder
				blocks(&sub, []adfNode{c}, "")
				text := strings.TrimSpace(sub.String())
				lead := indent + marker
				if !first {
					lead = indent + strings.Repeat(" ", len(marker))
				}
				b.WriteString(prefix + lead + strings.ReplaceAll(text, "\n", "\n"+prefix+indent+strings.Repeat(" ", len(marker))) + "\n")
				first = false
			}
		}
	}
}

// table writes a table as Markdown rows, the first row's header cells as
// the header.
func table(b *strings.Builder, n adfNode, prefix string) {
	for r, row := range n.Content {
		cells := make([]string, 0, len(row.Content))
		for _, cell := range row.Content {
			var sub strings.Builder
			blocks(&sub, cell.Content, "")
			cells = append(cells, strings.ReplaceAll(strings.Join(strings.Fields(strings.ReplaceAll(sub.String(), "|", `\|`)), " "), "\n", " "))
		}
		b.WriteString(prefix + "| " + strings.Join(cells, " | ") + " |\n")
		if r == 0 {
			b.WriteString(prefix + "|" + strings.Repeat(" --- |", len(cells)) + "\n")
		}
	}
	b.WriteString("\n")
}

// inline writes inline nodes: text with its marks, mentions as @name,
// links as [text](href), cards as their URL, line breaks.
func inline(nodes []adfNode) string {
	var b strings.Builder
	for _, n := range nodes {
		switch n.Type {
		case "text":
			t := n.Text
			for _, m := range n.Marks {
				switch m.Type {
				case "code":
					t = "`" + t + "`"
				case "strong":
					t = "**" + t + "**"
				case "em":
					t = "*" + t + "*"
				case "strike":
					t = "~~" + t + "~~"
				}
			}
			for _, m := range n.Marks {
				if href, _ := m.Attrs["href"].(string); m.Type == "link" && href != "" {
					t = "[" + t + "](" + href + ")"
				}
			}
			b.WriteString(t)
		case "hardBreak":
			b.WriteString("\n")
		case "mention":
			name := strings.TrimPrefix(attr(n, "text"), "@")
			if name == "" {
				name = attr(n, "id")
			}
			b.WriteString("@" + name)
		case "emoji":
			if t := attr(n, "text"); t != "" {
				b.WriteString(t)
			} else {
				b.WriteString(attr(n, "shortName"))
			}
		case "inlineCard", "blockCard", "embedCard":
			b.WriteString(attr(n, "url"))
		case "status":
			b.WriteString("[" + attr(n, "text") + "]")
		case "date":
			b.WriteString(attr(n, "timestamp"))
		default:
			b.WriteString(inline(n.Content))
		}
	}
	return b.String()
}

// adfDoc writes plain text as an ADF document (v3 takes rich text only as
// ADF): a paragraph per blank-line-separated block, line breaks kept.
func adfDoc(text string) adfNode {
	doc := adfNode{Type: "doc", Version: 1, Content: []adfNode{}}
	for _, para := range strings.Split(strings.ReplaceAll(text, "\r\n", "\n"), "\n\n") {
		if strings.TrimSpace(para) == "" {
			continue
		}
		p := adfNode{Type: "paragraph"}
		for i, line := range strings.Split(para, "\n") {
			if i > 0 {
				p.Content = append(p.Content, adfNode{Type: "hardBreak"})
			}
			if line != "" {
				p.Content = append(p.Content, adfNode{Type: "text", Text: line})
			}
		}
		doc.Content = append(doc.Content, p)
	}
	return doc
}
