package blob_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"iter"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/agenthost/agenthost/host/blob"
	"github.com/agenthost/agenthost/host/blob/s3test"
	"github.com/agenthost/agenthost/host/figure"
	"github.com/agenthost/agenthost/host/store"
	"github.com/agenthost/agenthost/host/testenv"
)

// chunk is the Postgres backend's chunk size; the range scenarios are cut at
// its multiples on every backend.
const chunk = 1 << 20

// backend is what the conformance suite needs of a blob store.
type backend interface {
	Put(ctx context.Context, r io.Reader, max int64) (string, int64, error)
	Open(ctx context.Context, sha string) (blob.Reader, error)
	Stat(ctx context.Context, sha string) (int64, error)
	Delete(ctx context.Context, sha string) error
	CleanStaging(olderThan time.Duration) (int, error)
	List(ctx context.Context) iter.Seq2[string, error]
}

// fixture is one backend under test plus ways to look behind its API.
type fixture struct {
	b backend
	// stored counts what is stored under sha: files (Dir), objects (S3) or
	// the blobs row and chunk rows (Postgres).
	stored func(t testing.TB, sha string) (blobs, chunks int)
	// total counts every stored blob.
	total func(t testing.TB) int
	// staging lists the leftover staging files (and, on S3, unfinished
	// multipart uploads).
	staging func(t testing.TB) []string
	// pool is the database (Postgres only).
	pool *pgxpool.Pool
	// env passes the backend to a child process (see TestMain).
	env []string
	// inCommit, if set, waits until another process's Put is inside its
	// commit (Postgres: a transaction that has inserted chunks; S3: a
	// multipart upload with a part sent).
	inCommit func(t testing.TB)
}

func newDir(t testing.TB) *fixture {
	root := t.TempDir()
	d, err := blob.NewDir(root)
	if err != nil {
		t.Fatal(err)
	}
	return &fixture{
		b: d,
		stored: func(t testing.TB, sha string) (int, int) {
			p, err := d.Path(sha)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := os.Stat(p); err != nil {
				return 0, 0
			}
			return 1, 0
		},
		total: func(t testing.TB) int {
			n := 0
			err := filepath.WalkDir(root, func(path string, e os.DirEntry, err error) error {
				if err != nil {
					return err
				}
				if e.IsDir() && path == filepath.Join(root, "tmp") {
					return filepath.SkipDir
				}
				if !e.IsDir() {
					n++
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			return n
		},
		staging: func(t testing.TB) []string { return listDir(t, filepath.Join(root, "tmp")) },
		env:     []string{"BLOB_CHILD_BACKEND=dir", "BLOB_CHILD_DIR=" + root},
	}
}

func newPostgres(t testing.TB) *fixture {
	url := testenv.Postgres(t)
	ctx := context.Background()
	db, err := store.Open(ctx, store.Config{URL: url})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if err := db.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	pool := db.Pool()
	staging := t.TempDir()
	count := func(t testing.TB, q string, args ...any) int {
		var n int
		if err := pool.QueryRow(ctx, q, args...).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	return &fixture{
		b: blob.NewPostgres(pool, blob.WithStagingDir(staging)),
		stored: func(t testing.TB, sha string) (int, int) {
			return count(t, `SELECT count(*) FROM blobs WHERE sha256 = $1`, sha),
				count(t, `SELECT count(*) FROM blob_chunks WHERE sha256 = $1`, sha)
		},
		total: func(t testing.TB) int {
			if n := count(t, `SELECT count(*) FROM blob_chunks WHERE sha256 NOT IN (SELECT sha256 FROM blobs)`); n != 0 {
				t.Fatalf("%d orphan chunks", n)
			}
			return count(t, `SELECT count(*) FROM blobs`)
		},
		staging: func(t testing.TB) []string { return listDir(t, staging) },
		pool:    pool,
		inCommit: func(t testing.TB) {
			deadline := time.Now().Add(20 * time.Second)
			for time.Now().Before(deadline) {
				if count(t, `SELECT count(*) FROM pg_stat_activity
					WHERE datname = current_database() AND backend_xid IS NOT NULL
					AND query LIKE 'INSERT INTO blob_chunks%'`) > 0 {
					return
				}
				time.Sleep(time.Millisecond)
			}
			t.Fatal("the child's Put never reached its transaction")
		},
		env: []string{"BLOB_CHILD_BACKEND=postgres", "BLOB_CHILD_URL=" + url, "BLOB_CHILD_DIR=" + staging},
	}
}

// newS3 runs a real S3 server (s3test) for the test, and the store on it.
func newS3(t testing.TB) *fixture {
	srv := s3test.Start(t)
	staging := t.TempDir()
	s, err := blob.NewS3(context.Background(), srv.Config(staging))
	if err != nil {
		t.Fatal(err)
	}
	const prefix = "blobs/"
	return &fixture{
		b: s,
		stored: func(t testing.TB, sha string) (int, int) {
			if srv.Metadata(t, prefix+sha) == nil {
				return 0, 0
			}
			return 1, 0
		},
		total: func(t testing.TB) int { return len(srv.Objects(t, prefix)) },
		staging: func(t testing.TB) []string {
			return append(listDir(t, staging), srv.Uploads(t, prefix)...)
		},
		inCommit: func(t testing.TB) {
			deadline := time.Now().Add(20 * time.Second)
			for time.Now().Before(deadline) {
				for _, r := range srv.Requests() {
					if r.Method == "PUT" && r.Query.Has("uploadId") {
						return
					}
				}
				time.Sleep(time.Millisecond)
			}
			t.Fatal("the child's Put never sent a part")
		},
		env: []string{"BLOB_CHILD_BACKEND=s3", "BLOB_CHILD_URL=" + srv.URL, "BLOB_CHILD_DIR=" + staging},
	}
}

var backends = []struct {
	name string
	new  func(testing.TB) *fixture
}{{"dir", newDir}, {"postgres", newPostgres}, {"s3", newS3}}

func listDir(t testing.TB, dir string) []string {
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	return names
}

// data returns n deterministic pseudo-random bytes.
func data(seed uint64, n int) []byte {
	b := make([]byte, n)
	rand.NewChaCha8([32]byte{byte(seed), byte(seed >> 8), byte(seed >> 16)}).Read(b)
	return b
}

func shaOf(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

func put(t testing.TB, b backend, content []byte) string {
	t.Helper()
	sha, size, err := b.Put(context.Background(), bytes.NewReader(content), blob.NoLimit)
	if err != nil {
		t.Fatal(err)
	}
	if sha != shaOf(content) || size != int64(len(content)) {
		t.Fatalf("Put = %s, %d; want %s, %d", sha, size, shaOf(content), len(content))
	}
	return sha
}

func readAll(t testing.TB, b backend, sha string) []byte {
	t.Helper()
	r, err := b.Open(context.Background(), sha)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	got, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	if int64(len(got)) != r.Size() {
		t.Fatalf("read %d bytes, Size() = %d", len(got), r.Size())
	}
	return got
}

// nothingStored fails unless no blob and no staging file exist.
func nothingStored(t testing.TB, f *fixture) {
	t.Helper()
	if n := f.total(t); n != 0 {
		t.Errorf("%d blobs stored, want none", n)
	}
	if s := f.staging(t); len(s) != 0 {
		t.Errorf("staging files left: %v", s)
	}
}

// failingReader yields data, then fails with err (after calling before, if set).
type failingReader struct {
	data   []byte
	err    error
	before func()
}

func (r *failingReader) Read(p []byte) (int, error) {
	if len(r.data) == 0 {
		if r.before != nil {
			r.before()
		}
		return 0, r.err
	}
	n := copy(p, r.data)
	r.data = r.data[n:]
	return n, nil
}

// endless yields bytes forever.
type endless struct{}

func (endless) Read(p []byte) (int, error) { return len(p), nil }

var errBroken = errors.New("connection reset by test")

// TestConformance runs every scenario against both backends.
func TestConformance(t *testing.T) {
	scenarios := []struct {
		name string
		run  func(t *testing.T, f *fixture)
	}{
		{"RoundTrip", func(t *testing.T, f *fixture) {
			for _, n := range []int{0, 1, 4096, chunk - 1, chunk, chunk + 1, 2*chunk + chunk/2} {
				content := data(uint64(n), n)
				sha := put(t, f.b, content)
				if size, err := f.b.Stat(context.Background(), sha); err != nil || size != int64(n) {
					t.Fatalf("Stat(%d bytes) = %d, %v", n, size, err)
				}
				if got := readAll(t, f.b, sha); !bytes.Equal(got, content) {
					t.Fatalf("%d bytes: content differs", n)
				}
				if _, chunks := f.stored(t, sha); f.pool != nil && chunks != (n+chunk-1)/chunk {
					t.Fatalf("%d bytes in %d chunks", n, chunks)
				}
			}
		}},
		{"Ranges", func(t *testing.T, f *fixture) {
			content := data(7, 2*chunk+chunk/2+3)
			size := int64(len(content))
			sha := put(t, f.b, content)
			r, err := f.b.Open(context.Background(), sha)
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			if r.Size() != size {
				t.Fatalf("Size() = %d, want %d", r.Size(), size)
			}
			for _, c := range []struct {
				off  int64
				n    int
				want int  // bytes read
				eof  bool // io.EOF required (a full read at the end may say either)
			}{
				{0, 10, 10, false},
				{chunk - 5, 10, 10, false},                                   // across the first boundary
				{chunk - 1, 1, 1, false},                                     // last byte of a chunk
				{chunk, 1, 1, false},                                         // first byte of a chunk
				{chunk, chunk, chunk, false},                                 // exactly one chunk
				{0, 2 * chunk, 2 * chunk, false},                             // exactly two chunks
				{chunk / 2, 2 * chunk, 2 * chunk, false},                     // three chunks, partly
				{2 * chunk, int(size - 2*chunk), int(size - 2*chunk), false}, // the last, partial chunk
				{size - 3, 10, 3, true},                                      // short read at the end
				{0, int(size) + 1, int(size), true},                          // all and one more
				{size, 1, 0, true},                                           // at the end
				{size + 100, 1, 0, true},                                     // past the end
				{5, 0, 0, false},                                             // empty read
			} {
				p := make([]byte, c.n)
				n, err := r.ReadAt(p, c.off)
				if n != c.want {
					t.Fatalf("ReadAt(%d bytes at %d) = %d, %v; want %d bytes", c.n, c.off, n, err, c.want)
				}
				if c.eof && err != io.EOF || !c.eof && err != nil && !(err == io.EOF && c.off+int64(n) == size) {
					t.Fatalf("ReadAt(%d bytes at %d) error = %v, want EOF %v", c.n, c.off, err, c.eof)
				}
				if n > 0 && !bytes.Equal(p[:n], content[c.off:c.off+int64(n)]) {
					t.Fatalf("ReadAt(%d bytes at %d): wrong bytes", c.n, c.off)
				}
			}
			if _, err := r.ReadAt(make([]byte, 1), -1); err == nil {
				t.Fatal("ReadAt at -1 succeeded")
			}

			// Seek and Read.
			for _, c := range []struct {
				off    int64
				whence int
				at     int64
			}{{chunk - 2, io.SeekStart, chunk - 2}, {1, io.SeekCurrent, chunk + 3}, {-3, io.SeekEnd, size - 3}} {
				at, err := r.Seek(c.off, c.whence)
				if err != nil || at != c.at {
					t.Fatalf("Seek(%d, %d) = %d, %v; want %d", c.off, c.whence, at, err, c.at)
				}
				p := make([]byte, 4)
				n, err := io.ReadFull(r, p)
				want := min(4, int(size-at))
				if n != want || !bytes.Equal(p[:n], content[at:at+int64(n)]) {
					t.Fatalf("Read after Seek to %d: %d bytes, %v", at, n, err)
				}
			}
			if n, err := r.Read(make([]byte, 1)); n != 0 || err != io.EOF {
				t.Fatalf("Read at the end = %d, %v; want 0, EOF", n, err)
			}
			if _, err := r.Seek(size+10, io.SeekStart); err != nil {
				t.Fatal(err)
			}
			if n, err := r.Read(make([]byte, 1)); n != 0 || err != io.EOF {
				t.Fatalf("Read past the end = %d, %v; want 0, EOF", n, err)
			}
			if _, err := r.Seek(-1, io.SeekStart); err == nil {
				t.Fatal("Seek to -1 succeeded")
			}
			// Sequential reading with a small buffer, from a boundary onwards.
			if _, err := r.Seek(chunk, io.SeekStart); err != nil {
				t.Fatal(err)
			}
			var got bytes.Buffer
			if _, err := io.CopyBuffer(&got, struct{ io.Reader }{r}, make([]byte, 1000)); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got.Bytes(), content[chunk:]) {
				t.Fatal("sequential read from a boundary: wrong bytes")
			}

			// Concurrent ReadAt, as io.ReaderAt allows.
			var wg sync.WaitGroup
			errs := make(chan error, 16)
			for i := range 16 {
				wg.Go(func() {
					off := int64(i) * (size / 16)
					p := make([]byte, 70000)
					n, err := r.ReadAt(p, off)
					if err != nil && err != io.EOF || !bytes.Equal(p[:n], content[off:off+int64(n)]) {
						errs <- fmt.Errorf("concurrent ReadAt at %d: %d, %v", off, n, err)
					}
				})
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Fatal(err)
			}
		}},
		{"Empty", func(t *testing.T, f *fixture) {
			sha := put(t, f.b, nil)
			if sha != "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855" {
				t.Fatalf("empty sha = %s", sha)
			}
			r, err := f.b.Open(context.Background(), sha)
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			if r.Size() != 0 {
				t.Fatalf("Size() = %d", r.Size())
			}
			if n, err := r.ReadAt(make([]byte, 1), 0); n != 0 || err != io.EOF {
				t.Fatalf("ReadAt = %d, %v; want 0, EOF", n, err)
			}
			if n, err := r.Read(make([]byte, 1)); n != 0 || err != io.EOF {
				t.Fatalf("Read = %d, %v; want 0, EOF", n, err)
			}
			if blobs, chunks := f.stored(t, sha); blobs != 1 || chunks != 0 {
				t.Fatalf("stored %d blobs, %d chunks", blobs, chunks)
			}
		}},
		{"Idempotent", func(t *testing.T, f *fixture) {
			content := data(3, chunk+10)
			a, b := put(t, f.b, content), put(t, f.b, content)
			if a != b {
				t.Fatalf("two shas for the same bytes: %s, %s", a, b)
			}
			if n := f.total(t); n != 1 {
				t.Fatalf("%d blobs stored", n)
			}
			if !bytes.Equal(readAll(t, f.b, a), content) {
				t.Fatal("content differs")
			}
		}},
		{"ConcurrentSameBytes", func(t *testing.T, f *fixture) {
			content := data(11, 2*chunk+chunk/2)
			const n = 100
			shas := make([]string, n)
			errs := make([]error, n)
			start := make(chan struct{})
			var wg sync.WaitGroup
			for i := range n {
				wg.Go(func() {
					<-start
					shas[i], _, errs[i] = f.b.Put(context.Background(), bytes.NewReader(content), blob.NoLimit)
				})
			}
			close(start)
			wg.Wait()
			for i := range n {
				if errs[i] != nil {
					t.Fatalf("Put %d: %v", i, errs[i])
				}
				if shas[i] != shaOf(content) {
					t.Fatalf("Put %d returned %s", i, shas[i])
				}
			}
			blobs, chunks := f.stored(t, shaOf(content))
			if blobs != 1 || f.pool != nil && chunks != 3 {
				t.Fatalf("stored %d blobs, %d chunks; want 1, 3", blobs, chunks)
			}
			if total := f.total(t); total != 1 {
				t.Fatalf("%d blobs in all", total)
			}
			if s := f.staging(t); len(s) != 0 {
				t.Fatalf("staging files left: %v", s)
			}
			if !bytes.Equal(readAll(t, f.b, shaOf(content)), content) {
				t.Fatal("content differs")
			}
		}},
		{"TooLarge", func(t *testing.T, f *fixture) {
			ctx := context.Background()
			content := data(5, 1001)
			_, _, err := f.b.Put(ctx, bytes.NewReader(content), 1000)
			if !errors.Is(err, blob.ErrTooLarge) || !strings.Contains(err.Error(), "1000 bytes") {
				t.Fatalf("Put of 1001 bytes, max 1000: %v; want ErrTooLarge naming the limit", err)
			}
			if _, err := f.b.Stat(ctx, shaOf(content)); !errors.Is(err, blob.ErrNotFound) {
				t.Fatalf("Stat after a refused Put: %v", err)
			}
			// Several chunks over, and an input that never ends: refused as
			// soon as the limit is passed.
			if _, _, err := f.b.Put(ctx, bytes.NewReader(data(6, 3*chunk)), chunk); !errors.Is(err, blob.ErrTooLarge) {
				t.Fatalf("Put of 3 MiB, max 1 MiB: %v", err)
			}
			if _, _, err := f.b.Put(ctx, endless{}, 10*chunk); !errors.Is(err, blob.ErrTooLarge) {
				t.Fatalf("Put of an endless input: %v", err)
			}
			nothingStored(t, f)
			// Exactly the limit is allowed.
			if sha, _, err := f.b.Put(ctx, bytes.NewReader(content[:1000]), 1000); err != nil || sha != shaOf(content[:1000]) {
				t.Fatalf("Put of 1000 bytes, max 1000: %s, %v", sha, err)
			}
			if _, _, err := f.b.Put(ctx, bytes.NewReader(nil), 0); err != nil {
				t.Fatalf("Put of nothing, max 0: %v", err)
			}
		}},
		{"ReaderError", func(t *testing.T, f *fixture) {
			r := &failingReader{data: data(8, chunk+chunk/2), err: errBroken}
			if _, _, err := f.b.Put(context.Background(), r, blob.NoLimit); !errors.Is(err, errBroken) {
				t.Fatalf("Put from a failing reader: %v", err)
			}
			nothingStored(t, f)
		}},
		{"Cancelled", func(t *testing.T, f *fixture) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			// The reader cancels after 1.5 MiB and would go on.
			r := io.MultiReader(&failingReader{data: data(9, chunk+chunk/2), err: io.EOF, before: cancel}, endless{})
			if _, _, err := f.b.Put(ctx, r, blob.NoLimit); !errors.Is(err, context.Canceled) {
				t.Fatalf("Put cancelled mid-stream: %v", err)
			}
			// Cancelled after the last byte, before the blob is committed.
			ctx, cancel = context.WithCancel(context.Background())
			defer cancel()
			r = &failingReader{data: data(10, chunk), err: io.EOF, before: cancel}
			if _, _, err := f.b.Put(ctx, r, blob.NoLimit); !errors.Is(err, context.Canceled) {
				t.Fatalf("Put cancelled at the end: %v", err)
			}
			nothingStored(t, f)
		}},
		{"InvalidSHA", func(t *testing.T, f *fixture) {
			ctx := context.Background()
			valid := put(t, f.b, []byte("x"))
			for _, sha := range []string{
				"",
				"abc",
				valid[:63],
				valid + "0",
				strings.ToUpper(valid),
				"../" + valid[3:],
				"/etc/passwd/" + valid[12:],
				valid[:2] + "/" + valid[3:],
				"..%2f" + valid[5:],
				strings.Repeat("g", 64),
				valid[:63] + "\x00",
				"tmp/" + valid[4:],
			} {
				if _, err := f.b.Open(ctx, sha); !errors.Is(err, blob.ErrInvalidSHA) {
					t.Errorf("Open(%q): %v; want ErrInvalidSHA", sha, err)
				}
				if _, err := f.b.Stat(ctx, sha); !errors.Is(err, blob.ErrInvalidSHA) {
					t.Errorf("Stat(%q): %v; want ErrInvalidSHA", sha, err)
				}
				if err := f.b.Delete(ctx, sha); !errors.Is(err, blob.ErrInvalidSHA) {
					t.Errorf("Delete(%q): %v; want ErrInvalidSHA", sha, err)
				}
			}
			if got := readAll(t, f.b, valid); string(got) != "x" {
				t.Fatal("the valid blob was touched")
			}
		}},
		{"NotFound", func(t *testing.T, f *fixture) {
			ctx := context.Background()
			sha := shaOf([]byte("never stored"))
			if _, err := f.b.Open(ctx, sha); !errors.Is(err, blob.ErrNotFound) {
				t.Fatalf("Open: %v", err)
			}
			if _, err := f.b.Stat(ctx, sha); !errors.Is(err, blob.ErrNotFound) {
				t.Fatalf("Stat: %v", err)
			}
			if err := f.b.Delete(ctx, sha); err != nil {
				t.Fatalf("Delete of a missing blob: %v", err)
			}
		}},
		{"Delete", func(t *testing.T, f *fixture) {
			ctx := context.Background()
			content := data(12, 2*chunk+1)
			sha := put(t, f.b, content)
			keep := put(t, f.b, []byte("keep"))
			if err := f.b.Delete(ctx, sha); err != nil {
				t.Fatal(err)
			}
			if _, err := f.b.Stat(ctx, sha); !errors.Is(err, blob.ErrNotFound) {
				t.Fatalf("Stat after Delete: %v", err)
			}
			if _, err := f.b.Open(ctx, sha); !errors.Is(err, blob.ErrNotFound) {
				t.Fatalf("Open after Delete: %v", err)
			}
			if blobs, chunks := f.stored(t, sha); blobs != 0 || chunks != 0 {
				t.Fatalf("after Delete: %d blobs, %d chunks", blobs, chunks)
			}
			if err := f.b.Delete(ctx, sha); err != nil {
				t.Fatalf("second Delete: %v", err)
			}
			if string(readAll(t, f.b, keep)) != "keep" {
				t.Fatal("another blob was touched")
			}
			put(t, f.b, content)
			if !bytes.Equal(readAll(t, f.b, sha), content) {
				t.Fatal("Put after Delete: content differs")
			}
		}},
		{"List", func(t *testing.T, f *fixture) {
			ctx := context.Background()
			var want []string
			for i, n := range []int{0, 10, chunk + 1} {
				want = append(want, put(t, f.b, data(uint64(70+i), n)))
			}
			slices.Sort(want)
			// A staging file does not count.
			if _, _, err := f.b.Put(ctx, &failingReader{data: data(73, 100), err: errBroken}, blob.NoLimit); !errors.Is(err, errBroken) {
				t.Fatal(err)
			}
			var got []string
			for sha, err := range f.b.List(ctx) {
				if err != nil {
					t.Fatal(err)
				}
				got = append(got, sha)
			}
			if !slices.Equal(got, want) {
				t.Fatalf("List = %v, want %v", got, want)
			}
			// Stopping early is allowed.
			for range f.b.List(ctx) {
				break
			}
			if err := f.b.Delete(ctx, want[0]); err != nil {
				t.Fatal(err)
			}
			got = got[:0]
			for sha, err := range f.b.List(ctx) {
				if err != nil {
					t.Fatal(err)
				}
				got = append(got, sha)
			}
			if !slices.Equal(got, want[1:]) {
				t.Fatalf("List after Delete = %v, want %v", got, want[1:])
			}
		}},
		{"Closed", func(t *testing.T, f *fixture) {
			sha := put(t, f.b, data(13, 100))
			r, err := f.b.Open(context.Background(), sha)
			if err != nil {
				t.Fatal(err)
			}
			if err := r.Close(); err != nil {
				t.Fatal(err)
			}
			if _, err := r.ReadAt(make([]byte, 1), 0); err == nil {
				t.Fatal("ReadAt after Close succeeded")
			}
			if _, err := r.Read(make([]byte, 1)); err == nil {
				t.Fatal("Read after Close succeeded")
			}
		}},
	}
	for _, be := range backends {
		t.Run(be.name, func(t *testing.T) {
			for _, s := range scenarios {
				t.Run(s.name, func(t *testing.T) { s.run(t, be.new(t)) })
			}
		})
	}
}

// TestPostgresReadsOnlyCoveringChunks removes every chunk but one behind the
// backend's back: reads within that chunk must still succeed, which they
// could not if they fetched anything else.
func TestPostgresReadsOnlyCoveringChunks(t *testing.T) {
	f := newPostgres(t)
	ctx := context.Background()
	content := data(21, 4*chunk+100)
	sha := put(t, f.b, content)
	if _, err := f.pool.Exec(ctx, `DELETE FROM blob_chunks WHERE sha256 = $1 AND seq <> 2`, sha); err != nil {
		t.Fatal(err)
	}
	r, err := f.b.Open(ctx, sha)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for _, c := range []struct {
		off int64
		n   int
	}{{2 * chunk, chunk}, {2*chunk + 7, 100}, {3*chunk - 1, 1}} {
		p := make([]byte, c.n)
		if n, err := r.ReadAt(p, c.off); err != nil || n != c.n || !bytes.Equal(p, content[c.off:c.off+int64(n)]) {
			t.Fatalf("ReadAt(%d at %d) = %d, %v", c.n, c.off, n, err)
		}
	}
	if _, err := r.Seek(2*chunk+chunk/2, io.SeekStart); err != nil {
		t.Fatal(err)
	}
	p := make([]byte, 1000)
	if _, err := io.ReadFull(r, p); err != nil || !bytes.Equal(p, content[2*chunk+chunk/2:][:1000]) {
		t.Fatalf("Seek+Read in the kept chunk: %v", err)
	}
	// A read touching a removed chunk fails, and says so.
	if _, err := r.ReadAt(make([]byte, 2), 2*chunk-1); !errors.Is(err, blob.ErrNotFound) {
		t.Fatalf("ReadAt across a missing chunk: %v", err)
	}
}

// TestPostgresStagingFolderMissing: a fresh host's staging folder (inside a
// data directory nothing else on PostgreSQL writes to) does not exist yet, and
// a temporary folder's cleaner may remove it later; a Put creates it.
func TestPostgresStagingFolderMissing(t *testing.T) {
	f := newPostgres(t)
	pool := f.pool
	staging := filepath.Join(t.TempDir(), "data", "staging")
	b := blob.NewPostgres(pool, blob.WithStagingDir(staging))
	if n, err := b.CleanStaging(0); err != nil || n != 0 {
		t.Fatalf("CleanStaging of a folder never made = %d, %v", n, err)
	}
	for i := 0; i < 2; i++ {
		content := data(uint64(40+i), chunk+10)
		sha := put(t, b, content)
		if got := readAll(t, b, sha); !bytes.Equal(got, content) {
			t.Fatalf("put %d: read back %d bytes, want %d", i, len(got), len(content))
		}
		if s := listDir(t, staging); len(s) != 0 {
			t.Fatalf("staging files left: %v", s)
		}
		// The second Put finds the folder removed under it.
		if err := os.RemoveAll(staging); err != nil {
			t.Fatal(err)
		}
	}
}

// TestMain re-executes this binary as the child of the crash and memory tests
// when BLOB_CHILD is set; otherwise it runs the tests (with the test servers).
func TestMain(m *testing.M) {
	if mode := os.Getenv("BLOB_CHILD"); mode != "" {
		if err := child(mode); err != nil {
			fmt.Fprintln(os.Stderr, "child:", err)
			os.Exit(2)
		}
		os.Exit(0)
	}
	os.Exit(testenv.Main(m))
}

// childBackend opens the backend the parent described in the environment.
func childBackend(ctx context.Context) (backend, error) {
	switch os.Getenv("BLOB_CHILD_BACKEND") {
	case "dir":
		return blob.NewDir(os.Getenv("BLOB_CHILD_DIR"))
	case "postgres":
		pool, err := pgxpool.New(ctx, os.Getenv("BLOB_CHILD_URL"))
		if err != nil {
			return nil, err
		}
		return blob.NewPostgres(pool, blob.WithStagingDir(os.Getenv("BLOB_CHILD_DIR"))), nil
	case "s3":
		cfg := blob.S3Config{Endpoint: os.Getenv("BLOB_CHILD_URL"), Region: "us-east-1", Bucket: s3test.Bucket,
			Prefix: "blobs/", PathStyle: true, AccessKeyID: s3test.AccessKeyID, SecretAccessKey: s3test.SecretAccessKey,
			StagingDir: os.Getenv("BLOB_CHILD_DIR")}
		return blob.NewS3(ctx, cfg)
	}
	return nil, errors.New("no backend")
}

// The child's inputs: crashSlow is sent half, then the input stalls;
// crashCommit is sent whole, fast, and the parent kills the child when the
// input ends, while the backend is committing.
const (
	crashSlowSize   = 4 * chunk
	crashCommitSize = 64 * chunk
	rssSize         = 100 << 20
)

// signalReader yields data and prints at on stdout when it has yielded half
// (at == "HALF") or all of it ("END"); with stall it then blocks for ever.
type signalReader struct {
	data  []byte
	sent  int
	stall bool
}

func (r *signalReader) Read(p []byte) (int, error) {
	half := len(r.data) / 2
	if r.stall && r.sent >= half {
		fmt.Println("HALF")
		select {} // the parent kills us here
	}
	limit := len(r.data)
	if r.stall {
		limit = half
	}
	n := copy(p, r.data[r.sent:limit])
	r.sent += n
	if r.sent == len(r.data) {
		fmt.Println("END")
		return n, io.EOF
	}
	return n, nil
}

func child(mode string) error {
	ctx := context.Background()
	b, err := childBackend(ctx)
	if err != nil {
		return err
	}
	switch mode {
	case "slow":
		_, _, err = b.Put(ctx, &signalReader{data: data(31, crashSlowSize), stall: true}, blob.NoLimit)
	case "commit":
		_, _, err = b.Put(ctx, &signalReader{data: data(32, crashCommitSize)}, blob.NoLimit)
	case "rss":
		_, _, err = b.Put(ctx, io.LimitReader(rand.NewChaCha8([32]byte{33}), rssSize), blob.NoLimit)
		if err == nil {
			fmt.Println("HWM", peakRSS())
		}
	default:
		err = fmt.Errorf("unknown mode %q", mode)
	}
	return err
}

// peakRSS is the process's peak resident set in bytes (Linux), or -1.
func peakRSS() int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return -1
	}
	for line := range strings.Lines(string(b)) {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			if err != nil {
				return -1
			}
			return kb << 10
		}
	}
	return -1
}

// runChild starts this binary in mode, waits for the line signal on its
// stdout (and then for wait, if set), kills it with SIGKILL, and returns. With
// signal "" it waits for it to exit and returns its output.
func runChild(t *testing.T, f *fixture, mode, signal string, wait func(testing.TB)) string {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), append([]string{"BLOB_CHILD=" + mode}, f.env...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var lines []string
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		lines = append(lines, sc.Text())
		if signal != "" && sc.Text() == signal {
			if wait != nil {
				wait(t)
			}
			if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			break
		}
	}
	err = cmd.Wait()
	if signal == "" {
		if err != nil {
			t.Fatalf("child %s: %v\n%s", mode, err, stderr.String())
		}
		return strings.Join(lines, "\n")
	}
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Fatalf("child %s was not killed mid-Put: %v (output %q)\n%s", mode, err, lines, stderr.String())
	}
	return strings.Join(lines, "\n")
}

// TestKilledPut kills a process mid-Put with SIGKILL and checks that nothing
// of its upload is visible, and that its staging file can be cleaned.
func TestKilledPut(t *testing.T) {
	for _, be := range backends {
		t.Run(be.name, func(t *testing.T) {
			ctx := context.Background()
			f := be.new(t)

			// Killed while the input streams in.
			runChild(t, f, "slow", "HALF", nil)
			sha := shaOf(data(31, crashSlowSize))
			if _, err := f.b.Open(ctx, sha); !errors.Is(err, blob.ErrNotFound) {
				t.Fatalf("Open after a killed Put: %v; want ErrNotFound", err)
			}
			if n := f.total(t); n != 0 {
				t.Fatalf("%d blobs visible after a killed Put", n)
			}
			left := f.staging(t)
			if len(left) != 1 {
				t.Fatalf("staging after a killed Put: %v; want its one file", left)
			}
			// A recent staging file may belong to a live upload: kept.
			if n, err := f.b.CleanStaging(time.Hour); err != nil || n != 0 {
				t.Fatalf("CleanStaging(1h) = %d, %v; want 0", n, err)
			}
			if n, err := f.b.CleanStaging(0); err != nil || n != 1 {
				t.Fatalf("CleanStaging(0) = %d, %v; want 1", n, err)
			}
			if s := f.staging(t); len(s) != 0 {
				t.Fatalf("staging after CleanStaging: %v", s)
			}

			// Killed when the input has ended: while the file is synced and
			// renamed (Dir), inside the transaction, with chunks inserted
			// (Postgres), or with a part of the multipart upload sent (S3). The blob is then either absent or whole, never
			// partial; absent is expected, whole means the commit won the race.
			runChild(t, f, "commit", "END", f.inCommit)
			content := data(32, crashCommitSize)
			sha = shaOf(content)
			blobs, chunks := f.stored(t, sha)
			r, err := f.b.Open(ctx, sha)
			switch {
			case errors.Is(err, blob.ErrNotFound):
				t.Logf("killed before the commit (%d blobs, %d chunks)", blobs, chunks)
				if blobs != 0 || chunks != 0 {
					t.Fatalf("not found, but %d blobs and %d chunks stored", blobs, chunks)
				}
			case err == nil:
				t.Logf("killed after the commit")
				r.Close()
				if !bytes.Equal(readAll(t, f.b, sha), content) {
					t.Fatal("a killed Put left a partial blob")
				}
			default:
				t.Fatal(err)
			}
			if _, err := f.b.CleanStaging(0); err != nil {
				t.Fatal(err)
			}
			// What the killed process did not store can be stored now.
			put(t, f.b, content)
		})
	}
}

// TestPutMemory puts 100 MiB in a fresh process and checks its peak RSS:
// Put streams, so it stays far below the size of the upload.
func TestPutMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("puts 100 MiB")
	}
	const limit = 60 << 20
	for _, be := range backends {
		t.Run(be.name, func(t *testing.T) {
			f := be.new(t)
			out := runChild(t, f, "rss", "", nil)
			hwm, err := strconv.ParseInt(strings.TrimPrefix(out, "HWM "), 10, 64)
			if err != nil || hwm <= 0 {
				t.Fatalf("child output %q", out)
			}
			t.Logf("peak RSS of a process putting 100 MiB: %.1f MiB", float64(hwm)/(1<<20))
			if hwm > limit && !raceEnabled() {
				t.Fatalf("peak RSS %d MiB > %d MiB", hwm>>20, limit>>20)
			}
			if n := f.total(t); n != 1 {
				t.Fatalf("%d blobs stored", n)
			}
		})
	}
}

// raceEnabled reports whether this binary was built with -race, whose shadow
// memory makes peak RSS say nothing about Put.
func raceEnabled() bool {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return false
	}
	for _, s := range bi.Settings {
		if s.Key == "-race" {
			return s.Value == "true"
		}
	}
	return false
}

// BenchmarkBlobPut measures Put of 100 MiB of random bytes into each backend,
// the median of 3 runs, each of different bytes (so none is deduplicated).
// It ignores b.N and prints FIGURE lines.
func BenchmarkBlobPut(b *testing.B) {
	const size = 100 << 20
	content := data(41, size)
	for _, be := range backends {
		f := be.new(b)
		var mbps []float64
		for i := range 3 {
			content[0], content[1] = byte(i), byte(i>>8)
			t0 := time.Now()
			sha, _, err := f.b.Put(context.Background(), bytes.NewReader(content), blob.NoLimit)
			d := time.Since(t0)
			if err != nil {
				b.Fatal(err)
			}
			mbps = append(mbps, size/1e6/d.Seconds())
			if err := f.b.Delete(context.Background(), sha); err != nil {
				b.Fatal(err)
			}
		}
		figure.Report("blob."+be.name+".put.100MiB", figure.Median(mbps), "MB/s")
	}
}
