package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"mime/multipart"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agenthost/agenthost/host/blob"
	"github.com/agenthost/agenthost/host/blob/s3test"
	"github.com/agenthost/agenthost/host/knowledge/kindex"
	"github.com/agenthost/agenthost/host/server"
	"github.com/agenthost/agenthost/host/store"
	"github.com/agenthost/agenthost/host/testenv"
	"github.com/agenthost/agenthost/internal/testpdf"
)

// TestServeObjectStorage runs `serve` with its blobs in a real S3 server
// (s3test, in this process) configured by the objectStorage section, its
// secret in the variable the file names. On SQLite one host uploads over
// HTTP, reads the bytes back, and the file is extracted and found (the
// extractor reads the blob from the bucket); nothing lands in the data
// directory's blob folder. On PostgreSQL two hosts with data directories of
// their own share the database and the bucket: what one stores the other
// serves, and the database holds no blob bytes. The log names the bucket
// and never the secret.
func TestServeObjectStorage(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the server with the built-in plugins")
	}
	const secretVar = "TEST_OBJECT_STORAGE_SECRET"
	for _, db := range []struct {
		name     string
		database func(t *testing.T) string
	}{
		{"sqlite", func(*testing.T) string { return "" }},
		{"postgres", func(t *testing.T) string { return testenv.Postgres(t) }},
	} {
		t.Run(db.name, func(t *testing.T) {
			srv := s3test.Start(t)
			database := db.database(t)
			dir := t.TempDir()
			config := filepath.Join(dir, "agenthost.yaml")
			if err := os.WriteFile(config, []byte(`objectStorage:
  endpoint: `+srv.URL+`
  region: us-east-1
  bucket: `+s3test.Bucket+`
  prefix: agenthost/blobs
  pathStyle: true
  accessKeyId: `+s3test.AccessKeyID+`
  secretAccessKeyEnv: `+secretVar+`
  encryption: sse-s3
`), 0o600); err != nil {
				t.Fatal(err)
			}
			data := filepath.Join(dir, "data")
			storage := []string{"-data", data, "-database", database}
			if database != "" {
				if _, stderr, err := run0(t, append([]string{"migrate"}, storage...)...); err != nil {
					t.Fatalf("migrate: %v\n%s", err, stderr)
				}
			}
			out, stderr, err := run0(t, append([]string{"admin", "bootstrap", "-tenant", "Acme", "-email", "ada@acme.example"}, storage...)...)
			if err != nil {
				t.Fatalf("bootstrap: %v\n%s", err, stderr)
			}
			m := tokenLine.FindStringSubmatch(out)
			if m == nil {
				t.Fatalf("bootstrap printed %q", out)
			}
			ws, token := m[1], m[2]
			// serve takes secret variables out of the process's environment
			// when it starts: each host gets it anew.
			start := func(logs *syncBuffer, data string) string {
				t.Setenv(secretVar, s3test.SecretAccessKey)
				return serveInProcess(t, logs, "-data", data, "-database", database, "-config", config)
			}
			logs := &syncBuffer{}
			base := start(logs, data)
			t.Cleanup(http.DefaultClient.CloseIdleConnections)
			api := func(base, method, path string, body io.Reader, ctype string) (int, []byte) {
				t.Helper()
				req, _ := http.NewRequest(method, base+"/api/v1"+path, body)
				req.Header.Set("Authorization", "Bearer "+token)
				if ctype != "" {
					req.Header.Set("Content-Type", ctype)
				}
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				defer resp.Body.Close()
				raw, _ := io.ReadAll(resp.Body)
				return resp.StatusCode, raw
			}

			pdf := testpdf.OnePage("Quarterly memo on the object storage budget")
			var body bytes.Buffer
			mw := multipart.NewWriter(&body)
			part, _ := mw.CreateFormFile("file", "memo.pdf")
			part.Write(pdf)
			mw.Close()
			var f struct{ ID, SHA256 string }
			if st, raw := api(base, "POST", "/workspaces/"+ws+"/files", &body, mw.FormDataContentType()); st != 201 || json.Unmarshal(raw, &f) != nil || f.ID == "" {
				t.Fatalf("upload: %d %s", st, raw)
			}
			if st, raw := api(base, "GET", "/files/"+f.ID+"/content", nil, ""); st != 200 || !bytes.Equal(raw, pdf) {
				t.Fatalf("content: %d, %d bytes; want the %d uploaded", st, len(raw), len(pdf))
			}
			// The bytes are in the bucket, under the prefix, encrypted as
			// configured; not on the local disk.
			key := "agenthost/blobs/" + f.SHA256
			if objs := srv.Objects(t, ""); len(objs) != 1 || objs[0] != key {
				t.Fatalf("bucket holds %v, want [%s]", objs, key)
			}
			if enc := srv.Metadata(t, key)["X-Amz-Server-Side-Encryption"]; enc != "AES256" {
				t.Fatalf("object stored with encryption %q, want AES256", enc)
			}
			if _, err := os.Stat(filepath.Join(data, "blobs")); !os.IsNotExist(err) {
				t.Fatalf("serve made a local blob folder: %v", err)
			}
			if !strings.Contains(logs.String(), "blobs in object storage") || !strings.Contains(logs.String(), s3test.Bucket) {
				t.Fatalf("serve's log does not say where blobs are:\n%s", logs.String())
			}

			if database == "" {
				// Extraction reads the blob back from the bucket. No deadline
				// of its own: the first extraction's time depends on the
				// machine; the test binary's -timeout bounds it.
				for ; ; time.Sleep(100 * time.Millisecond) {
					var idx struct {
						Status kindex.Status
						Error  string
					}
					st, raw := api(base, "GET", "/files/"+f.ID+"/index", nil, "")
					if st == 200 {
						if err := json.Unmarshal(raw, &idx); err != nil {
							t.Fatal(err)
						}
					}
					if idx.Status == kindex.StatusIndexed {
						break
					}
					if idx.Status == kindex.StatusFailed {
						t.Fatalf("indexing failed: %s", idx.Error)
					}
				}
				if st, raw := api(base, "GET", "/workspaces/"+ws+"/search?q=object+storage+budget", nil, ""); st != 200 || !strings.Contains(string(raw), f.ID) {
					t.Fatalf("search: %d %s", st, raw)
				}
			} else {
				// A second host, its own (empty) data directory, the same
				// database and bucket: it serves what the first stored.
				logsB := &syncBuffer{}
				other := start(logsB, filepath.Join(dir, "data-b"))
				if st, raw := api(other, "GET", "/files/"+f.ID+"/content", nil, ""); st != 200 || !bytes.Equal(raw, pdf) {
					t.Fatalf("content from the second host: %d, %d bytes; want the %d uploaded", st, len(raw), len(pdf))
				}
				pg, err := store.Open(context.Background(), store.Config{URL: database})
				if err != nil {
					t.Fatal(err)
				}
				defer pg.Close()
				var chunks int
				if err := pg.Pool().QueryRow(context.Background(), `SELECT count(*) FROM blob_chunks`).Scan(&chunks); err != nil || chunks != 0 {
					t.Fatalf("PostgreSQL holds %d blob chunks (%v); the bytes belong in the bucket", chunks, err)
				}
				logs.Write([]byte(logsB.String()))
			}
			if strings.Contains(logs.String(), s3test.SecretAccessKey) {
				t.Fatalf("serve logged the secret access key:\n%s", logs.String())
			}
		})
	}
}

// TestLoadObjectStorage: the section and the variables, which override it;
// a misspelt key, a secret variable that is unset or a bad number is an
// error naming it.
func TestLoadObjectStorage(t *testing.T) {
	dir := t.TempDir()
	write := func(body string) string {
		p := filepath.Join(dir, strings.ReplaceAll(t.Name(), "/", "_")+".yaml")
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	full := `objectStorage:
  endpoint: https://s3.eu-central-2.amazonaws.com
  region: eu-central-2
  bucket: acme-docs
  prefix: agenthost/
  accessKeyId: AKIAFILE
  secretAccessKeyEnv: ACME_S3_SECRET
  encryption: SSE-KMS
  kmsKeyId: alias/agenthost
  partSize: 33554432
  concurrency: 8
`
	for _, c := range []struct {
		name string
		file string // "" : no file
		env  map[string]string
		want *blob.S3Config
		err  string
	}{
		{name: "nothing", want: nil},
		{name: "other sections only", file: "llm:\n  retry:\n    attempts: 2\n", want: nil},
		{name: "file", file: full, env: map[string]string{"ACME_S3_SECRET": "from-env"},
			want: &blob.S3Config{Endpoint: "https://s3.eu-central-2.amazonaws.com", Region: "eu-central-2", Bucket: "acme-docs",
				Prefix: "agenthost/", AccessKeyID: "AKIAFILE", SecretAccessKey: "from-env", Encryption: "sse-kms",
				KMSKeyID: "alias/agenthost", PartSize: 32 << 20, Concurrency: 8}},
		{name: "variables override", file: full, env: map[string]string{"ACME_S3_SECRET": "from-env",
			"AGENTHOST_S3_BUCKET": "other", "AGENTHOST_S3_PATH_STYLE": "true", "AGENTHOST_S3_SECRET_ACCESS_KEY": "override",
			"AGENTHOST_S3_PART_SIZE": "8388608", "AGENTHOST_S3_ENCRYPTION": "sse-s3", "AGENTHOST_S3_KMS_KEY_ID": ""},
			want: &blob.S3Config{Endpoint: "https://s3.eu-central-2.amazonaws.com", Region: "eu-central-2", Bucket: "other",
				Prefix: "agenthost/", PathStyle: true, AccessKeyID: "AKIAFILE", SecretAccessKey: "override", Encryption: "sse-s3",
				KMSKeyID: "alias/agenthost", PartSize: 8 << 20, Concurrency: 8}},
		{name: "variables alone", env: map[string]string{"AGENTHOST_S3_ENDPOINT": "http://minio:9000", "AGENTHOST_S3_BUCKET": "b",
			"AGENTHOST_S3_ACCESS_KEY_ID": "id", "AGENTHOST_S3_SECRET_ACCESS_KEY": "s", "AGENTHOST_S3_CONCURRENCY": "2"},
			want: &blob.S3Config{Endpoint: "http://minio:9000", Bucket: "b", AccessKeyID: "id", SecretAccessKey: "s", Concurrency: 2}},
		{name: "a variable without the bucket still turns it on", env: map[string]string{"AGENTHOST_S3_REGION": "eu-west-1"},
			want: &blob.S3Config{Region: "eu-west-1"}},
		{name: "misspelt key", file: "objectStorage:\n  bucket: b\n  pathstyle: true\n", err: "pathstyle"},
		{name: "secret variable unset", file: full, err: "secretAccessKeyEnv names ACME_S3_SECRET, which is not set"},
		{name: "secret twice", file: "objectStorage:\n  secretAccessKey: a\n  secretAccessKeyEnv: B\n", env: map[string]string{"B": "b"},
			err: "secretAccessKey and secretAccessKeyEnv are both set"},
		{name: "bad path style", env: map[string]string{"AGENTHOST_S3_PATH_STYLE": "yes please"}, err: "AGENTHOST_S3_PATH_STYLE"},
		{name: "bad part size", env: map[string]string{"AGENTHOST_S3_PART_SIZE": "16MiB"}, err: "AGENTHOST_S3_PART_SIZE"},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := ""
			if c.file != "" {
				path = write(c.file)
			}
			got, err := func() (*blob.S3Config, error) {
				f, err := server.ReadFile(path)
				if err != nil {
					return nil, err
				}
				return f.ObjectStorageConfig(func(k string) string { return c.env[k] })
			}()
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("error %v, want %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if (got == nil) != (c.want == nil) || got != nil && *got != *c.want {
				t.Fatalf("got %+v\nwant %+v", got, c.want)
			}
		})
	}
}

// TestServeObjectStorageUnreachable: a bucket that cannot be reached stops
// start-up of serve and of worker (which read the same settings) with an
// error naming the endpoint, before the API answers or a job runs.
func TestServeObjectStorageUnreachable(t *testing.T) {
	srv := s3test.Start(t)
	srv.Close()
	t.Setenv("AGENTHOST_S3_ENDPOINT", srv.URL)
	t.Setenv("AGENTHOST_S3_BUCKET", s3test.Bucket)
	t.Setenv("AGENTHOST_S3_PATH_STYLE", "true")
	t.Setenv("AGENTHOST_S3_REGION", "us-east-1")
	addr, err := freeLoopbackAddr()
	if err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"serve", "-addr", addr, "-mcp-addr", "off", "-data", filepath.Join(t.TempDir(), "data")},
		{"worker", "-data", filepath.Join(t.TempDir(), "data")},
	} {
		// The command takes the secrets out of the environment.
		t.Setenv("AGENTHOST_S3_ACCESS_KEY_ID", s3test.AccessKeyID)
		t.Setenv("AGENTHOST_S3_SECRET_ACCESS_KEY", s3test.SecretAccessKey)
		_, stderr, err := run0(t, args...)
		if err == nil || !strings.Contains(err.Error(), srv.URL) || !strings.Contains(err.Error(), "connection refused") {
			t.Fatalf("%s with the bucket unreachable: %v\n%s", args[0], err, stderr)
		}
		if strings.Contains(err.Error()+stderr, s3test.SecretAccessKey) {
			t.Fatalf("%s printed the secret: %v\n%s", args[0], err, stderr)
		}
	}
}

// TestBlobsCopyThenServe moves an installation to object storage: files
// uploaded while blobs were in the data directory are copied by `blobs
// copy` and served by a serve that keeps its blobs in the bucket; a second
// copy sends nothing.
func TestBlobsCopyThenServe(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the server with the built-in plugins")
	}
	srv := s3test.Start(t)
	data := filepath.Join(t.TempDir(), "data")
	out, stderr, err := run0(t, "admin", "bootstrap", "-tenant", "Acme", "-email", "ada@acme.example", "-data", data)
	if err != nil {
		t.Fatalf("bootstrap: %v\n%s", err, stderr)
	}
	m := tokenLine.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("bootstrap printed %q", out)
	}
	ws, token := m[1], m[2]
	t.Cleanup(http.DefaultClient.CloseIdleConnections)
	get := func(base, path string) (int, []byte) {
		t.Helper()
		req, _ := http.NewRequest("GET", base+"/api/v1"+path, nil)
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, raw
	}
	content := []byte(strings.Repeat("notes kept before the move\n", 2000))
	var id string
	t.Run("before", func(t *testing.T) {
		base := serveInProcess(t, &syncBuffer{}, "-data", data)
		var body bytes.Buffer
		mw := multipart.NewWriter(&body)
		part, _ := mw.CreateFormFile("file", "notes.txt")
		part.Write(content)
		mw.Close()
		req, _ := http.NewRequest("POST", base+"/api/v1/workspaces/"+ws+"/files", &body)
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Content-Type", mw.FormDataContentType())
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var f struct{ ID string }
		if err := json.NewDecoder(resp.Body).Decode(&f); err != nil || resp.StatusCode != 201 {
			t.Fatalf("upload: %d %v", resp.StatusCode, err)
		}
		id = f.ID
	})
	if id == "" {
		t.FailNow()
	}

	// serve takes the secret variables (the key id's too) out of the
	// process's environment: they are set again before each start.
	s3env := func(t *testing.T) {
		for k, v := range map[string]string{"AGENTHOST_S3_ENDPOINT": srv.URL, "AGENTHOST_S3_BUCKET": s3test.Bucket,
			"AGENTHOST_S3_PATH_STYLE": "true", "AGENTHOST_S3_REGION": "us-east-1", "AGENTHOST_S3_ACCESS_KEY_ID": s3test.AccessKeyID,
			"AGENTHOST_S3_SECRET_ACCESS_KEY": s3test.SecretAccessKey} {
			t.Setenv(k, v)
		}
	}
	s3env(t)
	out, stderr, err = run0(t, "blobs", "copy", "-data", data)
	if err != nil || !strings.Contains(out, "copied 1 blobs") || !strings.Contains(out, "0 were there already") {
		t.Fatalf("blobs copy: %v\n%s\n%s", err, out, stderr)
	}
	if strings.Contains(out+stderr, s3test.SecretAccessKey) {
		t.Fatalf("blobs copy printed the secret:\n%s\n%s", out, stderr)
	}
	if objs := srv.Objects(t, ""); len(objs) != 1 {
		t.Fatalf("bucket holds %v after the copy", objs)
	}
	if out, _, err := run0(t, "blobs", "copy", "-data", data); err != nil || !strings.Contains(out, "copied 0 blobs") || !strings.Contains(out, "1 were there already") {
		t.Fatalf("second blobs copy: %v\n%s", err, out)
	}
	// While the old folder holds blobs, serve warns; once it is gone, serve
	// reads from the bucket alone.
	t.Run("old folder kept", func(t *testing.T) {
		s3env(t)
		logs := &syncBuffer{}
		serveInProcess(t, logs, "-data", data)
		if !strings.Contains(logs.String(), "blobs remain in the database's store") {
			t.Fatalf("no warning about the blobs left in %s:\n%s", filepath.Join(data, "blobs"), logs.String())
		}
	})
	if err := os.RemoveAll(filepath.Join(data, "blobs")); err != nil {
		t.Fatal(err)
	}
	s3env(t)
	logs := &syncBuffer{}
	base := serveInProcess(t, logs, "-data", data)
	if st, raw := get(base, "/files/"+id+"/content"); st != 200 || !bytes.Equal(raw, content) {
		t.Fatalf("content after the move: %d, %d bytes; want the %d uploaded", st, len(raw), len(content))
	}
	if strings.Contains(logs.String(), "blobs remain") {
		t.Fatalf("warning with no blobs left:\n%s", logs.String())
	}
}

// TestBlobsCopyNeedsObjectStorage: without object storage configured the
// copy says what to set, and touches nothing.
func TestBlobsCopyNeedsObjectStorage(t *testing.T) {
	data := filepath.Join(t.TempDir(), "data")
	_, _, err := run0(t, "blobs", "copy", "-data", data)
	if err == nil || !strings.Contains(err.Error(), "no object storage configured") {
		t.Fatalf("blobs copy without object storage: %v", err)
	}
	if _, err := os.Stat(data); !os.IsNotExist(err) {
		t.Fatalf("the data directory was made: %v", err)
	}
	if _, _, err := run0(t, "blobs", "move"); err == nil || !strings.Contains(err.Error(), `unknown subcommand "move"`) {
		t.Fatalf("blobs move: %v", err)
	}
}
