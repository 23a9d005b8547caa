package wasm

import (
	"errors"
	"io/fs"
	"os"
	"path"

	experimentalsys "github.com/tetratelabs/wazero/experimental/sys"
	"github.com/tetratelabs/wazero/experimental/sysfs"
	"github.com/tetratelabs/wazero/sys"
)

// A granted directory must stay a jail. wazero's directory mount lets a
// guest create a symbolic link with a relative target ("../../etc/x") and
// the host then follows it on open: a plugin with a writable mount could
// read /proc/self/environ or write the data directory. So mounts go
// through os.Root, which refuses any path that resolves outside the
// directory (symbolic links included):
//   - read-only mounts are os.Root's own file system;
//   - writable mounts keep wazero's directory file system for its writes,
//     but every path is first resolved through the os.Root, guests may not
//     create symbolic or hard links, and a link left in the directory that
//     leads out is refused.

// mountFS returns the file system a granted mount is served from.
func mountFS(m Mount, readOnly bool) (experimentalsys.FS, func(), error) {
	root, err := os.OpenRoot(m.HostPath)
	if err != nil {
		return nil, nil, err
	}
	closeRoot := func() { root.Close() }
	if readOnly {
		return &sysfs.AdaptFS{FS: root.FS()}, closeRoot, nil
	}
	return &jailFS{FS: sysfs.DirFS(m.HostPath), root: root}, closeRoot, nil
}

// jailFS is a writable directory mount confined by an os.Root.
type jailFS struct {
	experimentalsys.FS
	root *os.Root
}

// inside reports whether p, relative to the mount, resolves inside it: its
// parent directories do, and when p itself is a symbolic link, so does the
// link's target.
func (j *jailFS) inside(p string) bool {
	p = path.Clean("/" + p)[1:]
	if p == "" {
		return true
	}
	if dir := path.Dir(p); dir != "." {
		if _, err := j.root.Stat(dir); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return false
		} else if err != nil {
			// A missing parent: whatever is made there is made inside.
			return j.inside(dir)
		}
	}
	fi, err := j.root.Lstat(p)
	switch {
	case err == nil && fi.Mode()&fs.ModeSymlink != 0:
		_, err = j.root.Stat(p)
		return err == nil
	case err == nil, errors.Is(err, fs.ErrNotExist):
		return true
	}
	return false
}

func (j *jailFS) OpenFile(p string, flag experimentalsys.Oflag, perm fs.FileMode) (experimentalsys.File, experimentalsys.Errno) {
	if !j.inside(p) {
		return nil, experimentalsys.EPERM
	}
	return j.FS.OpenFile(p, flag, perm)
}

func (j *jailFS) Lstat(p string) (sys.Stat_t, experimentalsys.Errno) {
	if !j.inside(path.Dir(p)) {
		return sys.Stat_t{}, experimentalsys.EPERM
	}
	return j.FS.Lstat(p)
}

func (j *jailFS) Stat(p string) (sys.Stat_t, experimentalsys.Errno) {
	if !j.inside(p) {
		return sys.Stat_t{}, experimentalsys.EPERM
	}
	return j.FS.Stat(p)
}

func (j *jailFS) Mkdir(p string, perm fs.FileMode) experimentalsys.Errno {
	if !j.inside(p) {
		return experimentalsys.EPERM
	}
	return j.FS.Mkdir(p, perm)
}

func (j *jailFS) Chmod(p string, perm fs.FileMode) experimentalsys.Errno {
	if !j.inside(p) {
		return experimentalsys.EPERM
	}
	return j.FS.Chmod(p, perm)
}

func (j *jailFS) Rename(from, to string) experimentalsys.Errno {
	if !j.inside(path.Dir(from)) || !j.inside(to) {
		return experimentalsys.EPERM
	}
	return j.FS.Rename(from, to)
}

func (j *jailFS) Rmdir(p string) experimentalsys.Errno {
	if !j.inside(p) {
		return experimentalsys.EPERM
	}
	return j.FS.Rmdir(p)
}

func (j *jailFS) Unlink(p string) experimentalsys.Errno {
	if !j.inside(path.Dir(p)) {
		return experimentalsys.EPERM
	}
	return j.FS.Unlink(p)
}

// Link and Symlink are refused: a link is how a guest would point a path
// of the mount at something outside it.
func (j *jailFS) Link(string, string) experimentalsys.Errno { return experimentalsys.EPERM }

func (j *jailFS) Symlink(string, string) experimentalsys.Errno { return experimentalsys.EPERM }

func (j *jailFS) Utimens(p string, atim, mtim int64) experimentalsys.Errno {
	if !j.inside(p) {
		return experimentalsys.EPERM
	}
	return j.FS.Utimens(p, atim, mtim)
}
