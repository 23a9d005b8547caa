package archive

import (
	"archive/tar"
	"bytes"
	"context"
	"encoding/binary"
	"hash/crc32"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ulikunitz/xz"

	"github.com/agenthost/agenthost/internal/testcorpus"
)

// formatCase is one real archive of the formats beyond ZIP/TAR/gzip, with
// what it must give: files (path below the archive → text they contain),
// folders, and refused entries (path → Problem kind).
type formatCase struct {
	file     string
	kind     Kind
	files    map[string]string
	dirs     []string
	problems map[string]string
	stopped  bool // the archive itself cannot be read past its header
}

// formatCases are testdata/corpus/archives/formats (see MANIFEST.tsv).
var formatCases = []formatCase{
	{file: "constructed-docs.tar.bz2", kind: Bzip2,
		files: map[string]string{"README.txt": "UnRTF is a moderately complicated converter", "docs/antiword-FAQ.txt": "Antiword"},
		dirs:  []string{"docs"}},
	{file: "constructed-docs.tar.xz", kind: Xz,
		files: map[string]string{"README.txt": "UnRTF is a moderately complicated converter", "docs/antiword-FAQ.txt": "Antiword"},
		dirs:  []string{"docs"}},
	{file: "constructed-README.txt.xz", kind: Xz,
		files: map[string]string{"constructed-README.txt": "UnRTF is a moderately complicated converter"}},
	{file: "constructed-docs.tar.zst", kind: Zstd,
		files: map[string]string{"README.txt": "UnRTF is a moderately complicated converter", "docs/antiword-FAQ.txt": "Antiword"},
		dirs:  []string{"docs"}},
	{file: "constructed-README.txt.zst", kind: Zstd,
		files: map[string]string{"constructed-README.txt": "UnRTF is a moderately complicated converter"}},
	{file: "constructed-docs.7z", kind: SevenZip,
		files: map[string]string{"README.txt": "UnRTF is a moderately complicated converter", "docs/antiword-FAQ.txt": "Antiword"},
		dirs:  []string{"docs"}},
	{file: "libarchive-7zip-lzma2.7z", kind: SevenZip,
		files: map[string]string{"file1": "The libarchive distribution as a whole is Copyright by Tim Kientzle"}},
	{file: "libarchive-7zip-ppmd.7z", kind: SevenZip,
		files: map[string]string{"ppmd_test.txt": "<!DOCTYPE HTML PUBLIC"}},
	{file: "libarchive-7zip-symlink.7z", kind: SevenZip,
		files:    map[string]string{"file1": "hellohellohello"},
		problems: map[string]string{"symlinkfile": ProblemSymlink}},
	{file: "libarchive-7zip-encrypted.7z", kind: SevenZip,
		problems: map[string]string{"bar.txt": ProblemEncrypted}},
	{file: "libarchive-rar4.rar", kind: Rar,
		files:    map[string]string{"test.txt": "test text document", "testdir/test.txt": "test text document"},
		dirs:     []string{"testdir", "testemptydir"},
		problems: map[string]string{"testlink": ProblemSymlink}},
	{file: "libarchive-rar4-unicode.rar", kind: Rar,
		files: map[string]string{"表だよ/漢字長いファイル名long-filename-in-漢字.txt": "kanji", "abcdefghijklmnopqrsテスト.txt": "aaaaaaaaaaaaaaa",
			"表だよ/新しいフォルダ/新規テキスト ドキュメント.txt": ""},
		dirs:     []string{"表だよ", "表だよ/新しいフォルダ"},
		problems: map[string]string{"表だよ/ファイル": ProblemSymlink}},
	{file: "libarchive-rar5-solid.rar", kind: Rar,
		files: map[string]string{"test1.bin": "\x00\x00\x00\x00\x00\x00\x00\x00\x02\x00\x00\x00", "test2.bin": "\x01\x00\x00\x00\x01\x00\x00\x00\x03",
			"test3.bin": "\x02\x00\x00\x00\x02\x00\x00\x00\x04", "test4.bin": "\x03\x00\x00\x00\x03\x00\x00\x00\x05"}},
	{file: "libarchive-rar5-symlink.rar", kind: Rar,
		files:    map[string]string{"file.txt": "1234\n"},
		dirs:     []string{"dir"},
		problems: map[string]string{"symlink.txt": ProblemSymlink, "dirlink": ProblemSymlink}},
	{file: "libarchive-rar4-encrypted-data.rar", kind: Rar,
		problems: map[string]string{"foo.txt": ProblemEncrypted, "bar.txt": ProblemEncrypted}},
}

// TestFormatsCorpus: bzip2, xz, 7z and RAR 4/5 archives resolve through the
// same walk as ZIP and TAR: every file's text, by Open and by Walk's stream,
// folders as folders (a tar's "./" root is neither an entry nor a failure),
// links and encrypted entries refused one by one while the walk goes on.
func TestFormatsCorpus(t *testing.T) {
	for _, c := range formatCases {
		t.Run(c.file, func(t *testing.T) {
			path := testcorpus.Path(t, "archives", "formats", c.file)
			res := resolveFile(t, path, Limits{})
			if res.Entries[0].Container != c.kind {
				t.Fatalf("detected as %v, want %v", res.Entries[0].Container, c.kind)
			}
			if res.Truncated != c.stopped {
				t.Errorf("truncated %v, want %v (stops %v)", res.Truncated, c.stopped, res.Stops)
			}
			root := c.file
			for p, text := range c.files {
				e, ok := entryByPath(res, root+"/"+p)
				if !ok {
					t.Errorf("no entry %s; have %v", p, paths(res))
					continue
				}
				b, err := readEntry(e)
				if err != nil || !strings.Contains(string(b), text) || int64(len(b)) != e.Size {
					t.Errorf("%s: Open gave %d bytes (size %d) %q…, %v; want them to contain %q", p, len(b), e.Size, head(b), err, text)
				}
			}
			for _, d := range c.dirs {
				if e, ok := entryByPath(res, root+"/"+d); !ok || !e.Dir {
					t.Errorf("folder %s: %+v %v", d, e, ok)
				}
			}
			files := 0
			for _, e := range res.Entries[1:] {
				if !e.Dir && e.Container == None {
					files++
				}
			}
			if files != len(c.files) {
				t.Errorf("%d files, want %d: %v", files, len(c.files), paths(res))
			}
			for _, pr := range res.Problems {
				p := strings.TrimPrefix(pr.Path, root+"/")
				if want, ok := c.problems[p]; !ok || want != pr.Kind {
					t.Errorf("problem %v, want kind %q", pr, want)
				}
			}
			for p, kind := range c.problems {
				wantProblem(t, res, root+"/"+p, kind)
			}

			// Walk streams the same bytes in one pass.
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]string{}
			_, err = Walk(context.Background(), bytes.NewReader(b), int64(len(b)), filepath.Base(path), Limits{}, func(e Entry, r io.Reader) error {
				if r != nil && e.Depth > 0 {
					d, err := io.ReadAll(r)
					if err != nil {
						t.Errorf("%s: %v", e.Path, err)
					}
					got[strings.TrimPrefix(e.Path, root+"/")] = string(d)
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			for p, text := range c.files {
				if !strings.Contains(got[p], text) {
					t.Errorf("Walk: %s gave %q…, want %q", p, head([]byte(got[p])), text)
				}
			}
		})
	}
}

// wantStreamProblem: a compressed stream whose bytes fail is a problem of
// that kind on the stream, or on its file when the first bytes expanded.
func wantStreamProblem(t *testing.T, res Result, stream, kind string) {
	t.Helper()
	file := stream + "/" + strings.TrimSuffix(strings.TrimSuffix(stream, ".xz"), ".bz2")
	for _, p := range res.Problems {
		if (p.Path == stream || p.Path == file) && p.Kind == kind {
			return
		}
	}
	t.Fatalf("no %s problem on %s or %s: %v", kind, stream, file, res.Problems)
}

func head(b []byte) string {
	if len(b) > 60 {
		b = b[:60]
	}
	return string(b)
}

// xzBytes compresses b as xz.
func xzBytes(t testing.TB, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	w, err := xz.NewWriter(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestCompressedStreamsHostile: bzip2 and xz streams are held to the same
// ratio and size limits as gzip, per file and per tar member; a cut or
// damaged stream is that entry's failure; an xz header asking for a huge
// dictionary is refused before anything is allocated.
func TestCompressedStreamsHostile(t *testing.T) {
	small := Limits{RatioFloor: 1 << 20}
	zeros := make([]byte, 16<<20)

	t.Run("xz bomb", func(t *testing.T) {
		res := resolveBytes(t, xzBytes(t, zeros), "zeros.bin.xz", small)
		wantProblem(t, res, "zeros.bin.xz/zeros.bin", ProblemBomb)
	})
	t.Run("xz tar bomb member", func(t *testing.T) {
		tb := buildTar(t, reg("first.txt", []byte("first")), reg("zeros.bin", zeros), reg("after.txt", []byte("after")))
		res := resolveBytes(t, xzBytes(t, tb), "b.tar.xz", small)
		wantEntry(t, res, "b.tar.xz/first.txt", []byte("first"))
		if !res.Truncated {
			t.Fatalf("a bomb inside a compressed tar must stop the stream: %v", paths(res))
		}
	})
	t.Run("xz cut", func(t *testing.T) {
		x := xzBytes(t, bytes.Repeat([]byte("some text that repeats. "), 4000))
		res := resolveBytes(t, x[:len(x)/2], "cut.txt.xz", Limits{})
		wantStreamProblem(t, res, "cut.txt.xz", ProblemTruncated)
	})
	t.Run("xz damaged", func(t *testing.T) {
		x := xzBytes(t, bytes.Repeat([]byte("some text that repeats. "), 4000))
		x[len(x)/2] ^= 0xff
		res := resolveBytes(t, x, "bad.txt.xz", Limits{})
		wantStreamProblem(t, res, "bad.txt.xz", ProblemCorrupt)
	})
	t.Run("xz huge dictionary", func(t *testing.T) {
		x := xzBytes(t, []byte("hello"))
		// The first block header follows the 12-byte stream header: size,
		// flags, then the LZMA2 filter (id 0x21, 1 byte of properties).
		blk := x[12:]
		n := (int(blk[0]) + 1) * 4
		i := bytes.Index(blk[:n], []byte{0x21, 0x01})
		if i < 0 {
			t.Fatalf("no LZMA2 filter in the block header % x", blk[:n])
		}
		blk[i+2] = 40 // a 4 GiB dictionary
		binary.LittleEndian.PutUint32(blk[n-4:], crc32.ChecksumIEEE(blk[:n-4]))
		res := resolveBytes(t, x, "huge.txt.xz", Limits{})
		if p, ok := problemAt(res, "huge.txt.xz"); !ok || p.Kind != ProblemLimit || !strings.Contains(p.Reason, "dictionary") {
			t.Fatalf("problem %+v %v, want a limit on the dictionary", p, ok)
		}
	})
	t.Run("bzip2 bad block", func(t *testing.T) {
		// A bzip2 header and block magic, then garbage.
		noise := make([]byte, 8<<10)
		rand.NewChaCha8([32]byte{1}).Read(noise)
		b := append([]byte("BZh91AY&SY"), noise...)
		res := resolveBytes(t, b, "bad.txt.bz2", Limits{})
		if res.Entries[0].Container != Bzip2 {
			t.Fatalf("detected %v", res.Entries[0].Container)
		}
		wantStreamProblem(t, res, "bad.txt.bz2", ProblemCorrupt)
	})
}

// TestTarRootEntry: "./", the first member of tar -C dir ., is the
// archive's root, neither an entry nor a failure.
func TestTarRootEntry(t *testing.T) {
	dir := func(name string) tfile { return tfile{hdr: tar.Header{Name: name, Typeflag: tar.TypeDir, Mode: 0o755}} }
	tb := buildTar(t, dir("./"), reg("./a.txt", []byte("a")), dir("./sub/"), reg("./sub/b.txt", []byte("b")))
	res := resolveBytes(t, tb, "root.tar", Limits{})
	if len(res.Problems) != 0 || res.Truncated {
		t.Fatalf("problems %v, truncated %v", res.Problems, res.Truncated)
	}
	wantEntry(t, res, "root.tar/a.txt", []byte("a"))
	wantEntry(t, res, "root.tar/sub/b.txt", []byte("b"))
	if got := len(res.Entries); got != 4 {
		t.Fatalf("entries %v, want root.tar, a.txt, sub, sub/b.txt", paths(res))
	}
}

// TestFormatsSurviveDamage: cut and corrupted copies of the bzip2, xz, 7z
// and RAR corpus files resolve to what can be read and problems for the
// rest, without a panic, and every file read through Open is bounded by
// its declared size.
func TestFormatsSurviveDamage(t *testing.T) {
	for _, c := range formatCases {
		b := testcorpus.Read(t, "archives", "formats", c.file)
		for i := 1; i <= 16; i++ {
			cut := b[:len(b)*i/17]
			bad := append([]byte(nil), b...)
			for j := 32 + i; j < len(bad); j += len(bad)/5 + i {
				bad[j] ^= byte(0x5a + i)
			}
			for _, d := range [][]byte{cut, bad} {
				res, err := Resolve(context.Background(), bytes.NewReader(d), int64(len(d)), c.file, Limits{})
				if err != nil {
					t.Fatalf("%s (damaged %d): %v", c.file, i, err)
				}
				for _, e := range res.Entries[1:] {
					if e.Dir || e.Container != None {
						continue
					}
					if got, err := readEntry(e); err == nil && int64(len(got)) != e.Size {
						t.Errorf("%s: %d bytes, declared %d", e.Path, len(got), e.Size)
					}
				}
			}
		}
	}
}

// TestZstdWindowBound: a zstd frame that asks for a 2 GiB window (its
// header's Window_Descriptor, RFC 8878 3.1.1.1.2) is refused as over a
// limit before the decoder allocates it; the sandbox has less memory.
func TestZstdWindowBound(t *testing.T) {
	// Magic, a frame header without content size (FHD 0), window log
	// 10+21 = 31, then one last raw block of one byte.
	frame := []byte{0x28, 0xb5, 0x2f, 0xfd, 0x00, 21 << 3, 0x09, 0x00, 0x00, 'x'}
	res, err := Walk(context.Background(), bytes.NewReader(frame), int64(len(frame)), "window.zst", DefaultLimits(), func(Entry, io.Reader) error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, p := range res.Problems {
		if p.Kind == ProblemLimit && strings.Contains(p.Reason, "window") {
			found = true
		}
	}
	if !found {
		t.Errorf("problems %v, want a window limit", res.Problems)
	}
}

// rar5HeadersEncrypted is the start of a RAR 5 archive made with
// encrypted headers (rar -hp): the signature, then an archive encryption
// header (type 4: version 0, no flags, KDF count 15, a salt), as the RAR 5
// format (www.rarlab.com/technote.htm) lays it out; everything after it is
// encrypted.
func rar5HeadersEncrypted() []byte {
	body := append([]byte{4, 0, 0, 0, 15}, bytes.Repeat([]byte{0x5a}, 16)...)
	hdr := append([]byte{byte(len(body))}, body...)
	out := []byte("Rar!\x1a\x07\x01\x00")
	out = binary.LittleEndian.AppendUint32(out, crc32.ChecksumIEEE(hdr))
	out = append(out, hdr...)
	return append(out, bytes.Repeat([]byte{0xa7}, 64)...) // encrypted blocks
}

// TestRarHeadersEncrypted: a RAR whose headers are encrypted lists
// nothing; the walk says the archive is encrypted, not corrupt or empty.
func TestRarHeadersEncrypted(t *testing.T) {
	b := rar5HeadersEncrypted()
	res, err := Walk(context.Background(), bytes.NewReader(b), int64(len(b)), "secret.rar", DefaultLimits(), func(Entry, io.Reader) error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Entries) != 1 || len(res.Problems) != 1 || res.Problems[0].Kind != ProblemEncrypted || res.Problems[0].Path != "secret.rar" {
		t.Errorf("entries %v, problems %+v", paths(res), res.Problems)
	}
}
