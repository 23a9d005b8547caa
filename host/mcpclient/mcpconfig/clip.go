package mcpconfig

import "unicode/utf8"

// clip cuts s to at most n bytes on a rune boundary, marking the cut, so a
// hostile configuration cannot fill an error message (mcpclient clips
// servers' answers the same way).
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}
