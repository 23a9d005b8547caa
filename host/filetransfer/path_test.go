package filetransfer

import (
	"errors"
	"testing"
)

func TestRelPath(t *testing.T) {
	for _, tc := range []struct {
		in, want string
		bad      bool
	}{
		{"", "", false},
		{"/", "", false},
		{"docs", "docs", false},
		{"/docs/a.txt", "docs/a.txt", false},
		{"docs//a.txt/", "docs/a.txt", false},
		{"./docs/./a.txt", "docs/a.txt", false},
		{"..", "", true},
		{"../x", "", true},
		{"docs/../../x", "", true},
		{"docs/..", "", true},
		{"/../etc/passwd", "", true},
		{`docs\..\x`, "", true},
		{"a\r\nDELE b", "", true},
		{"a\x00b", "", true},
		{"..a/b..", "..a/b..", false},
	} {
		got, err := relPath(tc.in)
		if tc.bad != (err != nil) || got != tc.want || (err != nil && !errors.Is(err, ErrInvalidPath)) {
			t.Errorf("relPath(%q) = %q, %v", tc.in, got, err)
		}
	}
}

func TestWithin(t *testing.T) {
	for _, tc := range []struct {
		base, p string
		want    bool
	}{
		{"/srv/files", "/srv/files", true},
		{"/srv/files", "/srv/files/a", true},
		{"/srv/files", "/srv/files-other/a", false},
		{"/srv/files", "/srv", false},
		{"/", "/etc", true},
	} {
		if got := within(tc.base, tc.p); got != tc.want {
			t.Errorf("within(%q, %q) = %v", tc.base, tc.p, got)
		}
	}
}
