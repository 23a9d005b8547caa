package indexing_test

import (
	"archive/zip"
	"bytes"
	"context"
	"errors"
	"fmt"
	"runtime"
	"runtime/metrics"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pdfcpu/pdfcpu/pkg/api"
	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu/model"

	"github.com/agenthost/agenthost/host/files"
	"github.com/agenthost/agenthost/host/files/filemeta"
	"github.com/agenthost/agenthost/host/indexing"
	"github.com/agenthost/agenthost/host/jobs"
	"github.com/agenthost/agenthost/host/knowledge/extract"
	"github.com/agenthost/agenthost/host/knowledge/ingest"
	"github.com/agenthost/agenthost/host/knowledge/kindex"
	"github.com/agenthost/agenthost/host/tenancy"
	"github.com/agenthost/agenthost/host/wasm"
	"github.com/agenthost/agenthost/host/wasm/wasmtest"
	"github.com/agenthost/agenthost/internal/testcorpus"
	"github.com/agenthost/agenthost/pdk/content"
	"github.com/agenthost/agenthost/plugins/containers/archive/archivetest"
)

// countingResolver counts container plugin calls.
type countingResolver struct {
	inner *extract.Containers
	n     atomic.Int32
}

func (c *countingResolver) Handles(name, mimeType string) bool {
	return c.inner.Handles(name, mimeType)
}

func (c *countingResolver) Resolve(ctx context.Context, name, mimeType, only string, in wasm.Input, sink wasm.OutputSink) (content.Index, error) {
	c.n.Add(1)
	return c.inner.Resolve(ctx, name, mimeType, only, in, sink)
}

// containerEnv is an env with the built-in extractors and the container
// plugin, counting calls of both.
type containerEnv struct {
	env
	ingester *ingest.Pipeline
	svc      *files.Service
	ex       *countingExtractor
	res      *countingResolver
	entries  *indexing.Containers
}

func newContainerEnv(t *testing.T) containerEnv {
	t.Helper()
	e := newEnv(t)
	h := wasmtest.Host(t, "containers", "pdf", "office")
	ex := &countingExtractor{inner: extract.New(h)}
	res := &countingResolver{inner: extract.NewContainers(h)}
	ing := ingest.New(e.db, e.blobs, ex, nil).WithContainers(res, e.db, e.blobs)
	return containerEnv{env: e, ingester: ing, svc: files.NewService(e.db, e.blobs, 0), ex: ex, res: res, entries: indexing.NewContainers(e.db, ing)}
}

// ingest uploads data and indexes it, within the given time and live-heap
// growth: a hostile archive costs one bounded job, never the host.
func (c containerEnv) ingest(t *testing.T, name string, data []byte, maxTime time.Duration, maxHeap uint64) (filemeta.Item, kindex.ContentState, []kindex.ContainerEntry) {
	t.Helper()
	f := c.upload(t, c.svc, name, data)
	var err error
	growth, took := measure(func() { _, err = c.ingester.Ingest(context.Background(), f.ID, false) })
	t.Logf("%s: ingested in %v, heap +%d MiB, err=%v", name, took.Round(time.Millisecond), growth>>20, err)
	if took > maxTime || growth > maxHeap {
		t.Errorf("%s: took %v (at most %v), heap grew %d MiB (at most %d)", name, took, maxTime, growth>>20, maxHeap>>20)
	}
	st, serr := c.db.ContentState(context.Background(), c.p, f.ID)
	if serr != nil {
		t.Fatalf("%s: state: %v (ingest: %v)", name, serr, err)
	}
	entries, eerr := c.entries.Entries(context.Background(), c.p, f.ID)
	if eerr != nil {
		t.Fatal(eerr)
	}
	return f, st, entries
}

func entryAt(entries []kindex.ContainerEntry, path string) (kindex.ContainerEntry, bool) {
	for _, e := range entries {
		if e.Path == path {
			return e, true
		}
	}
	return kindex.ContainerEntry{}, false
}

// measure runs fn and reports its duration and the peak growth of the live
// heap, sampled every half millisecond.
func measure(fn func()) (growth uint64, took time.Duration) {
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	read := func() uint64 { metrics.Read(sample); return sample[0].Value.Uint64() }
	runtime.GC()
	base := read()
	var peak atomic.Uint64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		tick := time.NewTicker(500 * time.Microsecond)
		defer tick.Stop()
		for {
			if v := read(); v > peak.Load() {
				peak.Store(v)
			}
			select {
			case <-stop:
				return
			case <-tick.C:
			}
		}
	})
	start := time.Now()
	fn()
	took = time.Since(start)
	close(stop)
	wg.Wait()
	p := max(peak.Load(), read())
	if p < base {
		return 0, took
	}
	return p - base, took
}

// member is a user of the env's tenant in a second workspace, who cannot
// read the env's files.
func (c containerEnv) outsider(t *testing.T) tenancy.Principal {
	t.Helper()
	ctx := context.Background()
	ws, err := c.db.CreateWorkspace(ctx, tenancy.Workspace{TenantID: c.p.TenantID, Name: "other"})
	if err != nil {
		t.Fatal(err)
	}
	u, err := c.db.CreateUser(ctx, tenancy.User{TenantID: c.p.TenantID, Email: "o@t"})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.db.SetMembership(ctx, tenancy.Membership{WorkspaceID: ws.ID, UserID: u.ID, Role: tenancy.RoleMember}); err != nil {
		t.Fatal(err)
	}
	return tenancy.Principal{TenantID: c.p.TenantID, UserID: u.ID}
}

// TestContainerIngestion: a real archive (nested zips three levels deep,
// PDFs, office files) goes through the sandboxed container plugin; every
// inner file is stored, extracted by its own extractor and indexed, found
// through the archive with its full container path by a user who can read
// the archive and by no one else. The same archive again, or one of its
// inner files uploaded alone, costs no plugin call at all.
func TestContainerIngestion(t *testing.T) {
	ctx := context.Background()
	c := newContainerEnv(t)
	archive, st, entries := c.ingest(t, "project-docs.zip", testcorpus.Read(t, "archives", "benign", "project-docs.zip"), 3*time.Minute, 1<<30)
	if st.Status != kindex.StatusIndexed || st.Error != "" || len(entries) != 14 {
		t.Fatalf("archive: %+v, %d entries", st, len(entries))
	}
	for _, e := range entries {
		if e.Status != string(kindex.StatusIndexed) || e.Error != "" {
			t.Errorf("entry %+v", e)
		}
	}
	const camlidl = "project-docs.zip/attachments/inner-bundle.zip/manuals/deb-camlidl-1.04.pdf"
	e, ok := entryAt(entries, camlidl)
	if !ok || e.Size != 192532 || e.MIMEType != "application/pdf" || len(e.SHA256) != 64 {
		t.Fatalf("nested PDF entry: %+v", e)
	}
	if lvl3, ok := entryAt(entries, "project-docs.zip/attachments/inner-bundle.zip/deeper/level3.zip"); !ok || !lvl3.Container {
		t.Fatalf("nested container entry: %+v", lvl3)
	}

	// A question about page 3 of the PDF two zips deep finds it through the
	// archive, by page and container path.
	words := strings.Fields(string(testcorpus.Read(t, "pdf", "deb-camlidl-1.04.pages", "0003.txt")))
	query := strings.Join(words[min(20, len(words)-8):min(28, len(words))], " ")
	hits, err := c.db.SearchLexical(ctx, c.p, kindex.Query{Text: query, FileIDs: []string{archive.ID}, Limit: 5})
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, h := range hits {
		found = found || (h.FileID == archive.ID && h.FileName == "project-docs.zip" && h.Ref.ContainerPath == camlidl && h.Ref.PageIndex == 3)
	}
	if !found {
		t.Fatalf("no hit on page 3 of %s: %+v", camlidl, hits)
	}
	// Someone who cannot read the archive finds nothing of it.
	other := c.outsider(t)
	if hits, err := c.db.SearchLexical(ctx, other, kindex.Query{Text: query}); err != nil || len(hits) != 0 {
		t.Fatalf("an outsider finds the archive's text: %+v %v", hits, err)
	}
	if _, err := c.entries.Entries(ctx, other, archive.ID); !errors.Is(err, tenancy.ErrNotFound) {
		t.Fatalf("an outsider lists the entries: %v", err)
	}
	if _, err := c.entries.ExtractEntry(ctx, other, archive.ID, camlidl); !errors.Is(err, tenancy.ErrNotFound) {
		t.Fatalf("an outsider extracts an entry: %v", err)
	}

	// The same archive again, and one of its PDFs alone: nothing runs.
	calls, extractions := c.res.n.Load(), c.ex.n.Load()
	if calls != 1 {
		t.Fatalf("%d container plugin calls for one archive", calls)
	}
	again := c.upload(t, c.svc, "project-docs-copy.zip", testcorpus.Read(t, "archives", "benign", "project-docs.zip"))
	pdf := c.upload(t, c.svc, "camlidl.pdf", testcorpus.Read(t, "pdf", "deb-camlidl-1.04.pdf"))
	for _, f := range []filemeta.Item{again, pdf} {
		if extracted, err := c.ingester.Ingest(ctx, f.ID, false); err != nil || extracted {
			t.Fatalf("%s: extracted=%v %v", f.Name, extracted, err)
		}
	}
	if c.res.n.Load() != calls || c.ex.n.Load() != extractions {
		t.Fatalf("re-upload ran plugins: %d→%d container calls, %d→%d extractions", calls, c.res.n.Load(), extractions, c.ex.n.Load())
	}
	if st, err := c.db.ContentState(ctx, c.p, pdf.ID); err != nil || st.Status != kindex.StatusIndexed {
		t.Fatalf("the PDF known from the archive: %+v %v", st, err)
	}
	if got, err := c.entries.Entries(ctx, c.p, again.ID); err != nil || len(got) != 14 {
		t.Fatalf("entries of the copy: %d %v", len(got), err)
	}
	// Asking for an indexed entry returns it as it is, with no extraction.
	if e, err := c.entries.ExtractEntry(ctx, c.p, archive.ID, camlidl); err != nil || e.Status != "indexed" || c.ex.n.Load() != extractions {
		t.Fatalf("extract an indexed entry: %+v %v", e, err)
	}
	if _, err := c.entries.ExtractEntry(ctx, c.p, archive.ID, "project-docs.zip/nope.txt"); !errors.Is(err, extract.ErrNoEntry) {
		t.Fatalf("an entry that does not exist: %v", err)
	}
	if _, err := c.entries.ExtractEntry(ctx, c.p, pdf.ID, "camlidl.pdf/x"); !errors.Is(err, extract.ErrNotContainer) {
		t.Fatalf("an entry of a PDF: %v", err)
	}
}

// TestHostileContainers: the corpus's hostile archives, each through the
// whole ingestion: every refused entry is listed with a clear reason, every
// benign sibling is indexed and searchable, and the job stays within time
// and heap bounds (the bombs are stopped by their headers or early while
// expanding, never expanded).
func TestHostileContainers(t *testing.T) {
	ctx := context.Background()
	c := newContainerEnv(t)
	failedKinds := func(entries []kindex.ContainerEntry) map[string]int {
		m := map[string]int{}
		for _, e := range entries {
			if e.Status == "failed" {
				if e.Error == "" {
					t.Errorf("failed without a reason: %+v", e)
				}
				m[e.ErrorKind]++
			}
		}
		return m
	}
	indexed := func(entries []kindex.ContainerEntry) (n int) {
		for _, e := range entries {
			if e.Status == "indexed" && !e.Container {
				n++
			}
		}
		return n
	}
	searchable := func(t *testing.T, f filemeta.Item, text, path string) {
		t.Helper()
		hits, err := c.db.SearchLexical(ctx, c.p, kindex.Query{Text: text, FileIDs: []string{f.ID}})
		if err != nil || len(hits) == 0 || hits[0].Ref.ContainerPath != path {
			t.Fatalf("%q in %s: %+v %v", text, path, hits, err)
		}
	}
	for _, tc := range []struct {
		name    string
		maxTime time.Duration
		maxHeap uint64
		check   func(t *testing.T, f filemeta.Item, st kindex.ContentState, entries []kindex.ContainerEntry)
	}{
		{"bomb-single-entry-1GiB.zip", 20 * time.Second, 64 << 20, func(t *testing.T, f filemeta.Item, st kindex.ContentState, entries []kindex.ContainerEntry) {
			if k := failedKinds(entries); len(entries) != 1 || k["bomb"] != 1 || !strings.Contains(entries[0].Error, "not expanded") {
				t.Fatalf("%+v", entries)
			}
		}},
		{"bomb-1GiB-zeros.gz", 20 * time.Second, 64 << 20, func(t *testing.T, f filemeta.Item, st kindex.ContentState, entries []kindex.ContainerEntry) {
			if k := failedKinds(entries); len(entries) != 1 || k["bomb"] != 1 || !strings.Contains(entries[0].Error, "stopped there") {
				t.Fatalf("%+v", entries)
			}
		}},
		{"bomb-nested-42style.zip", 60 * time.Second, 128 << 20, func(t *testing.T, f filemeta.Item, st kindex.ContentState, entries []kindex.ContainerEntry) {
			k := failedKinds(entries)
			if indexed(entries) != 0 || k["bomb"] == 0 || !strings.Contains(st.Error, "stopped") {
				t.Fatalf("%q %v %+v", st.Error, k, entries)
			}
		}},
		{"path-traversal-constructed.zip", 20 * time.Second, 64 << 20, func(t *testing.T, f filemeta.Item, st kindex.ContentState, entries []kindex.ContainerEntry) {
			if k := failedKinds(entries); k["traversal"] != 9 || indexed(entries) != 1 {
				t.Fatalf("%v %+v", k, entries)
			}
			searchable(t, f, "harmless test content", "path-traversal-constructed.zip/good.txt")
		}},
		{"snyk-zip-slip.zip", 20 * time.Second, 64 << 20, func(t *testing.T, f filemeta.Item, st kindex.ContentState, entries []kindex.ContainerEntry) {
			if k := failedKinds(entries); k["traversal"] != 1 || indexed(entries) != 1 {
				t.Fatalf("%v %+v", k, entries)
			}
		}},
		{"symlink-entries.zip", 20 * time.Second, 64 << 20, func(t *testing.T, f filemeta.Item, st kindex.ContentState, entries []kindex.ContainerEntry) {
			if k := failedKinds(entries); k["symlink"] != 6 || indexed(entries) != 1 {
				t.Fatalf("%v %+v", k, entries)
			}
			if e, _ := entryAt(entries, "symlink-entries.zip/doc.pdf"); e.Status != "failed" || !strings.Contains(e.Error, "/proc/self/environ") {
				t.Fatalf("doc.pdf → /proc/self/environ: %+v", e)
			}
		}},
		{"truncated-project-docs.zip", 60 * time.Second, 512 << 20, func(t *testing.T, f filemeta.Item, st kindex.ContentState, entries []kindex.ContainerEntry) {
			k := failedKinds(entries)
			if k["truncated"] != 1 || indexed(entries) != 3 || !strings.Contains(st.Error, "central directory") {
				t.Fatalf("%q %v %+v", st.Error, k, entries)
			}
			searchable(t, f, "FASTA", "truncated-project-docs.zip/reports/2023/deb-fasta-guide.pdf")
		}},
		{"many-entries-12000.zip", 3 * time.Minute, 384 << 20, func(t *testing.T, f filemeta.Item, st kindex.ContentState, entries []kindex.ContainerEntry) {
			n := indexed(entries)
			if n < 9_900 || n > 10_000 || !strings.Contains(st.Error, "more than 10000 entries") {
				t.Fatalf("%d indexed, %q", n, st.Error)
			}
			// An entry past the limit is extracted on demand, alone.
			const late = "many-entries-12000.zip/d23/f11999.txt"
			if _, listed := entryAt(entries, late); listed {
				t.Fatalf("%s listed past the limit", late)
			}
			before := c.ex.n.Load()
			e, err := c.entries.ExtractEntry(ctx, c.p, f.ID, late)
			if err != nil || e.Status != "indexed" || c.ex.n.Load() != before+1 {
				t.Fatalf("on demand: %+v %v", e, err)
			}
			searchable(t, f, "11999", late)
			// A refused entry stays refused.
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := "hostile"
			f, st, entries := c.ingest(t, tc.name, testcorpus.Read(t, "archives", dir, tc.name), tc.maxTime, tc.maxHeap)
			if st.Status != kindex.StatusIndexed {
				t.Fatalf("container: %+v", st)
			}
			tc.check(t, f, st, entries)
		})
	}
	t.Run("refused entries stay refused", func(t *testing.T) {
		f := c.upload(t, c.svc, "traversal-again.zip", testcorpus.Read(t, "archives", "hostile", "path-traversal-constructed.zip"))
		const evil = "traversal-again.zip/../../etc/passwd"
		e, err := c.entries.ExtractEntry(ctx, c.p, f.ID, evil)
		if err != nil || e.Status != "failed" || e.ErrorKind != "traversal" {
			t.Fatalf("%+v %v", e, err)
		}
	})
}

// TestBrokenPDFsInContainers: a malformed PDF and a PDF locked by a user
// password inside a benign archive each fail with a clear reason while the
// rest of the archive is indexed; alone, they fail the same way.
func TestBrokenPDFsInContainers(t *testing.T) {
	ctx := context.Background()
	c := newContainerEnv(t)
	malformed := testcorpus.Read(t, "pdf", "ocrmypdf-invalid-header-eof.pdf")
	var locked bytes.Buffer
	conf := model.NewAESConfiguration("user-secret", "owner-secret", 256)
	if err := api.Encrypt(bytes.NewReader(testcorpus.Read(t, "pdf", "deb-camlidl-1.04.pdf")), &locked, conf); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, m := range []struct {
		name string
		data []byte
	}{
		{"docs/broken.pdf", malformed},
		{"docs/locked.pdf", locked.Bytes()},
		{"docs/notes.txt", []byte("The annual budget review meets on Thursday in the harbour office.")},
	} {
		w, _ := zw.Create(m.name)
		w.Write(m.data)
	}
	zw.Close()
	_, st, entries := c.ingest(t, "mixed.zip", buf.Bytes(), 2*time.Minute, 256<<20)
	if st.Status != kindex.StatusIndexed || len(entries) != 3 {
		t.Fatalf("%+v %+v", st, entries)
	}
	want := map[string]string{"mixed.zip/docs/broken.pdf": "malformed", "mixed.zip/docs/locked.pdf": "encrypt"}
	for _, e := range entries {
		if reason, bad := want[e.Path]; bad {
			if e.Status != "failed" || !strings.Contains(strings.ToLower(e.Error), reason) {
				t.Errorf("%s: %s %q, want failed with %q", e.Path, e.Status, e.Error, reason)
			}
		} else if e.Status != "indexed" {
			t.Errorf("%s: %+v", e.Path, e)
		}
	}
	hits, err := c.db.SearchLexical(ctx, c.p, kindex.Query{Text: "budget review harbour"})
	if err != nil || len(hits) != 1 || hits[0].Ref.ContainerPath != "mixed.zip/docs/notes.txt" {
		t.Fatalf("the rest is searchable: %+v %v", hits, err)
	}
	// Alone: the same bytes failed inside the archive, so a plain ingest
	// finds them failed; a retry extracts them again, as a file of their own.
	for name, data := range map[string][]byte{"broken.pdf": malformed, "locked.pdf": locked.Bytes()} {
		f := c.upload(t, c.svc, name, data)
		if extracted, err := c.ingester.Ingest(ctx, f.ID, true); !extracted || err == nil {
			t.Errorf("%s alone: extracted=%v err=%v", name, extracted, err)
		}
		st, err := c.db.ContentState(ctx, c.p, f.ID)
		if err != nil || st.Status != kindex.StatusFailed || st.Error == "" {
			t.Errorf("%s alone: %+v %v", name, st, err)
		}
	}
}

// TestContainerJob: an archive uploaded through the file service is indexed
// by the ingestion job like any file; a file named .zip that is none fails
// with the reason and is not retried.
func TestContainerJob(t *testing.T) {
	ctx := context.Background()
	c := newContainerEnv(t)
	if err := jobs.Migrate(ctx, c.db); err != nil {
		t.Fatal(err)
	}
	reg := jobs.NewRegistry()
	indexing.RegisterJobs(reg, c.ingester, c.db)
	q, err := jobs.New(c.db, jobs.Config{Registry: reg, Work: true, RetryBase: 50 * time.Millisecond, MaxAttempts: 2})
	if err != nil {
		t.Fatal(err)
	}
	if err := q.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer q.Stop(ctx)
	svc := files.NewService(c.db, c.blobs, 0).WithIndexer(indexing.NewJobIndexer(q), nil)
	wait := func(f filemeta.Item, want kindex.Status) kindex.ContentState {
		t.Helper()
		deadline := time.Now().Add(60 * time.Second)
		for {
			st, err := c.db.ContentState(ctx, c.p, f.ID)
			if err == nil && st.Status == want {
				return st
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: status %q (%v), want %q", f.Name, st.Status, err, want)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	arch := c.upload(t, svc, "links.zip", testcorpus.Read(t, "archives", "hostile", "symlink-entries.zip"))
	wait(arch, kindex.StatusIndexed)
	entries, err := c.entries.Entries(ctx, c.p, arch.ID)
	if err != nil || len(entries) != 7 || entries[0].Path != "links.zip/readme.txt" || entries[0].Status != "indexed" {
		t.Fatalf("entries: %+v %v", entries, err)
	}
	fake := c.upload(t, svc, "fake.zip", []byte("just some text, no archive at all"))
	st := wait(fake, kindex.StatusFailed)
	if !strings.Contains(st.Error, "not a ZIP, TAR, gzip, bzip2, xz, zstd, 7z or RAR container") {
		t.Fatalf("reason: %q", st.Error)
	}
	if n := c.res.n.Load(); n != 2 {
		t.Fatalf("%d container plugin calls, want 2 (a permanent failure is not retried)", n)
	}
}

// TestContainerBadEntriesGoOn: a zip whose entries fail one by one (data
// longer than declared, CRC, methods 99 and 14, corrupt and cut deflate),
// each followed by a good entry, goes through the real plugin: the
// container is indexed, each bad entry is recorded once, failed with its
// reason, and every good entry after it is indexed and searchable.
func TestContainerBadEntriesGoOn(t *testing.T) {
	ctx := context.Background()
	c := newContainerEnv(t)
	cases := archivetest.BadZipCases()
	var members []archivetest.ZipEntry
	for i, tc := range cases {
		members = append(members, tc.Entry, archivetest.Stored(fmt.Sprintf("ok-%d.txt", i), []byte(fmt.Sprintf("harbourmaster%d signed the manifest", i))))
	}
	f, st, entries := c.ingest(t, "bad-entries.zip", archivetest.Zip(members...), 2*time.Minute, 256<<20)
	if st.Status != kindex.StatusIndexed || st.Error != "" {
		t.Fatalf("container: %+v", st)
	}
	if len(entries) != 2*len(cases) {
		t.Errorf("%d entries, want %d: %+v", len(entries), 2*len(cases), entries)
	}
	seen := map[string]int{}
	for _, e := range entries {
		if seen[e.Path]++; seen[e.Path] > 1 {
			t.Errorf("%s recorded twice", e.Path)
		}
	}
	for i, tc := range cases {
		bad, ok := entryAt(entries, "bad-entries.zip/"+tc.Entry.Name)
		if !ok || bad.Status != "failed" || bad.Error == "" || !slices.Contains(tc.Kinds, bad.ErrorKind) {
			t.Errorf("%s: %+v, want failed as one of %v", tc.Name, bad, tc.Kinds)
		} else {
			t.Logf("%s: %s: %s", tc.Name, bad.ErrorKind, bad.Error)
		}
		good := fmt.Sprintf("bad-entries.zip/ok-%d.txt", i)
		if e, ok := entryAt(entries, good); !ok || e.Status != "indexed" {
			t.Errorf("%s after %s: %+v", good, tc.Name, e)
			continue
		}
		hits, err := c.db.SearchLexical(ctx, c.p, kindex.Query{Text: fmt.Sprintf("harbourmaster%d", i), FileIDs: []string{f.ID}})
		if err != nil || len(hits) != 1 || hits[0].Ref.ContainerPath != good {
			t.Errorf("%s not searchable: %+v %v", good, hits, err)
		}
	}
	if tr, _ := st.Index.Structure["truncated"].(bool); tr {
		t.Errorf("bad entries marked the walk truncated: %v", st.Index.Structure)
	}
}

// TestContainerStopsReported: walks that stop early say so through the real
// plugin — a tgz of 12,000 tiny entries stops at the 10,000-entry limit
// (not at the ratio rule), a cut tgz is truncated — each with its limit and
// the entry it stopped at, and no entry is recorded twice.
func TestContainerStopsReported(t *testing.T) {
	c := newContainerEnv(t)
	cut := archivetest.Gzip(archivetest.TinyTar(300))
	cut = cut[:len(cut)/2]
	for _, tc := range []struct {
		name    string
		data    []byte
		indexed int
		limit   string
		kind    string
		at      string
		walk    bool
	}{
		{"tiny-12000.tgz", archivetest.Gzip(archivetest.TinyTar(12_000)), 10_000, "MaxFiles", "limit", "tiny-12000.tgz/" + archivetest.TinyName(10_000), true},
		{"cut.tgz", cut, -1, "", "truncated", "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, st, entries := c.ingest(t, tc.name, tc.data, 3*time.Minute, 384<<20)
			if st.Status != kindex.StatusIndexed {
				t.Fatalf("container: %+v", st)
			}
			seen := map[string]int{}
			indexed := 0
			for _, e := range entries {
				if seen[e.Path]++; seen[e.Path] > 1 {
					t.Errorf("%s recorded twice", e.Path)
				}
				if e.Status == "indexed" {
					indexed++
				}
			}
			s := st.Index.Structure
			stops, _ := s["stops"].([]any)
			if tr, _ := s["truncated"].(bool); !tr || len(stops) != 1 || st.Error == "" {
				t.Fatalf("truncated %v, stops %v, error %q", s["truncated"], s["stops"], st.Error)
			}
			stop, _ := stops[0].(map[string]any)
			t.Logf("%d entries, %d indexed; stop %v; error %q", len(entries), indexed, stop, st.Error)
			if stop["kind"] != tc.kind || stop["limit"] != tc.limit || stop["walk"] != tc.walk || stop["container"] != tc.name || stop["reason"] == "" {
				t.Errorf("stop %v, want kind %q limit %q walk %v", stop, tc.kind, tc.limit, tc.walk)
			}
			if tc.at != "" && stop["at"] != tc.at {
				t.Errorf("stopped at %v, want %s", stop["at"], tc.at)
			}
			if tc.indexed >= 0 && indexed != tc.indexed {
				t.Errorf("%d indexed, want %d", indexed, tc.indexed)
			}
			if tc.indexed < 0 && (indexed == 0 || indexed >= 300) {
				t.Errorf("%d of the cut tgz's 300 entries indexed", indexed)
			}
		})
	}
}
