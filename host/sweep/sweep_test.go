package sweep_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/agenthost/agenthost/host/blob"
	"github.com/agenthost/agenthost/host/files"
	"github.com/agenthost/agenthost/host/files/filemeta"
	"github.com/agenthost/agenthost/host/store"
	"github.com/agenthost/agenthost/host/sweep"
	"github.com/agenthost/agenthost/host/tenancy"
	"github.com/agenthost/agenthost/host/testenv"
)

func TestMain(m *testing.M) { os.Exit(testenv.Main(m)) }

// env is one database with one blob backend and a tenant to upload as.
type env struct {
	db    *store.DB
	blobs files.Blobs
	dir   *blob.Dir // nil with the PostgreSQL backend
	svc   *files.Service
	p     tenancy.Principal
	ws    string
}

// backends are the combinations the sweeper serves: the embedded default,
// PostgreSQL with its own blob backend, and PostgreSQL with a directory.
var backends = []struct {
	name string
	open func(t testing.TB) *env
}{
	{"sqlite+dir", func(t testing.TB) *env {
		dir := t.TempDir()
		db, err := store.Open(context.Background(), store.Config{Dir: dir})
		if err != nil {
			t.Fatal(err)
		}
		d, err := blob.NewDir(dir + "/blobs")
		if err != nil {
			t.Fatal(err)
		}
		return setup(t, db, d, d)
	}},
	{"postgres+postgres", func(t testing.TB) *env {
		db, err := store.Open(context.Background(), store.Config{URL: testenv.Postgres(t)})
		if err != nil {
			t.Fatal(err)
		}
		return setup(t, db, blob.NewPostgres(db.Pool(), blob.WithStagingDir(t.TempDir())), nil)
	}},
	{"postgres+dir", func(t testing.TB) *env {
		db, err := store.Open(context.Background(), store.Config{URL: testenv.Postgres(t)})
		if err != nil {
			t.Fatal(err)
		}
		d, err := blob.NewDir(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		return setup(t, db, d, d)
	}},
}

func setup(t testing.TB, db *store.DB, blobs files.Blobs, dir *blob.Dir) *env {
	t.Helper()
	t.Cleanup(func() { db.Close() })
	ctx := context.Background()
	if err := db.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	ten, err := db.CreateTenant(ctx, "Acme")
	if err != nil {
		t.Fatal(err)
	}
	u, err := db.CreateUser(ctx, tenancy.User{TenantID: ten.ID, Email: "a@acme.example", Name: "A", Admin: true})
	if err != nil {
		t.Fatal(err)
	}
	ws, err := db.CreateWorkspace(ctx, tenancy.Workspace{TenantID: ten.ID, Name: "main"})
	if err != nil {
		t.Fatal(err)
	}
	return &env{db: db, blobs: blobs, dir: dir, svc: files.NewService(db, blobs, files.DefaultMaxUpload),
		p: tenancy.Principal{TenantID: ten.ID, UserID: u.ID, Admin: true}, ws: ws.ID}
}

// sweeper sweeps e with retention r and no grace unless grace is set.
func (e *env) sweeper(r store.Retention, grace time.Duration) *sweep.Sweeper {
	if grace == 0 {
		grace = -1
	}
	var d sweep.Dir
	if e.dir != nil {
		d = e.dir
	}
	return sweep.New(e.db, d, sweep.Config{Retention: r, Grace: grace, Batch: 7})
}

func (e *env) upload(t testing.TB, ws, name string, content []byte) filemeta.Item {
	t.Helper()
	f, _, err := e.svc.Upload(context.Background(), e.p, files.Upload{WorkspaceID: ws, Name: name, Content: bytes.NewReader(content), NoDedupe: true})
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// present reports whether the blob's bytes are still stored (on disk for a
// directory, as rows for PostgreSQL).
func (e *env) present(t testing.TB, sha string) bool {
	t.Helper()
	r, err := e.blobs.Open(context.Background(), sha)
	if errors.Is(err, blob.ErrNotFound) {
		return false
	}
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	h := sha256.New()
	if _, err := io.Copy(h, r); err != nil {
		t.Fatalf("blob %s is listed but unreadable: %v", sha, err)
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != sha {
		t.Fatalf("blob %s holds bytes hashing to %s", sha, got)
	}
	return true
}

func (e *env) sweep(t testing.TB, s *sweep.Sweeper) sweep.Result {
	t.Helper()
	res, err := s.Sweep(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func random(t testing.TB, n int) []byte {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return b
}

// exec runs an SQL statement with '?' placeholders on either dialect.
func (e *env) exec(t testing.TB, q string, args ...any) {
	t.Helper()
	if e.db.Dialect() == store.Postgres {
		n := 0
		var b bytes.Buffer
		for _, c := range []byte(q) {
			if c == '?' {
				n++
				fmt.Fprintf(&b, "$%d", n)
				continue
			}
			b.WriteByte(c)
		}
		q = b.String()
	}
	if _, err := e.db.SQL().ExecContext(context.Background(), q, args...); err != nil {
		t.Fatal(err)
	}
}

func TestSweep(t *testing.T) {
	ctx := context.Background()
	noTrash := store.Retention{Versions: time.Hour, Trash: 0}
	scenarios := []struct {
		name string
		run  func(t *testing.T, e *env)
	}{
		{"deleted file's bytes go", func(t *testing.T, e *env) {
			keep := e.upload(t, e.ws, "keep.bin", random(t, 1000))
			gone := e.upload(t, e.ws, "big.bin", random(t, 6<<20))
			if err := e.svc.Delete(ctx, e.p, gone.ID); err != nil {
				t.Fatal(err)
			}
			res := e.sweep(t, e.sweeper(noTrash, 0))
			if e.present(t, gone.SHA256) {
				t.Fatalf("deleted file's blob still stored after %+v", res)
			}
			if res.Blobs != 1 || res.Bytes != 6<<20 || res.Purged.Trash != 1 {
				t.Errorf("result %+v, want 1 blob of %d bytes and 1 trash entry", res, 6<<20)
			}
			if !e.present(t, keep.SHA256) {
				t.Fatal("a live file's blob was deleted")
			}
			if e.dir != nil {
				p, _ := e.dir.Path(gone.SHA256)
				if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
					t.Fatalf("bytes still on disk: %v", err)
				}
			}
		}},
		{"shared blob survives deleting one file", func(t *testing.T, e *env) {
			content := random(t, 5000)
			a := e.upload(t, e.ws, "a.bin", content)
			b := e.upload(t, e.ws, "b.bin", content)
			if a.SHA256 != b.SHA256 || a.ID == b.ID {
				t.Fatal("want two files over one blob")
			}
			if err := e.svc.Delete(ctx, e.p, a.ID); err != nil {
				t.Fatal(err)
			}
			e.sweep(t, e.sweeper(noTrash, 0))
			if !e.present(t, b.SHA256) {
				t.Fatal("a blob another file refers to was deleted")
			}
			if err := e.svc.Delete(ctx, e.p, b.ID); err != nil {
				t.Fatal(err)
			}
			e.sweep(t, e.sweeper(noTrash, 0))
			if e.present(t, b.SHA256) {
				t.Fatal("blob kept after its last file was deleted")
			}
		}},
		{"versions within retention survive, older ones go", func(t *testing.T, e *env) {
			f := e.upload(t, e.ws, "notes.txt", []byte("one"))
			_, v2, err := e.svc.SetContent(ctx, e.p, f.ID, bytes.NewReader([]byte("two")), 0, "")
			if err != nil {
				t.Fatal(err)
			}
			_, v3, err := e.svc.SetContent(ctx, e.p, f.ID, bytes.NewReader([]byte("three")), 0, "")
			if err != nil {
				t.Fatal(err)
			}
			e.sweep(t, e.sweeper(noTrash, 0))
			for _, sha := range []string{f.SHA256, v2.SHA256, v3.SHA256} {
				if !e.present(t, sha) {
					t.Fatal("a version within its retention lost its blob")
				}
			}
			// Versions 1 and 2 were made two hours ago: version 1 stopped
			// being current then (past the retention), version 2 just now.
			e.exec(t, `UPDATE file_versions SET created_at = ? WHERE file_id = ? AND version <= 2`, time.Now().Add(-2*time.Hour).UnixMicro(), f.ID)
			res := e.sweep(t, e.sweeper(noTrash, 0))
			if res.Purged.Versions != 1 || e.present(t, f.SHA256) {
				t.Fatalf("version 1 past its retention kept: %+v", res)
			}
			if !e.present(t, v2.SHA256) || !e.present(t, v3.SHA256) {
				t.Fatal("newer versions lost their blobs")
			}
			vs, err := e.svc.Versions(ctx, e.p, f.ID)
			if err != nil || len(vs) != 2 {
				t.Fatalf("versions %v %v, want 2 and 3", vs, err)
			}
		}},
		{"trash within retention survives", func(t *testing.T, e *env) {
			f := e.upload(t, e.ws, "t.bin", random(t, 100))
			if err := e.svc.Delete(ctx, e.p, f.ID); err != nil {
				t.Fatal(err)
			}
			week := store.Retention{Trash: 7 * 24 * time.Hour}
			e.sweep(t, e.sweeper(week, 0))
			if !e.present(t, f.SHA256) {
				t.Fatal("a file in the trash lost its bytes")
			}
			e.exec(t, `UPDATE file_trash SET deleted_at = ? WHERE file_id = ?`, time.Now().Add(-8*24*time.Hour).UnixMicro(), f.ID)
			if res := e.sweep(t, e.sweeper(week, 0)); res.Purged.Trash != 1 || e.present(t, f.SHA256) {
				t.Fatalf("trash past its retention kept: %+v", res)
			}
		}},
		{"deleted workspace's blobs go", func(t *testing.T, e *env) {
			other, err := e.db.CreateWorkspace(ctx, tenancy.Workspace{TenantID: e.p.TenantID, Name: "other"})
			if err != nil {
				t.Fatal(err)
			}
			shared := random(t, 300)
			a := e.upload(t, other.ID, "a.bin", random(t, 2000))
			b := e.upload(t, other.ID, "b.bin", shared)
			kept := e.upload(t, e.ws, "b.bin", shared)
			if err := e.db.DeleteWorkspace(ctx, other.ID); err != nil {
				t.Fatal(err)
			}
			e.sweep(t, e.sweeper(store.Retention{Trash: -1}, 0))
			if e.present(t, a.SHA256) {
				t.Fatal("a deleted workspace's blob was kept")
			}
			if !e.present(t, b.SHA256) || !e.present(t, kept.SHA256) {
				t.Fatal("a blob another workspace refers to was deleted")
			}
		}},
		{"grace keeps bytes just stored", func(t *testing.T, e *env) {
			// A Put whose row is not committed yet: only the grace keeps it.
			sha, _, err := e.blobs.Put(ctx, bytes.NewReader(random(t, 64)), blob.NoLimit)
			if err != nil {
				t.Fatal(err)
			}
			e.sweep(t, e.sweeper(noTrash, time.Hour))
			if !e.present(t, sha) {
				t.Fatal("bytes written within the grace period were deleted")
			}
			e.sweep(t, e.sweeper(noTrash, 0))
			if e.present(t, sha) {
				t.Fatal("bytes nothing refers to, past the grace, were kept")
			}
		}},
		{"a storage hold stops the sweep", func(t *testing.T, e *env) {
			f := e.upload(t, e.ws, "h.bin", random(t, 100))
			if err := e.svc.Delete(ctx, e.p, f.ID); err != nil {
				t.Fatal(err)
			}
			id, err := e.db.Hold(ctx, "backup to /srv/b", time.Hour)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := e.sweeper(noTrash, 0).Sweep(ctx); !errors.Is(err, sweep.ErrHeld) {
				t.Fatalf("sweep under a hold: %v, want ErrHeld", err)
			}
			if !e.present(t, f.SHA256) {
				t.Fatal("a sweep under a hold deleted bytes")
			}
			if err := e.db.Release(ctx, id); err != nil {
				t.Fatal(err)
			}
			e.sweep(t, e.sweeper(noTrash, 0))
			if e.present(t, f.SHA256) {
				t.Fatal("bytes kept after the hold was released")
			}
		}},
		{"bytes a killed sweep left retired are put back", func(t *testing.T, e *env) {
			if e.dir == nil {
				t.Skip("the PostgreSQL backend's bytes go with their rows, in one transaction")
			}
			f := e.upload(t, e.ws, "live.bin", random(t, 700))
			// A sweep killed between moving the bytes away and its commit.
			if _, err := e.dir.Retire(ctx, f.SHA256, time.Now().Add(time.Hour)); err != nil {
				t.Fatal(err)
			}
			if e.present(t, f.SHA256) {
				t.Fatal("Retire left the blob readable")
			}
			res := e.sweep(t, e.sweeper(noTrash, 0))
			if res.Restored != 1 || res.Blobs != 0 || !e.present(t, f.SHA256) {
				t.Fatalf("after the next sweep (%+v) the live file's bytes are not back", res)
			}
		}},
		{"report counts what is held and reclaimable", func(t *testing.T, e *env) {
			e.upload(t, e.ws, "r.bin", random(t, 1000))
			g := e.upload(t, e.ws, "g.bin", random(t, 500))
			if err := e.svc.Delete(ctx, e.p, g.ID); err != nil {
				t.Fatal(err)
			}
			rep, err := e.sweeper(noTrash, 0).Report(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if rep.Blobs != 2 || rep.Bytes != 1500 || rep.ExpiredTrash != 1 || len(rep.Tenants) != 1 {
				t.Fatalf("report %+v", rep)
			}
			if ts := rep.Tenants[0]; ts.Files != 1 || ts.FileBytes != 1000 || ts.Trashed != 1 || ts.TrashBytes != 500 || ts.Bytes != 1500 {
				t.Fatalf("tenant %+v", ts)
			}
		}},
	}
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			for _, sc := range scenarios {
				t.Run(sc.name, func(t *testing.T) { sc.run(t, b.open(t)) })
			}
		})
	}
}

// TestSweepRacesUploads uploads, again and again, bytes that nothing refers
// to any more and that are past the grace period, while sweeps run: every
// upload must find its bytes afterwards. A plain "check, then delete" loses
// some of them (the upload's Put finds the bytes present, the sweep deletes
// them, the row is committed over nothing).
func TestSweepRacesUploads(t *testing.T) {
	ctx := context.Background()
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			e := b.open(t)
			const contents, rounds = 8, 6
			bodies := make([][]byte, contents)
			for i := range bodies {
				bodies[i] = random(t, 2000+i)
			}
			s := sweep.New(e.db, dirOf(e), sweep.Config{Retention: store.Retention{Trash: 0}, Grace: time.Minute, Batch: 3})
			var uploaded []filemeta.Item
			for round := 0; round < rounds; round++ {
				// Every content is stored and unreferenced, and looks old.
				for i, body := range bodies {
					f := e.upload(t, e.ws, fmt.Sprintf("r%d-%d.bin", round, i), body)
					if err := e.svc.Delete(ctx, e.p, f.ID); err != nil {
						t.Fatal(err)
					}
				}
				if _, err := s.Sweep(ctx); err != nil { // empties the trash
					t.Fatal(err)
				}
				age(t, e, bodies)
				var wg sync.WaitGroup
				var mu sync.Mutex
				errs := make(chan error, contents+1)
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := 0; i < 3; i++ {
						if _, err := s.Sweep(ctx); err != nil {
							errs <- err
							return
						}
					}
				}()
				for i, body := range bodies {
					wg.Add(1)
					go func() {
						defer wg.Done()
						f, _, err := e.svc.Upload(ctx, e.p, files.Upload{WorkspaceID: e.ws, Name: fmt.Sprintf("keep%d-%d.bin", round, i), Content: bytes.NewReader(body), NoDedupe: true})
						if err != nil {
							errs <- err
							return
						}
						mu.Lock()
						uploaded = append(uploaded, f)
						mu.Unlock()
					}()
				}
				wg.Wait()
				close(errs)
				for err := range errs {
					t.Fatal(err)
				}
				if _, err := s.Sweep(ctx); err != nil {
					t.Fatal(err)
				}
				for _, f := range uploaded {
					if !e.present(t, f.SHA256) {
						t.Fatalf("round %d: upload %s lost its bytes to a concurrent sweep", round, f.Name)
					}
				}
				// The next round deletes these again.
				for _, f := range uploaded {
					if err := e.svc.Delete(ctx, e.p, f.ID); err != nil {
						t.Fatal(err)
					}
				}
				uploaded = uploaded[:0]
			}
		})
	}
}

func dirOf(e *env) sweep.Dir {
	if e.dir == nil {
		return nil
	}
	return e.dir
}

// age makes the bodies' blobs look written two minutes ago: their rows'
// written_at and their files' modification times.
func age(t *testing.T, e *env, bodies [][]byte) {
	t.Helper()
	old := time.Now().Add(-2 * time.Minute)
	for _, body := range bodies {
		h := sha256.Sum256(body)
		sha := hex.EncodeToString(h[:])
		e.exec(t, `UPDATE blobs SET written_at = ? WHERE sha256 = ?`, old.UnixMicro(), sha)
		if e.dir != nil {
			p, _ := e.dir.Path(sha)
			if err := os.Chtimes(p, old, old); err != nil && !errors.Is(err, os.ErrNotExist) {
				t.Fatal(err)
			}
		}
	}
}

// sweepingBlobs runs a sweep inside every Put, after the bytes are stored
// and before the caller's row refers to them: the worst moment for an
// upload, made certain instead of left to chance.
type sweepingBlobs struct {
	files.Blobs
	t testing.TB
	s *sweep.Sweeper
}

func (b sweepingBlobs) Put(ctx context.Context, r io.Reader, max int64) (string, int64, error) {
	sha, n, err := b.Blobs.Put(ctx, r, max)
	if err == nil {
		if _, serr := b.s.Sweep(ctx); serr != nil {
			b.t.Errorf("sweep inside Put: %v", serr)
		}
	}
	return sha, n, err
}

// TestSweepBetweenPutAndRow uploads bytes that are stored already, nothing
// refers to and look older than the grace period, with a sweep between the
// upload's Put and its row: the Put must have renewed them.
func TestSweepBetweenPutAndRow(t *testing.T) {
	ctx := context.Background()
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			e := b.open(t)
			body := random(t, 3000)
			f := e.upload(t, e.ws, "old.bin", body)
			if err := e.svc.Delete(ctx, e.p, f.ID); err != nil {
				t.Fatal(err)
			}
			s := sweep.New(e.db, dirOf(e), sweep.Config{Retention: store.Retention{Trash: 0}, Grace: time.Minute})
			if _, err := s.Sweep(ctx); err != nil { // empties the trash
				t.Fatal(err)
			}
			age(t, e, [][]byte{body})
			svc := files.NewService(e.db, sweepingBlobs{Blobs: e.blobs, t: t, s: s}, files.DefaultMaxUpload)
			g, _, err := svc.Upload(ctx, e.p, files.Upload{WorkspaceID: e.ws, Name: "again.bin", Content: bytes.NewReader(body)})
			if err != nil {
				t.Fatal(err)
			}
			if !e.present(t, g.SHA256) {
				t.Fatal("the upload's bytes were deleted between its Put and its row")
			}
			// Once nothing refers to them and the grace has passed, they go.
			if err := e.svc.Delete(ctx, e.p, g.ID); err != nil {
				t.Fatal(err)
			}
			s.Sweep(ctx)
			age(t, e, [][]byte{body})
			if _, err := s.Sweep(ctx); err != nil {
				t.Fatal(err)
			}
			if e.present(t, g.SHA256) {
				t.Fatal("bytes kept after their last file was deleted and the grace passed")
			}
		})
	}
}

// TestSweepMeetsUncommittedReference (PostgreSQL): a transaction has
// inserted a file row referring to a blob nothing else refers to, and not
// committed, when a sweep comes to delete the blob. The sweep waits on the
// row's lock; once the reference commits, the foreign key refuses the
// delete, and the sweep keeps the blob (and its bytes) and finishes.
func TestSweepMeetsUncommittedReference(t *testing.T) {
	ctx := context.Background()
	for _, b := range backends {
		if b.name == "sqlite+dir" {
			continue // one writer at a time: the situation cannot arise
		}
		t.Run(b.name, func(t *testing.T) {
			e := b.open(t)
			body := random(t, 4000)
			f := e.upload(t, e.ws, "x.bin", body)
			other := e.upload(t, e.ws, "other.bin", random(t, 10)) // deleted too: the batch has more than one
			for _, id := range []string{f.ID, other.ID} {
				if err := e.svc.Delete(ctx, e.p, id); err != nil {
					t.Fatal(err)
				}
			}
			s := sweep.New(e.db, dirOf(e), sweep.Config{Retention: store.Retention{Trash: 0, Versions: -1}, Grace: -1})
			// The trash is emptied first, so the sweep goes straight to the blobs.
			if _, err := e.db.PurgeExpired(ctx, store.Retention{Trash: 0}, time.Now()); err != nil {
				t.Fatal(err)
			}
			tx, err := e.db.SQL().BeginTx(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer tx.Rollback()
			now := time.Now().UnixMicro()
			if _, err := tx.ExecContext(ctx, `INSERT INTO files (id, tenant_id, workspace_id, created_by, name, mime_type, sha256, size, status, created_at, updated_at)
				VALUES ('late', $1, $2, $3, 'late.bin', 'application/octet-stream', $4, $5, 'active', $6, $6)`,
				e.p.TenantID, e.ws, e.p.UserID, f.SHA256, len(body), now); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			var res sweep.Result
			go func() {
				var err error
				res, err = s.Sweep(ctx)
				done <- err
			}()
			// Wait until the sweep's delete waits on the row lock.
			for {
				var waiting int
				if err := e.db.SQL().QueryRowContext(ctx, `SELECT COUNT(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE 'DELETE FROM blobs%'`).Scan(&waiting); err != nil {
					t.Fatal(err)
				}
				if waiting > 0 {
					break
				}
				select {
				case err := <-done:
					t.Fatalf("the sweep ended without waiting for the uncommitted reference: %v %+v", err, res)
				case <-time.After(10 * time.Millisecond):
				}
			}
			if err := tx.Commit(); err != nil {
				t.Fatal(err)
			}
			if err := <-done; err != nil {
				t.Fatalf("sweep: %v", err)
			}
			if !e.present(t, f.SHA256) {
				t.Fatal("a blob referred to by a transaction that committed during the sweep was deleted")
			}
			if e.present(t, other.SHA256) || res.Blobs != 1 {
				t.Fatalf("the other unreferenced blob was kept: %+v", res)
			}
		})
	}
}

// TestSweepCleansStaging: the staging file of an upload that stopped
// writing longer ago than the grace (as a killed process leaves it) is
// removed by the sweep; a fresh one is not.
func TestSweepCleansStaging(t *testing.T) {
	dir := t.TempDir()
	d, err := blob.NewDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	stalled := func() (string, func()) {
		pr, pw := io.Pipe()
		done := make(chan struct{})
		go func() { defer close(done); d.Put(context.Background(), pr, 1<<20) }()
		pw.Write([]byte("the first bytes of an upload that never ends"))
		for {
			// Once the bytes are in the file, the upload writes no more.
			names, _ := filepath.Glob(filepath.Join(dir, "tmp", "*"))
			if len(names) == 1 {
				if fi, err := os.Stat(names[0]); err == nil && fi.Size() > 0 {
					return names[0], func() { pw.CloseWithError(errors.New("gone")); <-done }
				}
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	old, stop := stalled()
	defer stop()
	past := time.Now().Add(-2 * time.Hour)
	if err := os.Chtimes(old, past, past); err != nil {
		t.Fatal(err)
	}
	db, err := store.Open(context.Background(), store.Config{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	e := setup(t, db, d, d)
	res, err := sweep.New(e.db, d, sweep.Config{Grace: time.Hour, Staging: d}).Sweep(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(old); !errors.Is(err, fs.ErrNotExist) || res.Staging != 1 {
		t.Fatalf("the stalled upload's staging file: %v, %d removed", err, res.Staging)
	}
	stop()
	fresh, stop2 := stalled()
	defer stop2()
	if _, err := sweep.New(e.db, d, sweep.Config{Grace: time.Hour, Staging: d}).Sweep(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(fresh); err != nil {
		t.Fatalf("a live upload's staging file was removed: %v", err)
	}
}
