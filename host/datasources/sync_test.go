package datasources_test

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agenthost/agenthost/host/connections"
	"github.com/agenthost/agenthost/host/datasources"
	"github.com/agenthost/agenthost/host/datasources/dsrecord"
	"github.com/agenthost/agenthost/host/datasources/syncjob"
	"github.com/agenthost/agenthost/host/files/filemeta"
	"github.com/agenthost/agenthost/host/jobs"
	"github.com/agenthost/agenthost/host/knowledge/extract"
	"github.com/agenthost/agenthost/host/knowledge/ingest"
	"github.com/agenthost/agenthost/host/knowledge/kindex"
	"github.com/agenthost/agenthost/host/notifications"
	"github.com/agenthost/agenthost/host/tenancy"
	"github.com/agenthost/agenthost/host/worldtest"
	"github.com/agenthost/agenthost/pdk/connector/wire"
)

// waitJob waits for a queue job to reach a final state.
func waitJob(t *testing.T, q *jobs.Queue, id int64) *jobs.Info {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		info, err := q.Get(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		if info.State.Final() {
			return info
		}
		if time.Now().After(deadline) {
			t.Fatalf("job %d still %s", id, info.State)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (e *env) read(t *testing.T, id string) []byte {
	t.Helper()
	_, b := worldtest.ReadFile(t, e.files, e.alice, id)
	return b
}

// folderPath names a file's folder as "a/b".
func (e *env) folderPath(t *testing.T, id string) string {
	t.Helper()
	fs, err := e.files.Folders(context.Background(), e.alice, e.w.Workspace)
	if err != nil {
		t.Fatal(err)
	}
	byID := map[string]filemeta.Folder{}
	for _, f := range fs {
		byID[f.ID] = f
	}
	var parts []string
	for id != "" {
		f := byID[id]
		parts = append([]string{f.Name}, parts...)
		id = f.ParentID
	}
	return strings.Join(parts, "/")
}

// TestSyncJiraProjectThroughTheQueue: alice's data source of the Jira
// project PROJ synced by the job queue's job ("sync now"): every
// attachment of the project's issues lands in the workspace folder named
// after the data source (a sub-folder per issue), byte for byte, handed
// to the indexer and indexed by the real PDF extractor; nothing of
// another project is fetched. A second sync downloads nothing; after an
// attachment changed and one was added, the third fetches just those two,
// the changed one as a new version of the same file. A source the
// provider does not know ends its job at once, without retries.
func TestSyncJiraProjectThroughTheQueue(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	if err := jobs.Migrate(ctx, e.w.DB); err != nil {
		t.Fatal(err)
	}
	var svc *datasources.Service
	reg := jobs.NewRegistry()
	syncjob.Register(reg, func() syncjob.Worker { return svc })
	q, err := jobs.New(e.w.DB, jobs.Config{Registry: reg, Work: true, Queues: map[string]int{syncjob.QueueName: 1}, RetryBase: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if err := q.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = q.Stop(context.Background()) })
	svc = e.service(syncjob.Queue{Q: q, MaxAttempts: 3})
	e.svc = svc
	d := e.project(t, false)
	if d.State != dsrecord.SyncIdle || d.LastSynced != nil {
		t.Fatalf("new data source %+v", d)
	}

	syncNow := func() datasources.DataSource {
		t.Helper()
		got, err := svc.SyncNow(ctx, e.alice, d.ID)
		if err != nil {
			t.Fatal(err)
		}
		// A worker may have taken the job, or finished it, already.
		if (got.State != dsrecord.SyncQueued && got.State != dsrecord.SyncRunning && got.State != dsrecord.SyncIdle) || got.QueueJobID == 0 {
			t.Fatalf("after sync now: %+v", got)
		}
		if info := waitJob(t, q, got.QueueJobID); info.State != jobs.StateCompleted {
			t.Fatalf("sync job %s: %+v", info.State, info.Errors)
		}
		got, err = svc.Get(ctx, e.alice, d.ID)
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	got := syncNow()
	if got.State != dsrecord.SyncIdle || got.LastSynced == nil || got.LastError != "" || !strings.HasPrefix(got.LastSummary, "3 new, 0 changed, 0 unchanged") || got.FolderID == "" {
		t.Fatalf("after the first sync: %+v", got)
	}
	want := map[string][]byte{"camlidl.pdf": e.pdf, "notes.txt": e.note, "checklist.txt": []byte("- build\n- test\n")}
	wantDir := map[string]string{"camlidl.pdf": "Jira PROJ/PROJ-1", "notes.txt": "Jira PROJ/PROJ-1", "checklist.txt": "Jira PROJ/PROJ-3"}
	stored := map[string]filemeta.Item{}
	for name, content := range want {
		fs := e.filesNamed(t, name)
		if len(fs) != 1 {
			t.Fatalf("%d files named %s", len(fs), name)
		}
		if !bytes.Equal(e.read(t, fs[0].ID), content) {
			t.Fatalf("%s differs from the attachment", name)
		}
		if dir := e.folderPath(t, fs[0].FolderID); dir != wantDir[name] {
			t.Fatalf("%s is in %q, want %q", name, dir, wantDir[name])
		}
		stored[name] = fs[0]
	}
	if len(e.filesNamed(t, "ops.txt")) != 0 || slices.ContainsFunc(e.site.Requests(), func(r string) bool { return strings.Contains(r, "OPS") }) {
		t.Fatal("a file of another project was synced")
	}
	if ids := e.index.IDs(); len(ids) != 3 {
		t.Fatalf("indexer got %v", ids)
	}
	// Indexed by the real PDF extractor, as an upload is.
	ing := ingest.New(e.w.DB, e.w.Blobs, extract.New(e.host), nil)
	if _, err := ing.Ingest(ctx, stored["camlidl.pdf"].ID, false); err != nil {
		t.Fatal(err)
	}
	if st, err := e.w.DB.ContentState(ctx, e.alice, stored["camlidl.pdf"].ID); err != nil || st.Status != kindex.StatusIndexed {
		t.Fatalf("content state %+v %v", st, err)
	}

	// Unchanged: nothing downloaded again.
	before := e.contentRequests()
	got = syncNow()
	if n := e.contentRequests() - before; n != 0 || !strings.HasPrefix(got.LastSummary, "0 new, 0 changed, 3 unchanged") {
		t.Fatalf("second sync downloaded %d files: %s", n, got.LastSummary)
	}

	// One attachment changed, one added (uploaded through the connector).
	changed := []byte("Release notes: camlidl 1.04 builds on amd64 and arm64.\n")
	if !e.site.ReplaceAttachment(e.noteID, changed, time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC)) {
		t.Fatal("no such attachment")
	}
	if _, err := e.resolver.Upload(ctx, e.alice, wire.UploadRequest{Connection: e.conn.ID, Service: "issues", Path: "PROJ-2", Name: "plan.txt", MIMEType: "text/plain", Data: []byte("the plan")}); err != nil {
		t.Fatal(err)
	}
	before = e.contentRequests()
	got = syncNow()
	if n := e.contentRequests() - before; n != 2 || !strings.HasPrefix(got.LastSummary, "1 new, 1 changed, 2 unchanged") {
		t.Fatalf("third sync downloaded %d files: %s", n, got.LastSummary)
	}
	notes := e.filesNamed(t, "notes.txt")
	if len(notes) != 1 || notes[0].ID != stored["notes.txt"].ID || notes[0].Version != 2 || !bytes.Equal(e.read(t, notes[0].ID), changed) {
		t.Fatalf("changed file: %+v", notes)
	}
	if plan := e.filesNamed(t, "plan.txt"); len(plan) != 1 || e.folderPath(t, plan[0].FolderID) != "Jira PROJ/PROJ-2" {
		t.Fatalf("new file: %+v", plan)
	}
	// The changed and the new file went to the indexer too.
	if ids := e.index.IDs(); len(ids) != 5 || !slices.Contains(ids[3:], stored["notes.txt"].ID) {
		t.Fatalf("indexer got %v", ids)
	}

	// A source the provider does not know fails for good: the queue's job
	// ends after one attempt (no retries), the source says why.
	gone, err := svc.Create(ctx, e.alice, datasources.NewDataSource{WorkspaceID: e.w.Workspace, ConnectionID: e.conn.ID, Service: "issues", Path: "PROJ-99", Label: "Gone"})
	if err != nil {
		t.Fatal(err)
	}
	queued, err := svc.SyncNow(ctx, e.alice, gone.ID)
	if err != nil {
		t.Fatal(err)
	}
	if info := waitJob(t, q, queued.QueueJobID); info.State != jobs.StateCancelled || info.Attempt != 1 {
		t.Fatalf("job of an unknown source: %s after %d attempts", info.State, info.Attempt)
	}
	if got, _ := svc.Get(ctx, e.alice, gone.ID); got.State != dsrecord.SyncFailed || !strings.Contains(got.LastError, "not_found") {
		t.Fatalf("unknown source: %+v", got)
	}
	// Alice is told of each sync's end once: three completed, one failed.
	pg, err := e.w.DB.Notifications(ctx, e.alice, 10)
	if err != nil || len(pg.Items) != 4 || pg.Unread != 4 {
		t.Fatalf("notifications %+v %v, want 4 unread", pg, err)
	}
	if n := pg.Items[0]; n.Kind != notifications.Sync || n.Status != "failed" || n.Name != "Gone" || !strings.Contains(n.Detail, "not_found") ||
		n.WorkspaceID != e.w.Workspace || !strings.HasPrefix(n.SubjectID, gone.ID+"#") {
		t.Errorf("the failed sync told as %+v", n)
	}
	for _, n := range pg.Items[1:] {
		if n.Kind != notifications.Sync || n.Status != "completed" || n.Name != "Jira PROJ" || !strings.HasPrefix(n.SubjectID, d.ID+"#") {
			t.Errorf("a sync told as %+v", n)
		}
	}
}

// TestFailedDownloadStoresNothing: a download that fails mid-sync (Jira
// answers 500 for the content) leaves no file and no record of it; the
// other files are stored; the sync fails for the queue to retry, with the
// error on the data source; the retry resumes from where the attempt
// stopped: it fetches only the missing file, listing nothing again. When
// the last attempt fails, the source says failed.
func TestFailedDownloadStoresNothing(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	d := e.project(t, false)
	if _, err := e.svc.SyncNow(ctx, e.alice, d.ID); err != nil {
		t.Fatal(err)
	}
	c := e.queue.all()[0]
	e.site.FailContent(1) // the first download: camlidl.pdf
	res, err := e.svc.Sync(ctx, c.id, c.seq, 1, 3)
	if err == nil || errors.Is(err, datasources.ErrPermanent) || res.Failed != 1 || res.New != 2 {
		t.Fatalf("sync with a failing download: %+v %v", res, err)
	}
	if fs := e.filesNamed(t, "camlidl.pdf"); len(fs) != 0 {
		t.Fatalf("a failed download left %d files", len(fs))
	}
	got, _ := e.svc.Get(ctx, e.alice, d.ID)
	if got.State != dsrecord.SyncRetrying || !strings.Contains(got.LastError, "camlidl.pdf") || !strings.Contains(got.LastError, "attempt 1 of 3") || got.LastSynced != nil {
		t.Fatalf("after the failed attempt: %+v", got)
	}
	// Meanwhile nobody else may start a sync of it.
	if _, err := e.svc.SyncNow(ctx, e.alice, d.ID); !errors.Is(err, datasources.ErrBusy) || !errors.Is(err, tenancy.ErrConflict) {
		t.Fatalf("sync now during a retry: %v", err)
	}
	before, listed := e.contentRequests(), len(e.site.Requests())
	res, err = e.svc.Sync(ctx, c.id, c.seq, 2, 3)
	if err != nil || res.New != 1 || res.Unchanged != 0 || e.contentRequests()-before != 1 {
		t.Fatalf("retry: %+v %v, %d downloads", res, err, e.contentRequests()-before)
	}
	for _, r := range e.site.Requests()[listed:] {
		if strings.Contains(r, "/search/") || strings.Contains(r, "/issue/") {
			t.Fatalf("the retry listed again: %s", r)
		}
	}
	if fs := e.filesNamed(t, "camlidl.pdf"); len(fs) != 1 || !bytes.Equal(e.read(t, fs[0].ID), e.pdf) {
		t.Fatalf("after the retry: %+v", fs)
	}
	if got, _ := e.svc.Get(ctx, e.alice, d.ID); got.State != dsrecord.SyncIdle || got.LastError != "" || got.LastSynced == nil {
		t.Fatalf("after the retry: %+v", got)
	}

	// A file changed, and its download fails on the last attempt: the file
	// keeps its old content and the source says failed.
	e.site.ReplaceAttachment(e.noteID, []byte("new notes"), time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC))
	if _, err := e.svc.SyncNow(ctx, e.alice, d.ID); err != nil {
		t.Fatal(err)
	}
	c = e.queue.all()[1]
	e.site.FailContent(1)
	if _, err := e.svc.Sync(ctx, c.id, c.seq, 3, 3); err == nil {
		t.Fatal("the last attempt failed silently")
	}
	if fs := e.filesNamed(t, "notes.txt"); len(fs) != 1 || fs[0].Version != 1 || !bytes.Equal(e.read(t, fs[0].ID), e.note) {
		t.Fatalf("a failed download changed the file: %+v", fs)
	}
	if got, _ := e.svc.Get(ctx, e.alice, d.ID); got.State != dsrecord.SyncFailed || !strings.Contains(got.LastError, "notes.txt") {
		t.Fatalf("after the last attempt: %+v", got)
	}
	// A stale job (an older claim) does nothing.
	before = e.contentRequests()
	if res, err := e.svc.Sync(ctx, c.id, c.seq-1, 1, 3); err != nil || res.New+res.Changed+res.Unchanged+res.Failed != 0 || e.contentRequests() != before {
		t.Fatalf("stale job: %+v %v", res, err)
	}
}

// TestOversizedFileIsSkipped: a file over the sync's size limit is refused
// by the connector before its content is fetched; the sync skips it,
// stores the others and says why.
func TestOversizedFileIsSkipped(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	e.svc = datasources.New(e.w.DB, e.resolver, e.files, e.queue, datasources.Config{Now: e.clock.Now, MaxFileBytes: 1000}, nil)
	d := e.project(t, false)
	if _, err := e.svc.SyncNow(ctx, e.alice, d.ID); err != nil {
		t.Fatal(err)
	}
	c := e.queue.all()[0]
	res, err := e.svc.Sync(ctx, c.id, c.seq, 1, 3)
	if err != nil || res.Skipped != 1 || res.New != 2 || !strings.Contains(res.Summary(), "too_large") {
		t.Fatalf("%+v %v", res, err)
	}
	if len(e.filesNamed(t, "camlidl.pdf")) != 0 {
		t.Fatal("an oversized file was stored")
	}
}

// TestRevokedConnection: a data source whose connection was revoked says
// so, is refused "sync now" with a clear error, and a sync claimed before
// the revocation ends permanently without a request to the provider.
func TestRevokedConnection(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	d := e.project(t, true)
	if _, err := e.svc.SyncNow(ctx, e.alice, d.ID); err != nil {
		t.Fatal(err)
	}
	c := e.queue.all()[0]
	if err := e.conns.Revoke(ctx, e.alice, e.conn.ID); err != nil {
		t.Fatal(err)
	}
	before := len(e.site.Requests())
	_, err := e.svc.Sync(ctx, c.id, c.seq, 1, 10)
	if !errors.Is(err, datasources.ErrPermanent) || !errors.Is(err, connections.ErrRevoked) || len(e.site.Requests()) != before {
		t.Fatalf("sync over a revoked connection: %v", err)
	}
	got, err := e.svc.Get(ctx, e.alice, d.ID)
	if err != nil || !got.ConnectionRevoked || got.State != dsrecord.SyncFailed || !strings.Contains(got.LastError, "revoked") {
		t.Fatalf("data source after revocation: %+v %v", got, err)
	}
	if _, err := e.svc.SyncNow(ctx, e.alice, d.ID); !errors.Is(err, connections.ErrRevoked) || !strings.Contains(err.Error(), "connect again") {
		t.Fatalf("sync now: %v", err)
	}
	e.clock.Add(24 * time.Hour)
	if n, err := e.svc.Tick(ctx); err != nil || n != 0 {
		t.Fatalf("the scheduler queued a revoked source: %d %v", n, err)
	}
	if _, err := e.svc.Create(ctx, e.alice, datasources.NewDataSource{WorkspaceID: e.w.Workspace, ConnectionID: e.conn.ID, Service: "issues", Path: "PROJ", Label: "again"}); !errors.Is(err, tenancy.ErrInvalid) || !strings.Contains(err.Error(), "revoked") {
		t.Fatalf("a new data source over a revoked connection: %v", err)
	}
}

// TestAnotherUsersDataSource: bob (a member of the same workspace) and
// carol (another tenant's admin) can neither see, sync nor delete alice's
// data source, nor make one over her connection; a service no connector
// offers is refused.
func TestAnotherUsersDataSource(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	d := e.project(t, false)
	for name, p := range map[string]tenancy.Principal{"bob": e.bob, "carol": e.carol} {
		if _, err := e.svc.Get(ctx, p, d.ID); !errors.Is(err, tenancy.ErrNotFound) {
			t.Errorf("%s reads it: %v", name, err)
		}
		if l, err := e.svc.List(ctx, p, ""); err != nil || len(l) != 0 {
			t.Errorf("%s lists %d: %v", name, len(l), err)
		}
		if _, err := e.svc.SyncNow(ctx, p, d.ID); !errors.Is(err, tenancy.ErrNotFound) {
			t.Errorf("%s syncs it: %v", name, err)
		}
		if err := e.svc.Delete(ctx, p, d.ID); !errors.Is(err, tenancy.ErrNotFound) {
			t.Errorf("%s deletes it: %v", name, err)
		}
	}
	if _, err := e.svc.Create(ctx, e.bob, datasources.NewDataSource{WorkspaceID: e.w.Workspace, ConnectionID: e.conn.ID, Service: "issues", Path: "PROJ", Label: "mine"}); !errors.Is(err, tenancy.ErrNotFound) {
		t.Fatalf("bob over alice's connection: %v", err)
	}
	if len(e.queue.all()) != 0 || len(e.site.Requests()) != 0 {
		t.Fatal("someone else's attempt reached the queue or the provider")
	}
	for name, n := range map[string]datasources.NewDataSource{
		"unknown service": {WorkspaceID: e.w.Workspace, ConnectionID: e.conn.ID, Service: "mail", Label: "m"},
		"bad label":       {WorkspaceID: e.w.Workspace, ConnectionID: e.conn.ID, Service: "issues", Label: "a/b"},
		"bad interval":    {WorkspaceID: e.w.Workspace, ConnectionID: e.conn.ID, Service: "issues", Label: "i", AutoSync: true, IntervalSeconds: 5},
	} {
		if _, err := e.svc.Create(ctx, e.alice, n); !errors.Is(err, tenancy.ErrInvalid) {
			t.Errorf("%s: %v", name, err)
		}
	}
	if l, _ := e.svc.List(ctx, e.alice, ""); len(l) != 1 {
		t.Fatalf("bad input left %d data sources", len(l))
	}
}

// TestSchedulerEnqueuesDueSourceOnce: on the injected clock, an
// auto-syncing source is due at once and enqueued once, however many
// hosts tick; not again while its sync is in flight, nor before its
// interval has passed after it; then once more. A service built anew (a
// restarted host) sees the same state.
func TestSchedulerEnqueuesDueSourceOnce(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	d := e.project(t, true)
	manual := e.project2(t)
	other := &claims{}
	hostB := e.service(other)
	if n, err := e.svc.Tick(ctx); err != nil || n != 1 {
		t.Fatalf("first tick: %d %v", n, err)
	}
	for _, s := range []*datasources.Service{e.svc, hostB} {
		if n, err := s.Tick(ctx); err != nil || n != 0 {
			t.Fatalf("a second tick queued %d, %v", n, err)
		}
	}
	if got := append(e.queue.all(), other.all()...); len(got) != 1 || got[0].id != d.ID {
		t.Fatalf("queued %+v", got)
	}
	c := e.queue.all()[0]
	e.clock.Add(10 * time.Minute)
	if _, err := e.svc.Sync(ctx, c.id, c.seq, 1, 3); err != nil {
		t.Fatal(err)
	}
	got, _ := e.svc.Get(ctx, e.alice, d.ID)
	if got.NextSync == nil || !got.NextSync.Equal(e.clock.Now().Add(time.Hour)) {
		t.Fatalf("next sync %v, want an hour after %v", got.NextSync, e.clock.Now())
	}
	e.clock.Add(59 * time.Minute)
	restarted := e.service(other)
	if n, _ := restarted.Tick(ctx); n != 0 {
		t.Fatal("queued before the interval passed")
	}
	e.clock.Add(time.Minute)
	if n, _ := restarted.Tick(ctx); n != 1 {
		t.Fatal("not queued when due")
	}
	if all := other.all(); len(all) != 1 || all[0].id != d.ID || all[0].seq != c.seq+1 {
		t.Fatalf("queued %+v", all)
	}
	// The manual source never was.
	for _, q := range append(e.queue.all(), other.all()...) {
		if q.id == manual.ID {
			t.Fatal("a source without autoSync was scheduled")
		}
	}
}

func (e *env) project2(t *testing.T) datasources.DataSource {
	t.Helper()
	d, err := e.svc.Create(context.Background(), e.alice, datasources.NewDataSource{WorkspaceID: e.w.Workspace, ConnectionID: e.conn.ID,
		Service: "issues", Path: "OPS", Label: "Jira OPS"})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// tree is a provider of the walk test: folders by path, each listing its
// entries, one page per call unless pages says otherwise. It stands for a
// connector (a Remote), so the walk's bounds are tested on shapes no fake
// provider makes: a folder that contains its ancestor, a chain deeper than
// the limit, a cursor handed back again.
type tree struct {
	folders map[string][]wire.Entry
	data    map[string][]byte
	browsed []string
}

func (tr *tree) Browse(_ context.Context, _ tenancy.Principal, r wire.BrowseRequest) (wire.Listing, error) {
	tr.browsed = append(tr.browsed, r.Path)
	l := wire.Listing{Entries: tr.folders[r.Path]}
	if r.Path == "broken" {
		return wire.Listing{}, errors.New("the provider failed listing this folder")
	}
	if r.Path == "loop" {
		// Every page answers the same cursor.
		l.Next = "again"
	}
	return l, nil
}

func (tr *tree) Download(_ context.Context, _ tenancy.Principal, r wire.DownloadRequest) (wire.File, error) {
	return wire.File{Name: r.Path[strings.LastIndex(r.Path, "/")+1:], MIMEType: "text/plain", Data: tr.data[r.Path]}, nil
}

func (tr *tree) Services(string) []string { return []string{"drive"} }

// TestWalkIsBoundedAndCycleSafe: a folder that lists its own ancestor is
// not followed again (by entry id), a chain deeper than MaxDepth stops at
// it, a connector repeating its cursor does not page forever, a folder
// that fails to list fails the attempt without stopping the others, and
// the files within the bounds are stored in their sub-folders.
func TestWalkIsBoundedAndCycleSafe(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	tr := &tree{folders: map[string][]wire.Entry{
		"root":         {{ID: "1", Name: "a", Path: "root/a", Folder: true}, {ID: "f0", Name: "top.txt", Path: "root/top.txt"}, {ID: "L", Name: "loop", Path: "loop", Folder: true}, {ID: "B", Name: "broken", Path: "broken", Folder: true}},
		"root/a":       {{ID: "2", Name: "b", Path: "root/a/b", Folder: true}, {ID: "f1", Name: "one.txt", Path: "root/a/one.txt"}},
		"root/a/b":     {{ID: "1", Name: "a", Path: "root/a/b/a", Folder: true}, {ID: "3", Name: "c", Path: "root/a/b/c", Folder: true}},
		"root/a/b/c":   {{ID: "4", Name: "d", Path: "root/a/b/c/d", Folder: true}, {ID: "f3", Name: "deep.txt", Path: "root/a/b/c/deep.txt"}},
		"root/a/b/c/d": {{ID: "f4", Name: "too-deep.txt", Path: "root/a/b/c/d/too-deep.txt"}},
		"loop":         {{ID: "f5", Name: "looped.txt", Path: "loop/looped.txt"}},
	}, data: map[string][]byte{"root/top.txt": []byte("top"), "root/a/one.txt": []byte("one"), "root/a/b/c/deep.txt": []byte("deep"),
		"root/a/b/c/d/too-deep.txt": []byte("x"), "loop/looped.txt": []byte("looped")}}
	svc := datasources.New(e.w.DB, tr, e.files, e.queue, datasources.Config{Now: e.clock.Now, MaxDepth: 3}, nil)
	d, err := svc.Create(ctx, e.alice, datasources.NewDataSource{WorkspaceID: e.w.Workspace, ConnectionID: e.conn.ID, Service: "drive", Path: "root", Label: "Drive"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.SyncNow(ctx, e.alice, d.ID); err != nil {
		t.Fatal(err)
	}
	c := e.queue.all()[0]
	// The folder that fails to list fails the attempt, after the rest is stored.
	res, err := svc.Sync(ctx, c.id, c.seq, 1, 3)
	if err == nil || errors.Is(err, datasources.ErrPermanent) || res.New != 4 || res.Failed != 1 || !res.Truncated || !strings.Contains(err.Error(), "broken") {
		t.Fatalf("%+v %v", res, err)
	}
	if slices.Contains(tr.browsed, "root/a/b/a") || slices.Contains(tr.browsed, "root/a/b/c/d") {
		t.Fatalf("browsed %v: followed the cycle or went too deep", tr.browsed)
	}
	if n := len(slices.DeleteFunc(slices.Clone(tr.browsed), func(p string) bool { return p != "loop" })); n != 2 {
		t.Fatalf("the repeating cursor was followed %d times", n)
	}
	for name, dir := range map[string]string{"top.txt": "Drive", "one.txt": "Drive/a", "deep.txt": "Drive/a/b/c", "looped.txt": "Drive/loop"} {
		fs := e.filesNamed(t, name)
		if len(fs) != 1 || e.folderPath(t, fs[0].FolderID) != dir {
			t.Errorf("%s: %+v", name, fs)
		}
	}
	if len(e.filesNamed(t, "too-deep.txt")) != 0 {
		t.Fatal("a file beyond the depth limit was synced")
	}
}

// TestOwnerLosesTheWorkspace: a sync acts for the data source's owner
// only, with the owner's rights of the moment: once the owner is a viewer
// of the workspace, or no member at all, the sync stores nothing there and
// ends for good, saying why.
func TestOwnerLosesTheWorkspace(t *testing.T) {
	for _, role := range []tenancy.Role{tenancy.RoleViewer, ""} {
		t.Run("role="+string(role), func(t *testing.T) {
			e := newEnv(t)
			ctx := context.Background()
			d := e.project(t, false)
			if _, err := e.svc.SyncNow(ctx, e.alice, d.ID); err != nil {
				t.Fatal(err)
			}
			if err := e.w.DB.SetMembership(ctx, tenancy.Membership{WorkspaceID: e.w.Workspace, UserID: e.alice.UserID, Role: role}); err != nil {
				t.Fatal(err)
			}
			c := e.queue.all()[0]
			_, err := e.svc.Sync(ctx, c.id, c.seq, 1, 5)
			if !errors.Is(err, datasources.ErrPermanent) {
				t.Fatalf("sync without write access: %v", err)
			}
			page, _ := e.files.List(ctx, e.bob, filemeta.Filter{WorkspaceID: e.w.Workspace, Limit: 100})
			if len(page.Items) != 0 {
				t.Fatalf("%d files stored for an owner who lost the workspace", len(page.Items))
			}
			if got, _ := e.svc.Get(ctx, e.alice, d.ID); got.State != dsrecord.SyncFailed || got.LastError == "" {
				t.Fatalf("after: %+v", got)
			}
		})
	}
}
