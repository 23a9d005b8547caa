package filetransfer

import (
	"fmt"
	"path"
	"strings"
)

// relPath checks a plugin's path and returns it clean and relative to the
// base directory ("" is the base). A leading "/" means the base, as in a
// chroot; ".." is refused outright rather than resolved, so that no
// spelling reaches above the base; so are control characters (an FTP
// command injection) and backslashes (a separator on Windows servers).
func relPath(p string) (string, error) {
	for _, r := range p {
		if r < 0x20 || r == 0x7f || r == '\\' {
			return "", fmt.Errorf("%w: %q holds a control character or a backslash", ErrInvalidPath, p)
		}
	}
	for _, part := range strings.Split(p, "/") {
		if part == ".." {
			return "", fmt.Errorf("%w: %q climbs with \"..\"; paths are relative to the connection's base directory", ErrInvalidPath, p)
		}
	}
	c := path.Clean("/" + p)
	return strings.TrimPrefix(c, "/"), nil
}

// remote is rel's absolute path on the server.
func remote(base, rel string) string { return path.Join(base, rel) }

// within reports whether the absolute remote path p is base or under it.
func within(base, p string) bool {
	return p == base || base == "/" || strings.HasPrefix(p, base+"/")
}

// relTo is p (under base) relative to base.
func relTo(base, p string) string {
	if p == base {
		return ""
	}
	if base == "/" {
		return strings.TrimPrefix(p, "/")
	}
	return strings.TrimPrefix(p, base+"/")
}

// baseDir is a connection URL's path as the base directory: absolute,
// clean, "/" when none.
func baseDir(urlPath string) string { return path.Clean("/" + urlPath) }
