package gen

import (
	"strings"
	"unicode"
)

// initialisms are the words Go writes in capitals.
var initialisms = map[string]string{
	"Id": "ID", "Url": "URL", "Api": "API", "Json": "JSON", "Html": "HTML", "Csrf": "CSRF",
	"Mime": "MIME", "Sha256": "SHA256", "Http": "HTTP", "Ui": "UI", "Chf": "CHF", "Csv": "CSV",
	"Mcp": "MCP", "Ids": "IDs", "Ai": "AI", "Uri": "URI", "Urls": "URLs", "Pdf": "PDF",
	// "ok" as the hand-written event types spell it (ToolResultData.OK).
	"Ok": "OK",
}

// words splits a name at separators and camel-case boundaries:
// "Last-Event-ID" → Last Event ID, "workspaceId" → workspace Id.
func words(name string) []string {
	var out []string
	for _, part := range strings.FieldsFunc(name, func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	}) {
		rs := []rune(part)
		start := 0
		for i := 1; i < len(rs); i++ {
			if unicode.IsUpper(rs[i]) && (unicode.IsLower(rs[i-1]) || unicode.IsDigit(rs[i-1])) {
				out = append(out, string(rs[start:i]))
				start = i
			}
		}
		out = append(out, string(rs[start:]))
	}
	return out
}

// exported is name as an exported Go identifier.
func exported(name string) string {
	var b strings.Builder
	for _, w := range words(name) {
		w = strings.ToUpper(w[:1]) + w[1:]
		if up, ok := initialisms[w]; ok {
			w = up
		}
		b.WriteString(w)
	}
	s := b.String()
	if s == "" || unicode.IsDigit(rune(s[0])) {
		s = "X" + s
	}
	return s
}

// local is name as an unexported Go identifier that is not a keyword.
func local(name string) string {
	ws := words(name)
	if len(ws) == 0 {
		return "x"
	}
	s := strings.ToLower(ws[0])
	for _, w := range ws[1:] {
		w = strings.ToUpper(w[:1]) + w[1:]
		if up, ok := initialisms[w]; ok {
			w = up
		}
		s += w
	}
	switch s {
	case "type", "func", "var", "range", "map", "go", "select", "case", "default", "package",
		"import", "return", "interface", "struct", "chan", "const", "continue", "break", "for",
		"if", "else", "switch", "defer", "goto", "fallthrough", "ctx", "c", "req", "resp", "err":
		s += "Arg"
	}
	return s
}

// singular names one item of a list property: runs → Run, toolCalls →
// ToolCall.
func singular(name string) string {
	switch {
	case strings.HasSuffix(name, "ies"):
		return strings.TrimSuffix(name, "ies") + "y"
	case strings.HasSuffix(name, "ss"):
		return name
	case strings.HasSuffix(name, "s"):
		return strings.TrimSuffix(name, "s")
	}
	return name + "Item"
}

// comment writes text as a Go doc comment of the given indentation,
// wrapped at about 100 columns.
func comment(b *strings.Builder, indent, text string) {
	text = strings.Join(strings.Fields(text), " ")
	if text == "" {
		return
	}
	line := indent + "//"
	for _, w := range strings.Fields(text) {
		if len(line)+1+len(w) > 100 && line != indent+"//" {
			b.WriteString(line + "\n")
			line = indent + "//"
		}
		line += " " + w
	}
	b.WriteString(line + "\n")
}
