// Package s3test runs a real S3 server for tests: gofakes3 (an in-process
// implementation of the S3 REST protocol: SigV4-addressed buckets, PUT,
// multipart uploads, ranged GET, HEAD, listing) over HTTP on loopback, with
// its objects in memory, and records the requests it receives so a test can
// check what they carried.
//
// Where gofakes3 deviates from AWS S3, as a test sees it: it accepts any
// signature (it checks none), keeps every x-amz-* header of a PUT or of a
// multipart upload's initiation as object metadata (which is how a test sees
// the encryption headers that reached it) but does not encrypt, and decodes
// aws-chunked bodies only for single PUTs (the store sends plain bodies,
// UNSIGNED-PAYLOAD, as AWS's SDKs do over TLS); and it answers NoSuchUpload
// instead of an empty list when asked for the unfinished multipart uploads
// of a bucket that never had one.
package s3test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"

	"github.com/agenthost/agenthost/host/blob"
)

// Bucket is the bucket every Server has.
const Bucket = "agenthost-test"

// Test credentials: the server accepts any; the store sends these.
const (
	AccessKeyID     = "AKIATESTAGENTHOST"
	SecretAccessKey = "test-secret-access-key-0123456789"
)

// Request is what the server saw of one request.
type Request struct {
	Method string
	Path   string
	Query  url.Values
	Header http.Header
	// ContentLength is the body's declared length (-1: unknown).
	ContentLength int64
}

// Server is a running S3 server.
type Server struct {
	// URL is the endpoint, http://127.0.0.1:PORT.
	URL string
	// Backend holds the objects, for looking behind the protocol.
	Backend *s3mem.Backend

	srv         *httptest.Server
	mu          sync.Mutex
	log         []Request
	ignoreRange bool
}

// Start runs a server with the bucket Bucket until the test ends.
func Start(t testing.TB) *Server {
	t.Helper()
	backend := s3mem.New()
	if err := backend.CreateBucket(Bucket); err != nil {
		t.Fatal(err)
	}
	faker := gofakes3.New(backend, gofakes3.WithLogger(gofakes3.DiscardLog()))
	s := &Server{Backend: backend}
	handler := faker.Server()
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.log = append(s.log, Request{Method: r.Method, Path: r.URL.Path, Query: r.URL.Query(),
			Header: r.Header.Clone(), ContentLength: r.ContentLength})
		if s.ignoreRange {
			r.Header.Del("Range")
		}
		s.mu.Unlock()
		handler.ServeHTTP(w, r)
	}))
	s.URL = s.srv.URL
	t.Cleanup(s.srv.Close)
	return s
}

// Config is a store configuration for this server (path-style, static
// credentials, region us-east-1), staging in staging.
func (s *Server) Config(staging string) blob.S3Config {
	return blob.S3Config{
		Endpoint:        s.URL,
		Region:          "us-east-1",
		Bucket:          Bucket,
		Prefix:          "blobs/",
		PathStyle:       true,
		AccessKeyID:     AccessKeyID,
		SecretAccessKey: SecretAccessKey,
		StagingDir:      staging,
	}
}

// Requests returns the requests received so far, oldest first.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.log...)
}

// IgnoreRange makes the server answer GETs with the whole object whatever
// their Range asks, as some gateways in front of object stores do.
func (s *Server) IgnoreRange(ignore bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ignoreRange = ignore
}

// Reset forgets the requests received so far.
func (s *Server) Reset() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.log = nil
}

// Close stops the server at once: its address refuses connections after.
func (s *Server) Close() {
	s.srv.CloseClientConnections()
	s.srv.Close()
}

// client is a plain client of the server, for looking at it through the
// protocol.
func (s *Server) client(t testing.TB) minio.Core {
	t.Helper()
	c, err := minio.New(strings.TrimPrefix(s.URL, "http://"), &minio.Options{
		Creds:        credentials.NewStaticV4(AccessKeyID, SecretAccessKey, ""),
		Region:       "us-east-1",
		BucketLookup: minio.BucketLookupPath,
	})
	if err != nil {
		t.Fatal(err)
	}
	return minio.Core{Client: c}
}

// Objects lists the keys in the bucket under prefix.
func (s *Server) Objects(t testing.TB, prefix string) []string {
	t.Helper()
	var keys []string
	for o := range s.client(t).Client.ListObjects(context.Background(), Bucket, minio.ListObjectsOptions{Prefix: prefix, Recursive: true}) {
		if o.Err != nil {
			t.Fatal(o.Err)
		}
		keys = append(keys, o.Key)
	}
	return keys
}

// Uploads lists the keys of the unfinished multipart uploads under prefix.
func (s *Server) Uploads(t testing.TB, prefix string) []string {
	t.Helper()
	res, err := s.client(t).ListMultipartUploads(context.Background(), Bucket, prefix, "", "", "", 1000)
	if minio.ToErrorResponse(err).Code == minio.NoSuchUpload {
		return nil // gofakes3's answer for a bucket that never had an upload
	}
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, u := range res.Uploads {
		keys = append(keys, u.Key)
	}
	return keys
}

// StartUpload begins a multipart upload of key and leaves it unfinished, as
// a process killed mid-upload does.
func (s *Server) StartUpload(t testing.TB, key string) {
	t.Helper()
	if _, err := s.client(t).NewMultipartUpload(context.Background(), Bucket, key, minio.PutObjectOptions{}); err != nil {
		t.Fatal(err)
	}
}

// Metadata returns what the server keeps of key's request headers (the
// x-amz-* ones, Content-Type), or nil when there is no such object.
func (s *Server) Metadata(t testing.TB, key string) map[string]string {
	t.Helper()
	obj, err := s.Backend.HeadObject(Bucket, key)
	if gofakes3.HasErrorCode(err, gofakes3.ErrNoSuchKey) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	obj.Contents.Close()
	return obj.Metadata
}
