package blob_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/agenthost/agenthost/host/blob"
	"github.com/agenthost/agenthost/host/blob/s3test"
	"github.com/agenthost/agenthost/host/figure"
)

// newS3Store runs a server and a store on it with cfg's changes applied.
func newS3Store(t testing.TB, change func(*blob.S3Config)) (*s3test.Server, *blob.S3) {
	t.Helper()
	srv := s3test.Start(t)
	cfg := srv.Config(t.TempDir())
	if change != nil {
		change(&cfg)
	}
	s, err := blob.NewS3(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	return srv, s
}

// requestsTo returns the requests for key (path /BUCKET/KEY).
func requestsTo(srv *s3test.Server, key string) []s3test.Request {
	var out []s3test.Request
	for _, r := range srv.Requests() {
		if r.Path == "/"+s3test.Bucket+"/"+key {
			out = append(out, r)
		}
	}
	return out
}

// TestS3Multipart puts more than two parts' worth and checks on the server
// that it arrived as a multipart upload of parts no larger than the part
// size, and reads it back whole.
func TestS3Multipart(t *testing.T) {
	srv, s := newS3Store(t, func(c *blob.S3Config) { c.PartSize = blob.MinS3PartSize; c.Concurrency = 3 })
	content := data(51, int(2*blob.MinS3PartSize)+12345)
	srv.Reset()
	sha := put(t, s, content)
	key, _ := s.Key(sha)
	var initiated, completed bool
	parts := map[string]int64{}
	for _, r := range requestsTo(srv, key) {
		switch {
		case r.Method == "POST" && r.Query.Has("uploads"):
			initiated = true
		case r.Method == "PUT" && r.Query.Has("uploadId"):
			parts[r.Query.Get("partNumber")] = r.ContentLength
		case r.Method == "POST" && r.Query.Has("uploadId"):
			completed = true
		case r.Method == "PUT":
			t.Errorf("a single PUT of %d bytes besides the multipart upload", r.ContentLength)
		}
	}
	if !initiated || !completed {
		t.Fatalf("multipart upload initiated %v, completed %v", initiated, completed)
	}
	want := map[string]int64{"1": blob.MinS3PartSize, "2": blob.MinS3PartSize, "3": 12345}
	if fmt.Sprint(parts) != fmt.Sprint(want) {
		t.Fatalf("parts sent (number: bytes) %v, want %v", parts, want)
	}
	if got := readAll(t, s, sha); !bytes.Equal(got, content) {
		t.Fatal("read back: content differs")
	}
	if u := srv.Uploads(t, ""); len(u) != 0 {
		t.Fatalf("unfinished uploads left: %v", u)
	}
	// Up to the part size it is one PUT.
	srv.Reset()
	small := data(52, int(blob.MinS3PartSize))
	sha = put(t, s, small)
	key, _ = s.Key(sha)
	for _, r := range requestsTo(srv, key) {
		if r.Method == "PUT" && (r.Query.Has("uploadId") || r.ContentLength != blob.MinS3PartSize) {
			t.Fatalf("%d bytes: PUT %v of %d bytes, want one PUT of them all", len(small), r.Query, r.ContentLength)
		}
	}
	// Stored bytes are not sent again.
	srv.Reset()
	put(t, s, content)
	for _, r := range srv.Requests() {
		if r.Method == "PUT" || r.Method == "POST" {
			t.Fatalf("Put of stored bytes sent %s %s", r.Method, r.Path)
		}
	}
}

// TestS3RangeReads reads at odd offsets and lengths: each ReadAt is one GET
// of exactly its range, as the server saw it.
func TestS3RangeReads(t *testing.T) {
	srv, s := newS3Store(t, nil)
	content := data(53, 3<<20+7)
	size := int64(len(content))
	sha := put(t, s, content)
	key, _ := s.Key(sha)
	r, err := s.Open(context.Background(), sha)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for _, c := range []struct {
		off int64
		n   int
	}{{1, 1}, {3, 4093}, {4097, 65537}, {999_999, 1_000_003}, {size - 1, 1}, {size - 10, 9}, {(1 << 20) + 13, 7}} {
		srv.Reset()
		p := make([]byte, c.n)
		n, err := r.ReadAt(p, c.off)
		if err != nil || n != c.n || !bytes.Equal(p, content[c.off:c.off+int64(c.n)]) {
			t.Fatalf("ReadAt(%d at %d) = %d, %v", c.n, c.off, n, err)
		}
		reqs := requestsTo(srv, key)
		want := fmt.Sprintf("bytes=%d-%d", c.off, c.off+int64(c.n)-1)
		if len(reqs) != 1 || reqs[0].Method != "GET" || reqs[0].Header.Get("Range") != want {
			t.Fatalf("ReadAt(%d at %d) sent %d requests (%+v); want one GET with Range %s", c.n, c.off, len(reqs), reqs, want)
		}
	}
	// A read past the end is short, says io.EOF, and asks only for what exists.
	srv.Reset()
	p := make([]byte, 100)
	if n, err := r.ReadAt(p, size-33); n != 33 || err != io.EOF || !bytes.Equal(p[:n], content[size-33:]) {
		t.Fatalf("ReadAt over the end = %d, %v", n, err)
	}
	if reqs := requestsTo(srv, key); len(reqs) != 1 || reqs[0].Header.Get("Range") != fmt.Sprintf("bytes=%d-%d", size-33, size-1) {
		t.Fatalf("ReadAt over the end sent %+v", reqs)
	}

	// Seek and Read at an odd offset: one GET reading ahead, continued by
	// growing GETs while the reads stay sequential.
	srv.Reset()
	const at = 777_777
	if _, err := r.Seek(at, io.SeekStart); err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(struct{ io.Reader }{r})
	if err != nil || !bytes.Equal(got, content[at:]) {
		t.Fatalf("sequential read from %d: %d bytes, %v", at, len(got), err)
	}
	var ranges []string
	for _, q := range requestsTo(srv, key) {
		ranges = append(ranges, q.Header.Get("Range"))
	}
	want := []string{"bytes=777777-1039920", "bytes=1039921-1564208", "bytes=1564209-2612784", "bytes=2612785-3145734"}
	if fmt.Sprint(ranges) != fmt.Sprint(want) {
		t.Fatalf("sequential read's GETs: %v, want %v", ranges, want)
	}
}

// TestS3RangeIgnored: a server that answers a ranged GET with the whole
// object is an error, never the object's first bytes taken for the range's.
func TestS3RangeIgnored(t *testing.T) {
	srv, s := newS3Store(t, nil)
	content := data(58, 100_000)
	sha := put(t, s, content)
	r, err := s.Open(context.Background(), sha)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	srv.IgnoreRange(true)
	if n, err := r.ReadAt(make([]byte, 10), 1000); err == nil || !strings.Contains(err.Error(), "Content-Range") {
		t.Fatalf("ReadAt with the range ignored = %d, %v; want an error about Content-Range", n, err)
	}
	// Reading everything from the start is the same bytes either way.
	if got := readAll(t, s, sha); !bytes.Equal(got, content) {
		t.Fatal("whole read with the range ignored: content differs")
	}
}

// TestS3Missing: an object that is not there, or is deleted under an open
// Reader, is the store's ErrNotFound.
func TestS3Missing(t *testing.T) {
	srv, s := newS3Store(t, nil)
	ctx := context.Background()
	sha := shaOf([]byte("never stored"))
	if _, err := s.Open(ctx, sha); !errors.Is(err, blob.ErrNotFound) {
		t.Fatalf("Open: %v", err)
	}
	if _, err := s.Stat(ctx, sha); !errors.Is(err, blob.ErrNotFound) {
		t.Fatalf("Stat: %v", err)
	}
	content := data(54, 1<<20)
	sha = put(t, s, content)
	r, err := s.Open(ctx, sha)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	key, _ := s.Key(sha)
	if _, err := srv.Backend.DeleteObject(s3test.Bucket, key); err != nil {
		t.Fatal(err)
	}
	if _, err := r.ReadAt(make([]byte, 10), 5); !errors.Is(err, blob.ErrNotFound) {
		t.Fatalf("ReadAt after the object was deleted: %v", err)
	}
	if _, err := r.Read(make([]byte, 10)); !errors.Is(err, blob.ErrNotFound) {
		t.Fatalf("Read after the object was deleted: %v", err)
	}
}

// TestS3ServerGone stops the server: every operation fails with an error
// naming the endpoint and the cause, never ErrNotFound, never the secret,
// and within the retries (a context deadline would hide a hang).
func TestS3ServerGone(t *testing.T) {
	srv, s := newS3Store(t, nil)
	ctx := context.Background()
	content := data(55, 300_000)
	sha := put(t, s, content)
	r, err := s.Open(ctx, sha)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	srv.Close()
	check := func(op string, err error) {
		t.Helper()
		switch {
		case err == nil:
			t.Fatalf("%s with the server gone succeeded", op)
		case errors.Is(err, blob.ErrNotFound):
			t.Fatalf("%s with the server gone: %v; it is not a missing blob", op, err)
		case !strings.Contains(err.Error(), srv.URL) || !strings.Contains(err.Error(), "connection refused"):
			t.Fatalf("%s with the server gone: %q; want the endpoint %s and the cause", op, err, srv.URL)
		case strings.Contains(err.Error(), s3test.SecretAccessKey):
			t.Fatalf("%s: the error carries the secret: %v", op, err)
		}
		t.Logf("%s: %v", op, err)
	}
	_, err = s.Stat(ctx, sha)
	check("Stat", err)
	_, err = s.Open(ctx, sha)
	check("Open", err)
	_, err = r.ReadAt(make([]byte, 10), 100)
	check("ReadAt", err)
	_, err = r.Read(make([]byte, 10))
	check("Read", err)
	_, _, err = s.Put(ctx, bytes.NewReader(data(56, 1000)), blob.NoLimit)
	check("Put", err)
	check("Delete", s.Delete(ctx, sha))
	_, err = s.CleanStaging(time.Hour)
	check("CleanStaging", err)
	_, err = blob.NewS3(ctx, srv.Config(t.TempDir()))
	check("NewS3", err)
}

// TestS3Encryption checks on the server that uploads (single and multipart)
// asked for the configured encryption, and that reads, which S3 refuses
// when they carry SSE-S3 or SSE-KMS headers, did not.
func TestS3Encryption(t *testing.T) {
	const kmsKey = "arn:aws:kms:eu-central-2:111122223333:key/1234abcd-12ab-34cd-56ef-1234567890ab"
	for _, c := range []struct {
		name, encryption, kmsKeyID string
		want, wantKey              string
	}{
		{"none", "", "", "", ""},
		{"sse-s3", blob.SSES3, "", "AES256", ""},
		{"sse-kms with a key", blob.SSEKMS, kmsKey, "aws:kms", kmsKey},
		{"sse-kms, default key", blob.SSEKMS, "", "aws:kms", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv, s := newS3Store(t, func(cfg *blob.S3Config) {
				cfg.Encryption, cfg.KMSKeyID, cfg.PartSize = c.encryption, c.kmsKeyID, blob.MinS3PartSize
			})
			for _, n := range []int{1000, int(blob.MinS3PartSize) + 1} {
				sha := put(t, s, data(uint64(57+n), n))
				key, _ := s.Key(sha)
				meta := srv.Metadata(t, key)
				if got := meta["X-Amz-Server-Side-Encryption"]; got != c.want {
					t.Errorf("%d bytes: x-amz-server-side-encryption %q, want %q", n, got, c.want)
				}
				if got := meta["X-Amz-Server-Side-Encryption-Aws-Kms-Key-Id"]; got != c.wantKey {
					t.Errorf("%d bytes: KMS key id %q, want %q", n, got, c.wantKey)
				}
				readAll(t, s, sha)
				for _, r := range requestsTo(srv, key) {
					if (r.Method == "GET" || r.Method == "HEAD") && r.Header.Get("X-Amz-Server-Side-Encryption") != "" {
						t.Errorf("%s carried an encryption header", r.Method)
					}
				}
			}
		})
	}
}

// TestS3Config: a wrong setting is refused by NewS3, naming it, before any
// upload.
func TestS3Config(t *testing.T) {
	srv := s3test.Start(t)
	for _, c := range []struct {
		name   string
		change func(*blob.S3Config)
		want   string
	}{
		{"no bucket", func(c *blob.S3Config) { c.Bucket = "" }, "needs a bucket"},
		{"missing bucket", func(c *blob.S3Config) { c.Bucket = "no-such-bucket" }, `bucket "no-such-bucket" does not exist`},
		{"endpoint without scheme", func(c *blob.S3Config) { c.Endpoint = "127.0.0.1:9000" }, "is not an http(s)://host[:port] URL"},
		{"endpoint with a path", func(c *blob.S3Config) { c.Endpoint = srv.URL + "/bucket" }, "scheme and host only"},
		{"endpoint with credentials", func(c *blob.S3Config) { c.Endpoint = "http://user:pw@127.0.0.1:1" }, "scheme and host only"},
		{"prefix with a leading slash", func(c *blob.S3Config) { c.Prefix = "/blobs" }, "must not start with /"},
		{"part size too small", func(c *blob.S3Config) { c.PartSize = 1 << 20 }, "outside S3's"},
		{"concurrency", func(c *blob.S3Config) { c.Concurrency = -1 }, "outside 1..64"},
		{"unknown encryption", func(c *blob.S3Config) { c.Encryption = "aes" }, `encryption "aes" is not one of`},
		{"kms key without sse-kms", func(c *blob.S3Config) { c.KMSKeyID = "k" }, "without encryption sse-kms"},
		{"kms key with sse-s3", func(c *blob.S3Config) { c.Encryption, c.KMSKeyID = blob.SSES3, "k" }, "belongs to sse-kms"},
		{"secret without key id", func(c *blob.S3Config) { c.AccessKeyID = "" }, "both an access key id and a secret"},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg := srv.Config(t.TempDir())
			c.change(&cfg)
			_, err := blob.NewS3(context.Background(), cfg)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("NewS3: %v; want %q", err, c.want)
			}
			if strings.Contains(err.Error(), s3test.SecretAccessKey) || strings.Contains(err.Error(), ":pw@") {
				t.Fatalf("the error carries a secret: %v", err)
			}
		})
	}
}

// TestS3ConfigHidesSecrets: what is logged or printed of a configuration
// names the access key id but never the secret or the session token.
func TestS3ConfigHidesSecrets(t *testing.T) {
	cfg := blob.S3Config{Bucket: "b", AccessKeyID: "AKIAVISIBLE", SecretAccessKey: "s3cr3t-value", SessionToken: "t0ken-value",
		Encryption: blob.SSEKMS, KMSKeyID: "key-1"}
	var logged bytes.Buffer
	slog.New(slog.NewTextHandler(&logged, nil)).Info("object storage", "config", cfg)
	for _, out := range []string{logged.String(), cfg.String(), fmt.Sprintf("%v %+v %s", cfg, cfg, cfg)} {
		if strings.Contains(out, "s3cr3t") || strings.Contains(out, "t0ken") {
			t.Fatalf("printed a secret: %s", out)
		}
		if !strings.Contains(out, "AKIAVISIBLE") || !strings.Contains(out, "sse-kms") {
			t.Fatalf("printed too little: %s", out)
		}
	}
}

// TestS3Prefix: stores on one bucket under different prefixes keep apart,
// and a prefix without its "/" gets one.
func TestS3Prefix(t *testing.T) {
	srv := s3test.Start(t)
	ctx := context.Background()
	open := func(prefix string) *blob.S3 {
		cfg := srv.Config(t.TempDir())
		cfg.Prefix = prefix
		s, err := blob.NewS3(ctx, cfg)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	a, b := open("hosts/a"), open("hosts/b/")
	sha := put(t, a, []byte("only in a"))
	if key, _ := a.Key(sha); key != "hosts/a/"+sha {
		t.Fatalf("key %q", key)
	}
	if _, err := b.Stat(ctx, sha); !errors.Is(err, blob.ErrNotFound) {
		t.Fatalf("b sees a's blob: %v", err)
	}
	if got := srv.Objects(t, ""); len(got) != 1 || got[0] != "hosts/a/"+sha {
		t.Fatalf("bucket holds %v", got)
	}
	// A second host with the same settings sees it.
	if got := readAll(t, open("hosts/a/"), sha); string(got) != "only in a" {
		t.Fatalf("a second store on the same prefix read %q", got)
	}
}

// TestS3CleanStagingAbortsUploads: an unfinished multipart upload (what a
// killed process leaves) is aborted once older than the given age; other
// prefixes' uploads are not touched.
func TestS3CleanStagingAbortsUploads(t *testing.T) {
	srv, s := newS3Store(t, nil)
	srv.StartUpload(t, "blobs/"+shaOf([]byte("killed")))
	srv.StartUpload(t, "other/"+shaOf([]byte("not ours")))
	if n, err := s.CleanStaging(time.Hour); err != nil || n != 0 {
		t.Fatalf("CleanStaging(1h) = %d, %v; want 0", n, err)
	}
	if n, err := s.CleanStaging(0); err != nil || n != 1 {
		t.Fatalf("CleanStaging(0) = %d, %v; want 1", n, err)
	}
	if u := srv.Uploads(t, ""); len(u) != 1 || !strings.HasPrefix(u[0], "other/") {
		t.Fatalf("unfinished uploads after CleanStaging: %v", u)
	}
}

// TestS3ClosedEndpointPort: a port nothing listens on is reported at
// NewS3, naming the endpoint (the start-up check).
func TestS3ClosedEndpointPort(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	_, err = blob.NewS3(context.Background(), blob.S3Config{Endpoint: "http://" + addr, Bucket: "b", Region: "us-east-1",
		AccessKeyID: "k", SecretAccessKey: "s", PathStyle: true, MaxRetries: 1})
	if err == nil || !strings.Contains(err.Error(), addr) || !strings.Contains(err.Error(), "check bucket") {
		t.Fatalf("NewS3 on a closed port: %v", err)
	}
}

// BenchmarkS3RangeRead measures ranged reads of 64 KiB (about a page of a
// scanned PDF) at random offsets of a 32 MiB blob on the in-process server,
// through Open and ReadAt as the page preview does: the median of 200.
// It ignores b.N and prints a FIGURE line.
func BenchmarkS3RangeRead(b *testing.B) {
	_, s := newS3Store(b, nil)
	ctx := context.Background()
	const size = 32 << 20
	sha := put(b, s, data(61, size))
	r, err := s.Open(ctx, sha)
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	rng := rand.New(rand.NewPCG(1, 2))
	p := make([]byte, 64<<10)
	var ds []time.Duration
	for range 200 {
		off := rng.Int64N(size - int64(len(p)))
		t0 := time.Now()
		if _, err := r.ReadAt(p, off); err != nil {
			b.Fatal(err)
		}
		ds = append(ds, time.Since(t0))
	}
	figure.Report("blob.s3.range_read.p50.ms", figure.Millis(figure.Percentile(ds, 50)), "ms")
}

// TestS3CancelledMultipart cancels a Put while its parts are being sent:
// it fails with the context's error, and neither an object nor an
// unfinished upload (parts S3 would keep billing) is left.
func TestS3CancelledMultipart(t *testing.T) {
	srv, s := newS3Store(t, func(c *blob.S3Config) { c.PartSize = blob.MinS3PartSize; c.Concurrency = 1 })
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		for ctx.Err() == nil {
			for _, r := range srv.Requests() {
				if r.Method == "PUT" && r.Query.Has("uploadId") {
					cancel()
					return
				}
			}
			time.Sleep(time.Millisecond)
		}
	}()
	content := data(59, int(8*blob.MinS3PartSize))
	if _, _, err := s.Put(ctx, bytes.NewReader(content), blob.NoLimit); !errors.Is(err, context.Canceled) {
		t.Fatalf("Put cancelled mid-upload: %v", err)
	}
	if objs := srv.Objects(t, ""); len(objs) != 0 {
		t.Fatalf("objects after a cancelled Put: %v", objs)
	}
	if u := srv.Uploads(t, ""); len(u) != 0 {
		t.Fatalf("unfinished uploads after a cancelled Put: %v", u)
	}
}
