package main

import "strings"

// luceneSpecial are the characters Jira's text search (Lucene query
// syntax) reads as operators; Atlassian's "Search syntax for text fields"
// says to escape each with two backslashes in advanced search (JQL),
// which is one backslash for the JQL string and one for Lucene.
const luceneSpecial = `+-&|!(){}[]^~*?\:"`

// jqlText quotes the user's text as a JQL string for text ~ "...", so that
// each character is searched for as itself: the text search's operator
// characters escaped for Lucene, then the whole escaped for a JQL string
// (backslash and double quote; line breaks and tabs as \n, \t; other
// control characters dropped, a JQL string cannot hold them).
func jqlText(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x20 || r == 0x7f:
			b.WriteByte(' ')
		case strings.ContainsRune(luceneSpecial, r):
			// Lucene's escape (a backslash) itself escaped for JQL, then the
			// character, escaped for JQL too when it is a quote or backslash.
			b.WriteString(`\\`)
			if r == '"' || r == '\\' {
				b.WriteByte('\\')
			}
			b.WriteRune(r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}
