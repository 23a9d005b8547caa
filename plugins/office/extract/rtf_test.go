package extract

import (
	"strings"
	"testing"

	"github.com/agenthost/agenthost/internal/testcorpus"
)

// TestRTFSupplementaryCharacters: characters outside the Basic
// Multilingual Plane, which RTF can only write as a UTF-16 surrogate pair
// of \uN words, come out as the one real code point. LibreOffice writes
// the pair as positive numbers (\uc0\u55357\uc1\u56832\'3f, the real file
// lo-astral.rtf); Word writes N as a signed 16-bit number (RTF 1.9.1
// specification, "\uN": "N represents a signed 16-bit integer", so
// U+D83D is \u-10179).
func TestRTFSupplementaryCharacters(t *testing.T) {
	_, objs := mustRun(t, testcorpus.Read(t, "office", "rtf", "lo-astral.rtf"), "lo-astral.rtf", "", Limits{})
	got := strings.Join(texts(objs), "\n")
	for _, want := range []string{
		"Emoji: 😀 grinning, 🏔 snow-capped mountain.",
		"Mathematical Fraktur 𝔄𝔩𝔭𝔢𝔫 and the CJK Extension B character 𠀋.",
		"Plain Zürich and € stay in the code page.",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("lo-astral.rtf: no %q in\n%s", want, got)
		}
	}
	for _, c := range []struct{ name, body, want string }{
		{"word's signed pair", `\uc1\u-10179\'3f\u-8704\'3f done`, "😀 done"},
		{"signed pair, fallback of two", `\uc2\u-10179??\u-8704?? done`, "😀 done"},
		{"a BMP character with a negative N", `\u-3913? x`, "\uF0B7 x"},
		{"a lone high surrogate is a replacement character", `\u-10179? x`, "\uFFFD x"},
		{"a lone low surrogate too", `a \u-8704? b`, "a \uFFFD b"},
		{"high then another high", `\u-10179?\u-10179?\u-8704?`, "\uFFFD😀"},
		{"below the 16-bit range", `\u-99999? x`, "\uFFFD x"},
		// Not the specification's, but unambiguous: a writer that
		// puts the code point itself.
		{"a code point beyond 16 bits", `\u128512? x`, "😀 x"},
		{"beyond Unicode", `\u1114112? x`, "\uFFFD x"},
		{"a half in a skipped group stays there", `a{\*\fldinst \u-10179?} b`, "a b"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, objs := mustRun(t, []byte(`{\rtf1\ansi `+c.body+`\par}`), "x.rtf", "", Limits{})
			if got := texts(objs); len(got) != 1 || got[0] != c.want {
				t.Errorf("got %q, want %q", got, c.want)
			}
		})
	}
}
