package rounds

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

func TestParseEntities(t *testing.T) {
	cases := []struct {
		name, reply, want string
		err               bool
	}{
		{"plain object", `{"company": "Acme AG", "revenueQ4": "12.5M CHF"}`, "company=Acme AG;revenueQ4=12.5M CHF", false},
		{"in a code fence with words", "Here you go:\n```json\n{\"b\": 2.5, \"a\": true}\n```\nDone.", "a=true;b=2.5", false},
		{"nested, null and empty values skipped", `{"x": {"y": 1}, "l": [1], "n": null, "e": " ", "k": "v"}`, "k=v", false},
		{"empty key skipped", `{" ": "v", "k": "w"}`, "k=w", false},
		{"nothing worth keeping", `{}`, "", false},
		{"no object", "The company is Acme.", "", true},
		{"broken JSON", `{"company": "Acme"`, "", true},
		{"not an object", `["a", "b"]`, "", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := parseEntities(c.reply)
			if (err != nil) != c.err {
				t.Fatalf("err %v, want error %v", err, c.err)
			}
			var parts []string
			for _, f := range got {
				parts = append(parts, f[0]+"="+f[1])
			}
			if s := strings.Join(parts, ";"); s != c.want {
				t.Fatalf("got %q, want %q", s, c.want)
			}
		})
	}
	if _, err := parseEntities("no braces"); !errors.Is(err, errNoObject) {
		t.Fatalf("error %v", err)
	}
	// Bounds: at most maxEntities facts, values cut.
	var b strings.Builder
	b.WriteString("{")
	for i := range 50 {
		fmt.Fprintf(&b, "%q: %q,", fmt.Sprintf("k%02d", i), strings.Repeat("v", 800))
	}
	b.WriteString(`"z": "last"}`)
	got, err := parseEntities(b.String())
	if err != nil || len(got) != maxEntities || len(got[0][1]) > maxEntityValueBytes+60 || !strings.Contains(got[0][1], "truncated") {
		t.Fatalf("bounds: %d facts, first %d bytes, %v", len(got), len(got[0][1]), err)
	}
}
