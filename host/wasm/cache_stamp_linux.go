//go:build linux

package wasm

import (
	"fmt"
	"io/fs"
	"syscall"
)

// fileStamp identifies a file's current content without reading it: any
// write, truncation, rename over it or change of mode moves its ctime.
func fileStamp(info fs.FileInfo) string {
	st, ok := info.Sys().(*syscall.Stat_t)
	if !ok {
		return ""
	}
	return fmt.Sprintf("%d:%d:%d:%d.%d:%d.%d", st.Dev, st.Ino, st.Size, st.Mtim.Sec, st.Mtim.Nsec, st.Ctim.Sec, st.Ctim.Nsec)
}
