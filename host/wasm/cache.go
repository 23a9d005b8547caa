package wasm

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/tetratelabs/wazero"
)

// The compile cache on disk holds native code (wazero's compilation cache)
// and instrumented modules: whoever can change a file there chooses the code
// a plugin runs, built-ins included. wazero's cache is not pluggable and
// checks its files with a CRC only, so the host keeps its own record.
//
// diskCache keeps an index of every file the host wrote into the cache
// directory (path → sha256 and size), authenticated with HMAC-SHA256 under a
// per-installation key. The key is a 0600 file next to the directory
// (DIR.key), so that access to the directory alone does not reveal it.
// Opening the cache verifies every file against the index and deletes what is
// unknown or differs before wazero may read anything; an index that fails
// its authentication is discarded with all its entries (every file is then
// deleted and compiled again). A compile records the files that appeared
// while it ran; an instrumented module is checked each time it is read: it
// is hashed again unless it kept, while it was read, the stamp recorded when
// its digest was last checked.
//
// Several processes (the server, the CLI) may share one directory: opening
// holds an exclusive lock on DIR/.lock-compile while it verifies, compiles
// hold it shared, and index updates are serialised by DIR/.lock-index and
// written atomically.
//
// What this does not cover: a file changed while a host runs, between its
// check and its use. The cache directory must therefore be out of every
// plugin's reach (mounts never contain it) and writable by the host's user
// only; then a change at rest, the attack this guards against, is found at
// the next start.
type diskCache struct {
	dir    string
	key    []byte
	logger *slog.Logger
	limits CacheLimits
	now    func() time.Time
	mu     sync.Mutex // serialises this process's index updates (the file lock is per open file)
	// compiling counts this process's compiles in flight by module: the
	// files that appear while one runs may be another's (cache_prune.go).
	cmu       sync.Mutex
	compiling map[string]int
}

const (
	cacheIndexName       = ".index"
	cacheCompileLockName = ".lock-compile"
	cacheIndexLockName   = ".lock-index"
	cacheIndexMagic      = "agenthost-cache-index 1"
	cacheKeyBytes        = 32
	cacheMaxWarnings     = 20 // removals logged one by one; the rest are counted
)

// cacheEntry is one file the host wrote.
type cacheEntry struct {
	SHA256 string `json:"sha256"`
	Size   int64  `json:"size"`
	// Stamp is the file's identity when its digest was last checked
	// (device, inode, size, modification and change times). An unchanged
	// stamp spares the hash at the next open: content cannot change without
	// the change time moving, which no unprivileged process can set back.
	Stamp string `json:"stamp,omitempty"`
	// Modules are the plugin modules (sha256 of the module as loaded) whose
	// compile may have written the file; a start of any of them marks it
	// used.
	Modules []string `json:"modules,omitempty"`
	// Used is when a start of one of its modules last marked it (Unix
	// seconds, at most touchEvery old while used).
	Used int64 `json:"used,omitempty"`
}

// openDiskCache prepares dir for use: it makes the key on first use, and
// deletes every file that the authenticated index does not vouch for.
func openDiskCache(dir string, limits CacheLimits, now func() time.Time, logger *slog.Logger) (*diskCache, error) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	if limits.MaxBytes <= 0 {
		limits.MaxBytes = DefaultCacheLimits.MaxBytes
	}
	if limits.MaxUnused <= 0 {
		limits.MaxUnused = DefaultCacheLimits.MaxUnused
	}
	if now == nil {
		now = time.Now
	}
	d := &diskCache{dir: dir, logger: logger, limits: limits, now: now, compiling: map[string]int{}}
	if d.key, err = loadCacheKey(dir+".key", logger); err != nil {
		return nil, fmt.Errorf("compile cache key: %w", err)
	}
	if err := d.verify(); err != nil {
		return nil, err
	}
	return d, nil
}

// loadCacheKey reads the installation's key, or makes it. A key that is not
// 32 bytes of a private regular file is replaced (which invalidates the index
// and so the whole cache).
func loadCacheKey(path string, logger *slog.Logger) ([]byte, error) {
	for attempt := 0; attempt < 3; attempt++ {
		info, err := os.Lstat(path)
		switch {
		case err == nil && info.Mode().IsRegular() && info.Mode().Perm()&0o077 == 0 && info.Size() == cacheKeyBytes:
			key, err := os.ReadFile(path)
			if err == nil && len(key) == cacheKeyBytes {
				return key, nil
			}
			if err != nil {
				return nil, err
			}
		case err == nil:
			logger.Warn("compile cache: replacing a key file that is not a private 32-byte file; the cache is discarded",
				"file", path, "mode", info.Mode().String(), "size", info.Size())
			if err := os.Remove(path); err != nil {
				return nil, err
			}
			continue
		case !errors.Is(err, fs.ErrNotExist):
			return nil, err
		}
		// Written whole to a temporary file, then linked into place: a
		// process that loses the race reads the winner's complete key.
		key := make([]byte, cacheKeyBytes)
		if _, err := rand.Read(key); err != nil {
			return nil, err
		}
		tmp, err := os.CreateTemp(filepath.Dir(path), ".key-*")
		if err != nil {
			return nil, err
		}
		_, werr := tmp.Write(key)
		if err := errors.Join(werr, tmp.Chmod(0o600), tmp.Sync(), tmp.Close()); err != nil {
			os.Remove(tmp.Name())
			return nil, err
		}
		err = os.Link(tmp.Name(), path)
		os.Remove(tmp.Name())
		if err == nil {
			return key, nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return nil, err
		}
	}
	return nil, fmt.Errorf("%s keeps changing", path)
}

// ownFile reports whether rel is one of the cache's bookkeeping files.
func ownFile(rel string) bool {
	return rel == cacheIndexName || rel == cacheCompileLockName || rel == cacheIndexLockName
}

// verify deletes every file in the directory that is not in the index or
// whose content differs from its recorded digest, and drops index entries
// whose file is gone. It holds both locks: no compile writes meanwhile.
func (d *diskCache) verify() error {
	unlockCompile, err := lockFile(filepath.Join(d.dir, cacheCompileLockName), true)
	if err != nil {
		return fmt.Errorf("compile cache lock: %w", err)
	}
	defer unlockCompile()
	unlockIndex, err := lockFile(filepath.Join(d.dir, cacheIndexLockName), true)
	if err != nil {
		return fmt.Errorf("compile cache lock: %w", err)
	}
	defer unlockIndex()

	index, err := d.readIndex()
	if err != nil {
		d.logger.Warn("compile cache: the index failed its check and is discarded; every cached file is deleted and compiled again",
			"dir", d.dir, "err", err)
		index = map[string]cacheEntry{}
	}
	changed := err != nil
	seen := map[string]bool{}
	removed := 0
	remove := func(path, rel, reason string) {
		if err := os.RemoveAll(path); err != nil {
			d.logger.Error("compile cache: cannot delete an unverified file", "file", rel, "err", err)
		}
		if removed++; removed <= cacheMaxWarnings {
			d.logger.Warn("compile cache: deleted a file the host cannot vouch for", "dir", d.dir, "file", rel, "reason", reason)
		}
	}
	err = filepath.WalkDir(d.dir, func(path string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, rerr := filepath.Rel(d.dir, path)
		if rerr != nil || rel == "." {
			return rerr
		}
		rel = filepath.ToSlash(rel)
		switch {
		case ownFile(rel) && e.Type().IsRegular():
			return nil
		case e.IsDir():
			return nil
		case !e.Type().IsRegular():
			remove(path, rel, "not a regular file")
			return nil
		}
		want, ok := index[rel]
		if !ok {
			remove(path, rel, "not written by this host")
			return nil
		}
		seen[rel] = true
		info, ierr := e.Info()
		stamp := ""
		if ierr == nil {
			stamp = fileStamp(info)
			if want.Used == 0 {
				// Recorded before files were marked used: as old as the file.
				want.Used = info.ModTime().Unix()
				index[rel] = want
				changed = true
			}
		}
		if stamp != "" && stamp == want.Stamp {
			return nil
		}
		sum, size, herr := hashFile(path)
		if herr != nil || sum != want.SHA256 || size != want.Size {
			remove(path, rel, "content differs from the recorded digest")
			delete(index, rel)
			delete(seen, rel)
			changed = true
			return nil
		}
		want.Stamp = stamp
		index[rel] = want
		changed = true
		return nil
	})
	if err != nil {
		return fmt.Errorf("compile cache %s: %w", d.dir, err)
	}
	for rel := range index {
		if !seen[rel] {
			delete(index, rel)
			changed = true
		}
	}
	if removed > cacheMaxWarnings {
		d.logger.Warn("compile cache: more unverified files deleted", "dir", d.dir, "count", removed-cacheMaxWarnings)
	}
	if d.prune(index, 0) {
		changed = true
	}
	if changed || removed > 0 {
		return d.writeIndex(index)
	}
	return nil
}

// compile runs fn, which compiles module (sha256 of the plugin's module)
// through wazero's cache in this directory, records the files that
// appeared meanwhile and marks the module's files used. The shared lock
// keeps an opening host from deleting a file this compile is writing.
func (d *diskCache) compile(module string, fn func() (wazero.CompiledModule, error)) (wazero.CompiledModule, error) {
	unlock, err := lockFile(filepath.Join(d.dir, cacheCompileLockName), false)
	if err != nil {
		d.logger.Warn("compile cache: lock", "err", err)
		unlock = func() {}
	}
	defer unlock()
	owners := d.startCompile(module)
	before, lerr := d.list()
	compiled, err := fn()
	owners = d.endCompile(module, owners)
	if err != nil || lerr != nil {
		return compiled, err
	}
	after, lerr := d.list()
	if lerr != nil {
		d.logger.Warn("compile cache: listing new files", "err", lerr)
		return compiled, nil
	}
	add := map[string]cacheEntry{}
	for rel := range after {
		if before[rel] || strings.HasPrefix(rel, instrumentedDir) {
			continue // instrumented modules are recorded by write, as their module's
		}
		sum, size, err := hashFile(filepath.Join(d.dir, filepath.FromSlash(rel)))
		if err != nil {
			continue // removed again meanwhile (another process's stale entry)
		}
		add[rel] = cacheEntry{SHA256: sum, Size: size, Modules: owners}
	}
	if err := d.record(add, module); err != nil {
		// Unrecorded files are only deleted and compiled again at the next start.
		d.logger.Warn("compile cache: recording new files", "err", err)
	}
	return compiled, nil
}

// list returns the cache's data files (not bookkeeping, not temporary files
// that wazero is writing).
func (d *diskCache) list() (map[string]bool, error) {
	out := map[string]bool{}
	err := filepath.WalkDir(d.dir, func(path string, e fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		if !e.Type().IsRegular() {
			return nil
		}
		rel, err := filepath.Rel(d.dir, path)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		// Files being written: wazero's "KEY.*.tmp", writeFileAtomic's ".tmp-*".
		if !ownFile(rel) && !strings.HasSuffix(rel, ".tmp") && !strings.HasPrefix(e.Name(), ".tmp-") {
			out[rel] = true
		}
		return nil
	})
	return out, err
}

// read returns the cached file rel if the index vouches for exactly these
// bytes; anything else is deleted, logged and reported as a miss. Bytes
// read while the file kept the stamp recorded when its digest was last
// checked are those bytes, as at open (verify); otherwise they are hashed.
func (d *diskCache) read(rel string) ([]byte, bool) {
	path := filepath.Join(d.dir, filepath.FromSlash(rel))
	b, stamp, err := readStamped(path)
	if err != nil {
		return nil, false
	}
	index, err := d.readIndex()
	want, ok := index[rel]
	if err == nil && ok && int64(len(b)) == want.Size {
		if stamp != "" && stamp == want.Stamp {
			return b, true
		}
		if sum := sha256.Sum256(b); hex.EncodeToString(sum[:]) == want.SHA256 {
			return b, true
		}
	}
	reason := "not written by this host"
	switch {
	case err != nil:
		reason = "the index failed its check: " + err.Error()
	case ok:
		reason = "content differs from the recorded digest"
	}
	d.logger.Warn("compile cache: deleted a file the host cannot vouch for", "dir", d.dir, "file", rel, "reason", reason)
	os.Remove(path)
	return nil, false
}

// compiledBefore reports whether the index vouches for module's
// instrumented form (rel) and for native code a compile of it wrote.
func (d *diskCache) compiledBefore(module, rel string) bool {
	index, err := d.readIndex()
	if err != nil {
		return false
	}
	if _, ok := index[rel]; !ok {
		return false
	}
	for name, e := range index {
		if !strings.HasPrefix(name, instrumentedDir) && slices.Contains(e.Modules, module) {
			return true
		}
	}
	return false
}

// write stores b as rel (atomically) and records it as module's.
func (d *diskCache) write(rel, module string, b []byte) error {
	unlock, err := lockFile(filepath.Join(d.dir, cacheCompileLockName), false)
	if err != nil {
		return err
	}
	defer unlock()
	path := filepath.Join(d.dir, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	if err := writeFileAtomic(path, b); err != nil {
		return err
	}
	sum := sha256.Sum256(b)
	return d.record(map[string]cacheEntry{rel: {SHA256: hex.EncodeToString(sum[:]), Size: int64(len(b)), Modules: []string{module}}}, module)
}

// record adds entries to the index, marks module's files used, and keeps
// the directory within its size. It writes the index only when this
// changes it: a start whose files were marked within touchEvery costs a
// read of the index.
func (d *diskCache) record(add map[string]cacheEntry, module string) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	unlock, err := lockFile(filepath.Join(d.dir, cacheIndexLockName), true)
	if err != nil {
		return err
	}
	defer unlock()
	index, err := d.readIndex()
	if err != nil {
		// The entries it held are lost: their files are deleted and compiled
		// again at the next start, never trusted.
		d.logger.Warn("compile cache: the index failed its check and is started anew", "dir", d.dir, "err", err)
		index = map[string]cacheEntry{}
	}
	now := d.now().Unix()
	changed := false
	for rel, e := range add {
		if old, ok := index[rel]; ok && old.SHA256 == e.SHA256 {
			e.Modules = union(old.Modules, e.Modules)
		}
		e.Used = now
		index[rel] = e
		changed = true
	}
	if d.touch(index, module, now) {
		changed = true
	}
	if d.prune(index, touchEvery) {
		changed = true
	}
	if !changed {
		return nil
	}
	return d.writeIndex(index)
}

// readIndex reads and authenticates the index; a missing index is empty.
// The file is a header line, the HMAC line, then the JSON entries the HMAC
// covers byte for byte.
func (d *diskCache) readIndex() (map[string]cacheEntry, error) {
	b, err := os.ReadFile(filepath.Join(d.dir, cacheIndexName))
	if errors.Is(err, fs.ErrNotExist) {
		return map[string]cacheEntry{}, nil
	}
	if err != nil {
		return nil, err
	}
	header, rest, ok1 := bytes.Cut(b, []byte("\n"))
	macLine, payload, ok2 := bytes.Cut(rest, []byte("\n"))
	if !ok1 || !ok2 || string(header) != cacheIndexMagic {
		return nil, errors.New("not an index of this format")
	}
	got, err := hex.DecodeString(string(macLine))
	if err != nil || !hmac.Equal(got, d.mac(payload)) {
		return nil, errors.New("its HMAC does not match: it was not written by this installation, or was changed")
	}
	index := map[string]cacheEntry{}
	if err := json.Unmarshal(payload, &index); err != nil {
		return nil, fmt.Errorf("authenticated but unreadable: %w", err)
	}
	return index, nil
}

func (d *diskCache) writeIndex(index map[string]cacheEntry) error {
	payload, err := json.Marshal(index) // map keys are sorted: stable output
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	buf.WriteString(cacheIndexMagic + "\n")
	buf.WriteString(hex.EncodeToString(d.mac(payload)) + "\n")
	buf.Write(payload)
	return writeFileAtomic(filepath.Join(d.dir, cacheIndexName), buf.Bytes())
}

func (d *diskCache) mac(payload []byte) []byte {
	m := hmac.New(sha256.New, d.key)
	m.Write(payload)
	return m.Sum(nil)
}

// readStamped reads a file and returns its stamp (fileStamp), or "" when
// the file's stamp changed while it was read.
func readStamped(path string) ([]byte, string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, "", err
	}
	defer f.Close()
	before, err := f.Stat()
	if err != nil {
		return nil, "", err
	}
	b := make([]byte, before.Size())
	if _, err := io.ReadFull(f, b); err != nil {
		return nil, "", err
	}
	after, err := f.Stat()
	if err != nil {
		return nil, "", err
	}
	stamp := fileStamp(before)
	if fileStamp(after) != stamp {
		stamp = ""
	}
	return b, stamp, nil
}

func hashFile(path string) (string, int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", 0, err
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, f)
	if err != nil {
		return "", 0, err
	}
	return hex.EncodeToString(h.Sum(nil)), n, nil
}

// compileModule compiles module on rt, through the verified disk cache when
// the host has one. Every compile of a plugin module goes through here.
// sha names the plugin's module (as loaded, before instrumentation) for
// the cache's record of use.
func (h *Host) compileModule(ctx context.Context, rt wazero.Runtime, module []byte, sha string) (wazero.CompiledModule, error) {
	h.compiles.Add(1)
	if h.disk == nil {
		return rt.CompileModule(ctx, module)
	}
	return h.disk.compile(sha, func() (wazero.CompiledModule, error) { return rt.CompileModule(ctx, module) })
}
