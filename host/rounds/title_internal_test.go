package rounds

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// TestCleanTitle: what models answer when asked for a title, made plain.
func TestCleanTitle(t *testing.T) {
	long := strings.Repeat("Reisekosten ", 12)
	for _, c := range []struct{ in, want string }{
		{"Travel rules of the 2027 budget", "Travel rules of the 2027 budget"},
		{"Title: \"Travel rules.\"", "Travel rules"},
		{"**Reiseregeln 2027**\n\nThis title captures…", "Reiseregeln 2027"},
		{"\n\n  # «Budget de voyage»  \n", "Budget de voyage"},
		{"„Reisekosten im Überblick“", "Reisekosten im Überblick"},
		{"旅費規程のまとめ。", "旅費規程のまとめ"},
		{"Budget\u202e evil\u0007 name", "Budget evil name"},
		{"Titles: many", "Titles: many"},
		{"   ", ""},
		{"\"\"", ""},
	} {
		if got := cleanTitle(c.in); got != c.want {
			t.Errorf("cleanTitle(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	got := cleanTitle(long)
	if n := utf8.RuneCountInString(got); n > titleMaxRunes+1 || !strings.HasSuffix(got, "Reisekosten…") {
		t.Errorf("a long title: %q (%d runes)", got, n)
	}
}
