package wasm_test

import (
	"context"
	"encoding/binary"
	"hash/crc32"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/agenthost/agenthost/host/wasm"
	"github.com/agenthost/agenthost/host/wasm/interrupt"
)

// cacheHost is a host with its compile cache in dir, logging into logs;
// more changes its configuration further.
func cacheHost(t *testing.T, dir string, logs *logCapture, more ...func(wasm.Config) wasm.Config) *wasm.Host {
	t.Helper()
	reg, err := wasm.NewRegistry(wasm.StandardCapabilities(wasm.EgressOptions{})...)
	if err != nil {
		t.Fatal(err)
	}
	cfg := wasm.NewConfig().
		WithCapabilities(reg).WithGrantDeclared(true).WithAllowUnsigned(true).
		WithLogger(slog.New(logs)).
		WithCompilationCacheDir(dir)
	for _, f := range more {
		cfg = f(cfg)
	}
	h, err := wasm.New(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// cacheFiles lists the data files of a cache directory (not its bookkeeping).
func cacheFiles(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	filepath.WalkDir(dir, func(path string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() || strings.HasPrefix(e.Name(), ".") {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		b, _ := os.ReadFile(path)
		out[filepath.ToSlash(rel)] = b
		return nil
	})
	return out
}

func copyCache(t *testing.T, from, to string) {
	t.Helper()
	err := filepath.WalkDir(from, func(path string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(from, path)
		if e.IsDir() {
			return os.MkdirAll(filepath.Join(to, rel), 0o700)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(to, rel), b, 0o600)
	})
	if err != nil {
		t.Fatal(err)
	}
	key, err := os.ReadFile(from + ".key")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to+".key", key, 0o600); err != nil {
		t.Fatal(err)
	}
}

// forgeNativeCode changes one byte of the native code in a wazero cache file
// and fixes its CRC, as an attacker would: wazero itself would accept it.
func forgeNativeCode(t *testing.T, b []byte) []byte {
	t.Helper()
	b = append([]byte(nil), b...)
	off := 6
	off += 1 + int(b[off])
	n := int(binary.LittleEndian.Uint32(b[off:]))
	off += 4 + 8*n
	size := int(binary.LittleEndian.Uint64(b[off:]))
	off += 8
	code := b[off : off+size]
	code[len(code)-1] ^= 0xff
	binary.LittleEndian.PutUint32(b[off+size:], crc32.Checksum(code, crc32.MakeTable(crc32.Castagnoli)))
	return b
}

// warnings returns the cache's warning messages with their file attribute.
func (l *logCapture) cacheWarnings() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, r := range l.records {
		if r.Level < slog.LevelWarn || !strings.HasPrefix(r.Message, "compile cache") {
			continue
		}
		s := r.Message
		r.Attrs(func(a slog.Attr) bool {
			if a.Key == "file" || a.Key == "reason" {
				s += " " + a.Key + "=" + a.Value.String()
			}
			return true
		})
		out = append(out, s)
	}
	return out
}

// fillCache runs the echo plugin once on a host whose compile cache is dir,
// leaving its instrumented module and native code there.
func fillCache(t *testing.T, dir string, echo []byte) {
	t.Helper()
	ctx := context.Background()
	h := cacheHost(t, dir, &logCapture{})
	p, err := h.Load(ctx, wasm.Source{Origin: "echo", Module: echo, Builtin: true})
	if err != nil {
		t.Fatal(err)
	}
	if r := call(t, p, "echo", map[string]any{"text": "hello"}); !r.OK {
		t.Fatal(r.Error)
	}
	h.Close(ctx)
}

// TestCompileCacheTampering fills a compile cache, tampers with it as an
// attacker with write access to the directory would, and opens a new host on
// it: every tampered or foreign file is deleted (and logged) before wazero may
// read it, the plugin works, compiled again, and the cache is whole again.
func TestCompileCacheTampering(t *testing.T) {
	ctx := context.Background()
	echo := testModule(t, "echo")
	pristine := filepath.Join(t.TempDir(), "cache")
	fillCache(t, pristine, echo)
	files := cacheFiles(t, pristine)
	var instrumented, native string
	for rel := range files {
		switch {
		case strings.HasPrefix(rel, "instrumented/"):
			instrumented = rel
		case strings.HasPrefix(rel, "wazero-"):
			native = rel
		}
	}
	if len(files) != 2 || instrumented == "" || native == "" {
		t.Fatalf("the first host cached %d files, want an instrumented module and its native code: %v", len(files), keys(files))
	}
	// The attacker's code: another plugin, instrumented like the host would.
	attacker, err := interrupt.Instrument(testModule(t, "crash"), interrupt.Options{GlobalExport: "agenthost.interrupt"})
	if err != nil {
		t.Fatal(err)
	}
	foreign := filepath.Dir(native) + "/" + strings.Repeat("ab", 32)

	write := func(dir, rel string, b []byte) {
		if err := os.WriteFile(filepath.Join(dir, rel), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	cases := []struct {
		name    string
		tamper  func(dir string)
		removed []string // files that must be deleted and named in a warning
		warning string   // a further warning, if any
	}{
		{"instrumented module replaced", func(dir string) { write(dir, instrumented, attacker) }, []string{instrumented}, ""},
		{"native code forged (CRC fixed)", func(dir string) { write(dir, native, forgeNativeCode(t, files[native])) }, []string{native}, ""},
		{"foreign files added", func(dir string) {
			write(dir, foreign, files[native])
			write(dir, "instrumented/evil.wasm", attacker)
			write(dir, "planted", attacker)
			if err := os.Symlink(filepath.Join(dir, "planted"), filepath.Join(dir, "instrumented", "link.wasm")); err != nil {
				t.Fatal(err)
			}
		}, []string{foreign, "instrumented/evil.wasm", "planted", "instrumented/link.wasm"}, ""},
		{"index HMAC corrupted", func(dir string) {
			b, _ := os.ReadFile(filepath.Join(dir, ".index"))
			lines := strings.SplitN(string(b), "\n", 3)
			lines[1] = strings.Repeat("0", len(lines[1]))
			write(dir, ".index", []byte(strings.Join(lines, "\n")))
		}, []string{instrumented, native}, "index failed its check"},
		{"index rewritten to vouch for a forged file", func(dir string) {
			b, _ := os.ReadFile(filepath.Join(dir, ".index"))
			write(dir, instrumented, attacker)
			write(dir, ".index", []byte(strings.Replace(string(b), `"size":`+itoa(len(files[instrumented])), `"size":`+itoa(len(attacker)), 1)))
		}, []string{instrumented, native}, "index failed its check"},
		{"key replaced", func(dir string) { os.WriteFile(dir+".key", []byte(strings.Repeat("k", 32)), 0o600) }, []string{instrumented, native}, "index failed its check"},
		{"key readable by others", func(dir string) { os.Chmod(dir+".key", 0o644) }, []string{instrumented, native}, "replacing a key file"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "cache")
			copyCache(t, pristine, dir)
			tc.tamper(dir)
			tampered := cacheFiles(t, dir)
			logs := &logCapture{}
			h := cacheHost(t, dir, logs)
			defer h.Close(ctx)
			// Before anything is compiled, the tampered files are gone.
			now := cacheFiles(t, dir)
			warnings := strings.Join(logs.cacheWarnings(), "\n")
			for _, rel := range tc.removed {
				if _, ok := now[rel]; ok {
					t.Errorf("%s is still there after opening the cache", rel)
				}
				if _, err := os.Lstat(filepath.Join(dir, rel)); err == nil {
					t.Errorf("%s still exists", rel)
				}
				if !strings.Contains(warnings, "file="+rel+" ") {
					t.Errorf("no warning names %s:\n%s", rel, warnings)
				}
			}
			if tc.warning != "" && !strings.Contains(warnings, tc.warning) {
				t.Errorf("no warning says %q:\n%s", tc.warning, warnings)
			}
			p, err := h.Load(ctx, wasm.Source{Origin: "echo", Module: echo, Builtin: true})
			if err != nil {
				t.Fatal(err)
			}
			if r := call(t, p, "echo", map[string]any{"text": "still echo"}); !r.OK || r.Text != "still echo" {
				t.Fatalf("echo after tampering: %+v %+v", r.Text, r.Error)
			}
			after := cacheFiles(t, dir)
			for rel, b := range tampered {
				if string(after[rel]) == string(b) && string(b) != string(files[rel]) {
					t.Errorf("the tampered %s survived", rel)
				}
			}
			h.Close(ctx)
			// The cache is whole again: a further host deletes nothing.
			logs = &logCapture{}
			cacheHost(t, dir, logs).Close(ctx)
			if w := logs.cacheWarnings(); len(w) != 0 {
				t.Errorf("the repaired cache was not whole: %q", w)
			}
			if got := cacheFiles(t, dir); len(got) != 2 {
				t.Errorf("repaired cache holds %v", keys(got))
			}
		})
	}
}

// TestCompileCacheChangedWhileOpen: an instrumented module changed after a
// host opened (and verified) the cache, in place, at its size, with its
// modification time set back, is refused when the host reads it: its change
// time moved, so the host hashes it instead of trusting the stamp it
// checked at open.
func TestCompileCacheChangedWhileOpen(t *testing.T) {
	ctx := context.Background()
	echo := testModule(t, "echo")
	dir := filepath.Join(t.TempDir(), "cache")
	fillCache(t, dir, echo)
	cacheHost(t, dir, &logCapture{}).Close(ctx) // records the files' stamps

	var instrumented string
	for rel := range cacheFiles(t, dir) {
		if strings.HasPrefix(rel, "instrumented/") {
			instrumented = rel
		}
	}
	logs := &logCapture{}
	h := cacheHost(t, dir, logs)
	defer h.Close(ctx)
	path := filepath.Join(dir, instrumented)
	info, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)-1] ^= 0xff
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt(b[len(b)-1:], int64(len(b)-1)); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if err := os.Chtimes(path, info.ModTime(), info.ModTime()); err != nil {
		t.Fatal(err)
	}

	p, err := h.Load(ctx, wasm.Source{Origin: "echo", Module: echo, Builtin: true})
	if err != nil {
		t.Fatal(err)
	}
	if r := call(t, p, "echo", map[string]any{"text": "still echo"}); !r.OK || r.Text != "still echo" {
		t.Fatalf("echo after tampering: %+v %+v", r.Text, r.Error)
	}
	if w := strings.Join(logs.cacheWarnings(), "\n"); !strings.Contains(w, "file="+instrumented+" reason=content differs") {
		t.Errorf("no warning refuses the changed %s:\n%s", instrumented, w)
	}
}

// TestCompileCacheShared: hosts in one process (as the server and the CLI in
// two) compile into one directory at once; every file they write is
// recorded, so a later host deletes nothing.
func TestCompileCacheShared(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "cache")
	modules := map[string][]byte{"echo": testModule(t, "echo"), "compute": testModule(t, "compute")}
	var wg sync.WaitGroup
	logs := &logCapture{}
	for i := 0; i < 2; i++ {
		h := cacheHost(t, dir, logs)
		defer h.Close(ctx)
		for name, m := range modules {
			if _, err := h.Load(ctx, wasm.Source{Origin: name, Module: m, Builtin: true}); err != nil {
				t.Fatal(err)
			}
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := h.Warm(ctx); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if w := logs.cacheWarnings(); len(w) != 0 {
		t.Errorf("warnings while sharing: %q", w)
	}
	logs = &logCapture{}
	cacheHost(t, dir, logs).Close(ctx)
	if w := logs.cacheWarnings(); len(w) != 0 {
		t.Errorf("a later host deleted files two hosts wrote: %q", w)
	}
	if n := len(cacheFiles(t, dir)); n < 4 {
		t.Errorf("%d files cached, want at least an instrumented module and native code per plugin", n)
	}
}

func keys(m map[string][]byte) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

func itoa(n int) string { return strconv.Itoa(n) }
