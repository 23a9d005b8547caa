package blob

import (
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
	"github.com/minio/minio-go/v7/pkg/encrypt"
)

// Encryption values of S3Config.Encryption.
const (
	// SSENone sends no encryption header: the bucket's default applies (on
	// AWS S3 every new object is encrypted with SSE-S3 at least).
	SSENone = "none"
	// SSES3 asks for server-side encryption with keys the service manages
	// (x-amz-server-side-encryption: AES256).
	SSES3 = "sse-s3"
	// SSEKMS asks for server-side encryption with a KMS key
	// (x-amz-server-side-encryption: aws:kms), S3Config.KMSKeyID or the
	// account's default KMS key.
	SSEKMS = "sse-kms"
)

// Defaults and bounds of S3Config.
const (
	// DefaultS3PartSize is the part size of multipart uploads: S3 allows
	// 10,000 parts, so 16 MiB parts carry objects up to 156 GiB, and four in
	// flight hold no memory (parts are read from the staging file).
	DefaultS3PartSize int64 = 16 << 20
	// MinS3PartSize and MaxS3PartSize are S3's limits for every part but the
	// last.
	MinS3PartSize int64 = 5 << 20
	MaxS3PartSize int64 = 5 << 30
	// DefaultS3Concurrency is how many parts of one upload are sent at once.
	DefaultS3Concurrency = 4
	// DefaultS3Endpoint is AWS S3 (the region picks the regional host).
	DefaultS3Endpoint = "https://s3.amazonaws.com"
	// defaultS3Retries is how often a failed request is retried (with
	// jittered backoff) before the error reaches the caller: enough for S3's
	// occasional 503 SlowDown, short enough that a server that is gone is
	// reported within seconds.
	defaultS3Retries = 3
)

// s3StagingPrefix names S3 staging files, which may share a folder with
// Postgres', so that CleanStaging can tell ours from others'.
const s3StagingPrefix = "agenthost-blob-s3-put-"

// S3Config says where and how blobs are kept in an S3-compatible bucket.
// Its String and LogValue leave out the credentials.
type S3Config struct {
	// Endpoint is the service's URL, scheme and host (and port) only:
	// https://s3.eu-central-2.amazonaws.com, http://minio.internal:9000,
	// https://ACCOUNT.r2.cloudflarestorage.com. Empty: DefaultS3Endpoint.
	Endpoint string
	// Region signs requests (us-east-1 for most S3-compatible servers;
	// auto for R2). Empty: asked of the server.
	Region string
	// Bucket must exist; NewS3 checks that it does.
	Bucket string
	// Prefix starts every key (agenthost/blobs/); a "/" is added when it
	// has none at its end, so that several hosts or installations can share
	// one bucket, each under its own prefix.
	Prefix string
	// PathStyle addresses the bucket in the path (endpoint/bucket/key)
	// instead of the host name (bucket.endpoint/key): MinIO, Ceph and most
	// servers behind one host name need it.
	PathStyle bool
	// AccessKeyID and SecretAccessKey (and SessionToken for temporary
	// credentials) sign requests. Without them the AWS chain is used: the
	// AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY variables, then
	// ~/.aws/credentials, then the instance's or task's role.
	AccessKeyID, SecretAccessKey, SessionToken string
	// Encryption is SSENone (or empty), SSES3 or SSEKMS; KMSKeyID (an id or
	// ARN) only with SSEKMS.
	Encryption, KMSKeyID string
	// PartSize is the size of multipart uploads' parts, and the size above
	// which an upload is multipart (default DefaultS3PartSize).
	PartSize int64
	// Concurrency is how many parts of one upload are in flight (default
	// DefaultS3Concurrency).
	Concurrency int
	// StagingDir is the local folder uploads are staged in while they are
	// hashed (default os.TempDir()); it needs room for the largest
	// concurrent uploads.
	StagingDir string
	// Transport carries the requests (default: a clone of
	// http.DefaultTransport).
	Transport http.RoundTripper
	// MaxRetries is how often a failed request is retried (default 3; 1:
	// never).
	MaxRetries int
}

// String describes the configuration without its credentials.
func (c S3Config) String() string {
	return fmt.Sprintf("s3 %s bucket %s prefix %q region %q path-style %v encryption %s credentials %s",
		c.endpoint(), c.Bucket, c.prefix(), c.Region, c.PathStyle, c.encryption(), c.credentialSource())
}

// LogValue is what slog prints of the configuration: never the credentials.
func (c S3Config) LogValue() slog.Value {
	attrs := []slog.Attr{
		slog.String("endpoint", c.endpoint()),
		slog.String("bucket", c.Bucket),
		slog.String("prefix", c.prefix()),
		slog.String("region", c.Region),
		slog.Bool("pathStyle", c.PathStyle),
		slog.String("encryption", c.encryption()),
		slog.String("credentials", c.credentialSource()),
	}
	if c.KMSKeyID != "" {
		attrs = append(attrs, slog.String("kmsKeyId", c.KMSKeyID))
	}
	return slog.GroupValue(attrs...)
}

func (c S3Config) endpoint() string {
	if c.Endpoint == "" {
		return DefaultS3Endpoint
	}
	return c.Endpoint
}

func (c S3Config) prefix() string {
	if c.Prefix != "" && !strings.HasSuffix(c.Prefix, "/") {
		return c.Prefix + "/"
	}
	return c.Prefix
}

func (c S3Config) encryption() string {
	if c.Encryption == "" {
		return SSENone
	}
	return c.Encryption
}

func (c S3Config) credentialSource() string {
	if c.AccessKeyID != "" {
		return "static (access key " + c.AccessKeyID + ")"
	}
	return "AWS chain (environment, shared file, role)"
}

// S3 stores each blob as one object, PREFIX<sha>, in an S3-compatible bucket,
// so any number of hosts share the blobs without a shared disk. Objects are
// immutable: the key is the content's hash. It is safe for concurrent use,
// also by several processes and hosts sharing the bucket and prefix.
type S3 struct {
	client   *minio.Client
	core     minio.Core
	bucket   string
	prefix   string
	endpoint string
	sse      encrypt.ServerSide // nil: none asked
	partSize int64
	threads  int
	staging  string
}

// NewS3 checks cfg, connects, and makes sure the bucket exists and the
// credentials may see it (one HEAD request under ctx), so that a wrong
// setting stops start-up instead of the first upload.
func NewS3(ctx context.Context, cfg S3Config) (*S3, error) {
	if cfg.Bucket == "" {
		return nil, errors.New("blob: s3 needs a bucket")
	}
	u, err := url.Parse(cfg.endpoint())
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("blob: s3 endpoint %q is not an http(s)://host[:port] URL", cfg.Endpoint)
	}
	if strings.Trim(u.Path, "/") != "" || u.RawQuery != "" || u.User != nil {
		return nil, fmt.Errorf("blob: s3 endpoint %q must be scheme and host only (the bucket is its own setting)", u.Redacted())
	}
	if strings.HasPrefix(cfg.Prefix, "/") {
		return nil, fmt.Errorf("blob: s3 prefix %q must not start with /", cfg.Prefix)
	}
	s := &S3{
		bucket:   cfg.Bucket,
		prefix:   cfg.prefix(),
		endpoint: u.Scheme + "://" + u.Host,
		partSize: cfg.PartSize,
		threads:  cfg.Concurrency,
		staging:  cfg.StagingDir,
	}
	if s.partSize == 0 {
		s.partSize = DefaultS3PartSize
	}
	if s.partSize < MinS3PartSize || s.partSize > MaxS3PartSize {
		return nil, fmt.Errorf("blob: s3 part size %d is outside S3's %d..%d bytes", s.partSize, MinS3PartSize, MaxS3PartSize)
	}
	if s.threads == 0 {
		s.threads = DefaultS3Concurrency
	}
	if s.threads < 1 || s.threads > 64 {
		return nil, fmt.Errorf("blob: s3 concurrency %d is outside 1..64", s.threads)
	}
	if s.staging == "" {
		s.staging = os.TempDir()
	}
	switch cfg.encryption() {
	case SSENone:
		if cfg.KMSKeyID != "" {
			return nil, fmt.Errorf("blob: s3 KMS key id given without encryption %s", SSEKMS)
		}
	case SSES3:
		if cfg.KMSKeyID != "" {
			return nil, fmt.Errorf("blob: s3 KMS key id given with encryption %s; it belongs to %s", SSES3, SSEKMS)
		}
		s.sse = encrypt.NewSSE()
	case SSEKMS:
		if s.sse, err = encrypt.NewSSEKMS(cfg.KMSKeyID, nil); err != nil {
			return nil, fmt.Errorf("blob: s3 encryption: %w", err)
		}
	default:
		return nil, fmt.Errorf("blob: s3 encryption %q is not one of %s, %s, %s", cfg.Encryption, SSENone, SSES3, SSEKMS)
	}
	var creds *credentials.Credentials
	switch {
	case cfg.AccessKeyID != "" && cfg.SecretAccessKey != "":
		creds = credentials.NewStaticV4(cfg.AccessKeyID, cfg.SecretAccessKey, cfg.SessionToken)
	case cfg.AccessKeyID != "" || cfg.SecretAccessKey != "":
		return nil, errors.New("blob: s3 needs both an access key id and a secret access key, or neither (the AWS chain)")
	default:
		creds = credentials.NewChainCredentials([]credentials.Provider{
			&credentials.EnvAWS{},
			&credentials.FileAWSCredentials{},
			&credentials.IAM{},
		})
	}
	transport := cfg.Transport
	if transport == nil {
		transport = http.DefaultTransport.(*http.Transport).Clone()
	}
	retries := cfg.MaxRetries
	if retries == 0 {
		retries = defaultS3Retries
	}
	lookup := minio.BucketLookupAuto
	if cfg.PathStyle {
		lookup = minio.BucketLookupPath
	}
	s.client, err = minio.New(u.Host, &minio.Options{
		Creds:        creds,
		Secure:       u.Scheme == "https",
		Transport:    transport,
		Region:       cfg.Region,
		BucketLookup: lookup,
		MaxRetries:   retries,
	})
	if err != nil {
		return nil, fmt.Errorf("blob: s3 client: %w", err)
	}
	s.core = minio.Core{Client: s.client}
	ok, err := s.client.BucketExists(ctx, s.bucket)
	if err != nil {
		return nil, s.fail("check bucket", "", err)
	}
	if !ok {
		return nil, fmt.Errorf("blob: s3 bucket %q does not exist at %s", s.bucket, s.endpoint)
	}
	return s, nil
}

// Key is the object key of the blob named sha; for diagnostics and for
// operators' tools. The sha is validated.
func (s *S3) Key(sha string) (string, error) {
	if err := checkSHA(sha); err != nil {
		return "", err
	}
	return s.prefix + sha, nil
}

// fail turns a client error into the store's: ErrNotFound for a missing
// object, otherwise the client's error (a cancelled context stays visible
// to errors.Is) wrapped in one naming the operation, the endpoint and the
// bucket, never the credentials, which the client's errors do not carry
// either. A HEAD has no body to tell a missing bucket from a missing key:
// the client, and so the store, says the key is missing.
func (s *S3) fail(op, sha string, err error) error {
	what := op
	if sha != "" {
		what += " " + sha
	}
	switch minio.ToErrorResponse(err).Code {
	case minio.NoSuchKey:
		return fmt.Errorf("blob %s: %w", sha, ErrNotFound)
	case minio.NoSuchBucket:
		return fmt.Errorf("blob: %s: s3 bucket %q does not exist at %s: %w", what, s.bucket, s.endpoint, err)
	}
	return fmt.Errorf("blob: %s: s3 %s bucket %s: %w", what, s.endpoint, s.bucket, err)
}

// Put stores everything r yields, up to max bytes (NoLimit: any length), and
// returns its sha and size. The sha is the key, so the input is first
// streamed to a local staging file (hashing as it goes); if the bucket holds
// the object already nothing is sent, else the file is uploaded: in one PUT
// up to the part size, above it as a multipart upload whose parts are read
// from the file (several in flight, none held in memory). The object becomes
// visible only when S3 has every byte (the PUT or the upload's completion),
// so a failed, cancelled or killed Put leaves nothing visible. A failed or
// cancelled one also aborts its multipart upload (the client does, under a
// context of its own); a killed one leaves it unfinished, for CleanStaging
// (or a lifecycle rule, see docs/storage.md) to abort. Concurrent Puts of
// the same bytes may each upload; the object is the same whichever
// completes last.
// Costs: writing and reading the data once locally, sending it once, one HEAD.
func (s *S3) Put(ctx context.Context, r io.Reader, max int64) (sha string, size int64, err error) {
	f, err := createStagingFile(s.staging, s3StagingPrefix)
	if err != nil {
		return "", 0, err
	}
	defer func() {
		f.Close()
		os.Remove(f.Name())
	}()
	sha, size, err = stage(ctx, f, r, max)
	if err != nil {
		return "", 0, err
	}
	// As for Dir: a cancellation after the last byte still means "abandoned".
	if err := ctx.Err(); err != nil {
		return "", 0, fmt.Errorf("blob: upload stopped: %w", err)
	}
	key := s.prefix + sha
	if info, err := s.client.StatObject(ctx, s.bucket, key, minio.StatObjectOptions{}); err == nil && info.Size == size {
		return sha, size, nil // stored already: the same key means the same bytes
	} else if err != nil && minio.ToErrorResponse(err).Code != minio.NoSuchKey {
		return "", 0, s.upErr(ctx, sha, err)
	}
	info, err := s.client.PutObject(ctx, s.bucket, key, io.NewSectionReader(f, 0, size), size, minio.PutObjectOptions{
		ContentType:          "application/octet-stream",
		ServerSideEncryption: s.sse,
		PartSize:             uint64(s.partSize),
		NumThreads:           uint(s.threads),
		// The payload goes unsigned (UNSIGNED-PAYLOAD), as AWS's own SDKs
		// send it over TLS: the alternative, aws-chunked streaming
		// signatures, is what several S3-compatible servers mishandle.
		DisableContentSha256: true,
	})
	if err != nil {
		return "", 0, s.upErr(ctx, sha, err)
	}
	if info.Size != size {
		return "", 0, fmt.Errorf("blob: store %s: s3 took %d bytes of %d", sha, info.Size, size)
	}
	return sha, size, nil
}

// upErr reports a failed upload, as the context's error when that is why.
func (s *S3) upErr(ctx context.Context, sha string, err error) error {
	if cerr := ctx.Err(); cerr != nil {
		return fmt.Errorf("blob: upload of %s stopped: %w", sha, cerr)
	}
	return s.fail("store", sha, err)
}

// Open returns a Reader on the blob named sha, or an error wrapping
// ErrNotFound. Costs one HEAD; the bytes are fetched as they are read: a
// ReadAt is one ranged GET of exactly its range, and Reads share a GET that
// reads ahead (256 KiB, doubling while the reads stay sequential, up to
// 32 MiB). The Reader's requests run under ctx, so it ends with the request
// that opened it. A Reader opened before a Delete fails with ErrNotFound on
// bytes it has not fetched yet.
func (s *S3) Open(ctx context.Context, sha string) (Reader, error) {
	size, err := s.Stat(ctx, sha)
	if err != nil {
		return nil, err
	}
	return &s3Reader{ctx: ctx, s: s, sha: sha, key: s.prefix + sha, size: size}, nil
}

// Stat returns the size of the blob named sha, or an error wrapping
// ErrNotFound. Costs one HEAD.
func (s *S3) Stat(ctx context.Context, sha string) (int64, error) {
	if err := checkSHA(sha); err != nil {
		return 0, err
	}
	info, err := s.client.StatObject(ctx, s.bucket, s.prefix+sha, minio.StatObjectOptions{})
	if err != nil {
		return 0, s.fail("stat", sha, err)
	}
	return info.Size, nil
}

// Delete removes the blob named sha; a missing blob is not an error. It is
// for the garbage collector, which must make sure nothing refers to the blob
// and no upload of the same bytes is under way (a Put that finds the object
// in place sends nothing and may return just before the Delete).
func (s *S3) Delete(ctx context.Context, sha string) error {
	if err := checkSHA(sha); err != nil {
		return err
	}
	if err := s.client.RemoveObject(ctx, s.bucket, s.prefix+sha, minio.RemoveObjectOptions{}); err != nil {
		if minio.ToErrorResponse(err).Code == minio.NoSuchKey {
			return nil
		}
		return s.fail("delete", sha, err)
	}
	return nil
}

// List yields the sha of every stored blob, in key order, as the bucket
// lists them (1,000 keys a request); keys under the prefix that are not a
// blob's name are skipped. Blobs stored or deleted meanwhile may or may not
// be yielded.
func (s *S3) List(ctx context.Context) iter.Seq2[string, error] {
	return func(yield func(string, error) bool) {
		// Cancelling ends the client's listing goroutine when the caller
		// stops early.
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		for o := range s.client.ListObjects(ctx, s.bucket, minio.ListObjectsOptions{Prefix: s.prefix, Recursive: true}) {
			if o.Err != nil {
				yield("", s.fail("list", "", o.Err))
				return
			}
			sha := strings.TrimPrefix(o.Key, s.prefix)
			if checkSHA(sha) != nil {
				continue
			}
			if !yield(sha, nil) {
				return
			}
		}
	}
}

// cleanTimeout bounds CleanStaging's requests to the bucket.
const cleanTimeout = time.Minute

// CleanStaging removes what processes killed mid-Put left behind and
// returns how many it removed: this package's staging files not written to
// for olderThan, and the unfinished multipart uploads under the prefix
// started more than olderThan ago (their parts cost storage until aborted).
// olderThan must exceed the longest live upload's pause (staging) and
// duration (multipart), as for [Dir.CleanStaging]; an hour suits uploads up
// to the default 1 GiB limit.
func (s *S3) CleanStaging(olderThan time.Duration) (int, error) {
	removed, err := cleanStaging(s.staging, s3StagingPrefix, olderThan)
	if err != nil {
		return removed, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), cleanTimeout)
	defer cancel()
	uploads, err := s.unfinishedUploads(ctx)
	if err != nil {
		return removed, err
	}
	cutoff := time.Now().Add(-olderThan)
	var errs []error
	for _, u := range uploads {
		if u.Initiated.After(cutoff) {
			continue
		}
		if err := s.core.AbortMultipartUpload(ctx, s.bucket, u.Key, u.UploadID); err != nil &&
			minio.ToErrorResponse(err).Code != minio.NoSuchUpload {
			errs = append(errs, s.fail("abort upload of", strings.TrimPrefix(u.Key, s.prefix), err))
			continue
		}
		removed++
	}
	return removed, errors.Join(errs...)
}

// unfinishedUploads lists the multipart uploads under the prefix that were
// neither completed nor aborted.
func (s *S3) unfinishedUploads(ctx context.Context) ([]minio.ObjectMultipartInfo, error) {
	var out []minio.ObjectMultipartInfo
	keyMarker, idMarker := "", ""
	for {
		res, err := s.core.ListMultipartUploads(ctx, s.bucket, s.prefix, keyMarker, idMarker, "", 1000)
		if minio.ToErrorResponse(err).Code == minio.NoSuchUpload {
			// S3 answers an empty list; some servers (gofakes3) answer this for
			// a bucket that never had a multipart upload.
			return out, nil
		}
		if err != nil {
			return nil, s.fail("list unfinished uploads", "", err)
		}
		out = append(out, res.Uploads...)
		if !res.IsTruncated || (res.NextKeyMarker == keyMarker && res.NextUploadIDMarker == idMarker) {
			return out, nil
		}
		keyMarker, idMarker = res.NextKeyMarker, res.NextUploadIDMarker
	}
}

// Read-ahead of s3Reader.Read: the first GET after a Seek (or the first
// Read) asks for minReadAhead; each GET that continues the previous one
// exactly asks for twice as much, up to maxReadAhead. A page's worth of a
// PDF then costs one small GET, and a whole download few large ones.
const (
	minReadAhead = 256 << 10
	maxReadAhead = 32 << 20
)

// s3Reader reads one object with ranged GETs.
type s3Reader struct {
	ctx  context.Context
	s    *S3
	sha  string
	key  string
	size int64

	// Read's state; Read and Seek are not safe for concurrent use.
	off     int64         // of the next Read
	body    io.ReadCloser // the current GET's body, nil when none
	bodyOff int64         // offset of the next byte body yields
	bodyEnd int64         // end (exclusive) of body's range
	ahead   int64         // the current GET's length

	mu     sync.Mutex // guards closed; ReadAt may run concurrently with anything
	closed bool
}

func (r *s3Reader) Size() int64 { return r.size }

func (r *s3Reader) isClosed() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.closed
}

// get starts a GET of [off, end).
func (r *s3Reader) get(off, end int64) (io.ReadCloser, error) {
	var opts minio.GetObjectOptions
	if err := opts.SetRange(off, end-1); err != nil {
		return nil, fmt.Errorf("blob %s: %w", r.sha, err)
	}
	body, _, h, err := r.s.core.GetObject(r.ctx, r.s.bucket, r.key, opts)
	if err != nil {
		return nil, r.s.fail("read", r.sha, err)
	}
	// A server or gateway that ignores Range answers the whole object: its
	// bytes would be read as the range's.
	if want := fmt.Sprintf("bytes %d-%d/", off, end-1); !strings.HasPrefix(h.Get("Content-Range"), want) &&
		(off != 0 || end != r.size || h.Get("Content-Range") != "") {
		body.Close()
		return nil, fmt.Errorf("blob %s: s3 %s answered a GET of %s with Content-Range %q", r.sha, r.s.endpoint, opts.Header().Get("Range"), h.Get("Content-Range"))
	}
	return body, nil
}

// ReadAt fetches exactly [off, off+len(p)) (cut at the end) in one GET.
func (r *s3Reader) ReadAt(p []byte, off int64) (int, error) {
	want, err := readWindow(r.sha, r.isClosed(), r.size, p, off)
	if err != nil || len(want) == 0 {
		return 0, err
	}
	body, err := r.get(off, off+int64(len(want)))
	if err != nil {
		return 0, err
	}
	defer body.Close()
	n, err := io.ReadFull(body, want)
	if err != nil {
		return n, r.readErr(off+int64(n), err)
	}
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

// readErr reports a GET whose body ended early or broke at offset at.
func (r *s3Reader) readErr(at int64, err error) error {
	if cerr := r.ctx.Err(); cerr != nil {
		return fmt.Errorf("blob %s: read at %d: %w", r.sha, at, cerr)
	}
	if errors.Is(err, io.EOF) {
		err = io.ErrUnexpectedEOF // the range was within the object
	}
	return fmt.Errorf("blob %s: read at %d of %d bytes: s3 %s: %w", r.sha, at, r.size, r.s.endpoint, err)
}

// Read reads from the current offset, from the open GET when it continues
// there, else from a new one; at the end it returns 0, io.EOF.
func (r *s3Reader) Read(p []byte) (int, error) {
	if r.isClosed() {
		return 0, fmt.Errorf("blob %s: %w", r.sha, os.ErrClosed)
	}
	if r.off >= r.size {
		return 0, io.EOF
	}
	if len(p) == 0 {
		return 0, nil
	}
	if r.body == nil || r.bodyOff != r.off || r.bodyOff >= r.bodyEnd {
		ahead := int64(minReadAhead)
		if r.body != nil && r.bodyOff == r.off {
			ahead = min(2*r.ahead, maxReadAhead) // sequential: read further ahead
		}
		r.dropBody()
		ahead = max(ahead, int64(len(p)))
		end := min(r.size, r.off+ahead)
		body, err := r.get(r.off, end)
		if err != nil {
			return 0, err
		}
		r.body, r.bodyOff, r.bodyEnd, r.ahead = body, r.off, end, ahead
	}
	want := p[:min(int64(len(p)), r.bodyEnd-r.bodyOff)]
	n, err := r.body.Read(want)
	r.bodyOff += int64(n)
	r.off += int64(n)
	if err != nil && !(errors.Is(err, io.EOF) && r.bodyOff == r.bodyEnd) {
		at := r.bodyOff
		r.dropBody()
		if n > 0 {
			return n, nil // the next Read starts a new GET
		}
		return 0, r.readErr(at, err)
	}
	return n, nil
}

// dropBody closes the current GET, if any.
func (r *s3Reader) dropBody() {
	if r.body != nil {
		r.body.Close()
		r.body = nil
	}
}

// Seek sets the offset of the next Read; it may lie past the end (Reads there
// return io.EOF) but not before the start. It sends nothing: the next Read
// does, unless it continues the open GET.
func (r *s3Reader) Seek(offset int64, whence int) (int64, error) {
	abs, err := seekOffset(r.sha, r.off, r.size, offset, whence)
	if err != nil {
		return 0, err
	}
	r.off = abs
	return abs, nil
}

// Close ends the open GET; later reads fail with os.ErrClosed.
func (r *s3Reader) Close() error {
	r.mu.Lock()
	r.closed = true
	r.mu.Unlock()
	r.dropBody()
	return nil
}
