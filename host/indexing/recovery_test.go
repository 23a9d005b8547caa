package indexing_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agenthost/agenthost/host/blob"
	"github.com/agenthost/agenthost/host/files"
	"github.com/agenthost/agenthost/host/indexing"
	"github.com/agenthost/agenthost/host/jobs"
	"github.com/agenthost/agenthost/host/knowledge/ingest"
	"github.com/agenthost/agenthost/host/knowledge/kindex"
	"github.com/agenthost/agenthost/host/store"
	"github.com/agenthost/agenthost/host/tenancy"
	"github.com/agenthost/agenthost/host/wasm"
	"github.com/agenthost/agenthost/pdk/content"
)

// The kill test re-executes the test binary as a worker process (TestMain);
// envKillChild carries the data directory it works on.
const envKillChild = "AGENTHOST_INDEXING_TEST_KILL_CHILD"

// extractingMarker is the file the worker process creates in the data
// directory once it is extracting, so the test knows when to kill it.
const extractingMarker = "child-extracting"

// hangingExtractor is the worker process's extractor: it says it started,
// then never returns (until the process is killed).
type hangingExtractor struct{ dir string }

func (h hangingExtractor) Extract(ctx context.Context, _, _ string, _ wasm.Input) (content.Index, []content.Object, error) {
	if err := os.WriteFile(filepath.Join(h.dir, extractingMarker), []byte(fmt.Sprint(os.Getpid())), 0o600); err != nil {
		return content.Index{}, nil, err
	}
	<-ctx.Done()
	return content.Index{}, nil, ctx.Err()
}

// gatedExtractor is the restarted host's extractor: it reports each start
// on started and extracts once release is closed, so the test can read the
// file's state while the retry runs, however slow the machine.
type gatedExtractor struct {
	started chan struct{}
	release chan struct{}
}

func (g gatedExtractor) Extract(ctx context.Context, _, _ string, _ wasm.Input) (content.Index, []content.Object, error) {
	select {
	case g.started <- struct{}{}:
	default:
	}
	select {
	case <-g.release:
	case <-ctx.Done():
		return content.Index{}, nil, ctx.Err()
	}
	objs := []content.Object{{ID: "p1", ContentType: content.Text, Data: "Hotel costs are reimbursed up to 180 CHF per night."}}
	return content.Index{TotalObjects: 1}, objs, nil
}

// openData opens (and migrates) the store and blob directory in dir.
func openData(ctx context.Context, dir string) (*store.DB, *blob.Dir, error) {
	db, err := store.Open(ctx, store.Config{Dir: dir})
	if err != nil {
		return nil, nil, err
	}
	if err := db.Migrate(ctx); err != nil {
		db.Close()
		return nil, nil, err
	}
	if err := jobs.Migrate(ctx, db); err != nil {
		db.Close()
		return nil, nil, err
	}
	blobs, err := blob.NewDir(filepath.Join(dir, "blobs"))
	if err != nil {
		db.Close()
		return nil, nil, err
	}
	return db, blobs, nil
}

// killChild is the worker process: it works indexing jobs with the hanging
// extractor until it is killed.
func killChild() error {
	ctx := context.Background()
	dir := os.Getenv(envKillChild)
	db, blobs, err := openData(ctx, dir)
	if err != nil {
		return err
	}
	defer db.Close()
	reg := jobs.NewRegistry()
	indexing.RegisterJobs(reg, ingest.New(db, blobs, hangingExtractor{dir: dir}, nil), db)
	q, err := jobs.New(db, jobs.Config{Registry: reg, Work: true, JobTimeout: -1})
	if err != nil {
		return err
	}
	if err := q.Start(ctx); err != nil {
		return err
	}
	select {} // until SIGKILL
}

// TestIndexingSurvivesKill: a file is uploaded (pending, "queued", not
// 404, while no worker runs), a worker process takes it and is killed with
// SIGKILL mid-extraction; a restarted host picks the job up within seconds
// (the production heartbeat lease, 15 s, not River's 15 min rescue), the
// file's state names the restart while the retry runs, and the file ends
// indexed. The ceiling of two minutes is for a loaded machine; the log
// says how long it took.
func TestIndexingSurvivesKill(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	db, blobs, err := openData(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	tn, err := db.CreateTenant(ctx, "t")
	if err != nil {
		t.Fatal(err)
	}
	u, err := db.CreateUser(ctx, tenancy.User{TenantID: tn.ID, Email: "u@t"})
	if err != nil {
		t.Fatal(err)
	}
	ws, err := db.CreateWorkspace(ctx, tenancy.Workspace{TenantID: tn.ID, Name: "w"})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.SetMembership(ctx, tenancy.Membership{WorkspaceID: ws.ID, UserID: u.ID, Role: tenancy.RoleMember}); err != nil {
		t.Fatal(err)
	}
	e := env{db: db, blobs: blobs, p: tenancy.Principal{TenantID: tn.ID, UserID: u.ID}, ws: ws.ID}

	// The upload is enqueued by a queue that does not work: nobody takes it.
	gate := gatedExtractor{started: make(chan struct{}, 1), release: make(chan struct{})}
	reg := jobs.NewRegistry()
	indexing.RegisterJobs(reg, ingest.New(db, blobs, gate, nil), db)
	enq, err := jobs.New(db, jobs.Config{Registry: reg})
	if err != nil {
		t.Fatal(err)
	}
	svc := files.NewService(db, blobs, 0).WithIndexer(indexing.NewJobIndexer(enq), nil)
	f := e.upload(t, svc, "policy.txt", []byte("Hotel costs are reimbursed up to 180 CHF per night."))
	st, err := db.ContentState(ctx, e.p, f.ID)
	if err != nil || st.Status != kindex.StatusPending || st.Note != kindex.NoteQueued {
		t.Fatalf("state of a file whose job waits: %+v %v, want pending, queued", st, err)
	}

	child := exec.Command(os.Args[0], "-test.run=^$")
	child.Env = append(os.Environ(), envKillChild+"="+dir)
	child.Stdout, child.Stderr = t.Output(), t.Output()
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- child.Wait() }()
	t.Cleanup(func() { child.Process.Kill() })
	ceiling := time.Now().Add(2 * time.Minute)
	for {
		if _, err := os.Stat(filepath.Join(dir, extractingMarker)); err == nil {
			break
		}
		select {
		case err := <-exited:
			t.Fatalf("worker process exited early: %v", err)
		default:
		}
		if time.Now().After(ceiling) {
			t.Fatal("the worker process did not start extracting within 2 minutes")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := child.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	err = <-exited
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Fatalf("worker ended with %v, want killed by SIGKILL", err)
	}
	killed := time.Now()
	if st, err := db.ContentState(ctx, e.p, f.ID); err != nil || st.Status != kindex.StatusPending {
		t.Fatalf("state after the kill: %+v %v", st, err)
	}

	// The restart: a working host with the production lease.
	host, err := jobs.New(db, jobs.Config{Registry: reg, Work: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := host.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer host.Stop(ctx)
	select {
	case <-gate.started:
	case <-time.After(time.Until(ceiling)):
		t.Fatal("the killed worker's job was not retried within 2 minutes")
	}
	t.Logf("retry started %s after the kill", time.Since(killed).Round(time.Millisecond))
	st, err = db.ContentState(ctx, e.p, f.ID)
	if err != nil || st.Status != kindex.StatusPending || !strings.HasPrefix(st.Note, ingest.NoteRetryingAfterRestart) {
		t.Fatalf("state during the retry: %+v %v, want pending with a note naming the restart", st, err)
	}
	t.Logf("note during the retry: %q", st.Note)
	close(gate.release)
	for {
		st, err = db.ContentState(ctx, e.p, f.ID)
		if err == nil && st.Status == kindex.StatusIndexed {
			break
		}
		if time.Now().After(ceiling) {
			t.Fatalf("not indexed within 2 minutes of the kill: %+v %v", st, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Logf("indexed %s after the kill", time.Since(killed).Round(time.Millisecond))
	if st.Note != "" || st.Error != "" {
		t.Fatalf("indexed content keeps note %q, error %q", st.Note, st.Error)
	}
	hits, err := db.SearchLexical(ctx, e.p, kindex.Query{Text: "hotel reimbursed"})
	if err != nil || len(hits) != 1 || hits[0].FileID != f.ID {
		t.Fatalf("search after the retry: %+v %v", hits, err)
	}
}
