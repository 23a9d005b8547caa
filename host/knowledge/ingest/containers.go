package ingest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"path"
	"strings"
	"sync"

	"github.com/agenthost/agenthost/host/files/filemeta"
	"github.com/agenthost/agenthost/host/knowledge/extract"
	"github.com/agenthost/agenthost/host/knowledge/kindex"
	"github.com/agenthost/agenthost/host/knowledge/unlock"
	"github.com/agenthost/agenthost/host/wasm"
	"github.com/agenthost/agenthost/pdk/content"
)

// ContainerStore is what container ingestion needs of the database.
type ContainerStore interface {
	// SaveContainerEntries replaces a container content's entries.
	SaveContainerEntries(ctx context.Context, tenantID, containerSHA string, entries []kindex.ContainerEntry) error
	// PutContainerEntry replaces the entry of its path (or adds it).
	PutContainerEntry(ctx context.Context, tenantID, containerSHA string, e kindex.ContainerEntry) error
	// ContainerEntriesForIndexing lists a container content's entries
	// (administrative: no principal), with their derived status.
	ContainerEntriesForIndexing(ctx context.Context, tenantID, containerSHA string) ([]kindex.ContainerEntry, error)
}

// BlobPutter stores bytes under their sha256.
type BlobPutter interface {
	Put(ctx context.Context, r io.Reader, max int64) (sha string, size int64, err error)
}

// ContainerResolver runs the container extractor: it reports whether a
// document is a container and resolves one into sink.
type ContainerResolver interface {
	Handles(name, mimeType string) bool
	// Resolve emits the container's inner files into sink; only, when set,
	// restricts it to that entry's path.
	Resolve(ctx context.Context, name, mimeType, only string, in wasm.Input, sink wasm.OutputSink) (content.Index, error)
}

// AttachmentResolver runs a document extractor's attachments tool.
type AttachmentResolver interface {
	// Attachments emits the document's attached files into sink; ok is
	// false when its extractor has no attachments tool.
	Attachments(ctx context.Context, name, mimeType string, in wasm.Input, sink wasm.OutputSink) (idx content.Index, ok bool, err error)
	// CarriesAttachments reports whether the document's extractor has an
	// attachments tool.
	CarriesAttachments(name, mimeType string) bool
}

// WithContainers makes the ingester resolve containers: their inner files
// are stored as blobs, listed in store and extracted one by one as content
// of their own. nil leaves containers to the ordinary extractors.
func (in *Pipeline) WithContainers(r ContainerResolver, store ContainerStore, blobs BlobPutter) *Pipeline {
	if r == nil || store == nil || blobs == nil {
		in.containers = nil
		return in
	}
	in.containers = &containerParts{resolver: r, store: store, blobs: blobs}
	return in
}

// containerParts is what container ingestion uses beside the ingester's own.
type containerParts struct {
	resolver ContainerResolver
	store    ContainerStore
	blobs    BlobPutter
}

// isContainer reports whether Ingest hands f to ingestContainer.
func (in *Pipeline) isContainer(f filemeta.Item) bool {
	return in.containers != nil && in.containers.resolver.Handles(f.Name, f.MIMEType)
}

// ingestContainer indexes a container file: the container plugin emits
// every inner file into a sink that stores its bytes as a blob; the entries
// are recorded; each inner file with bytes is extracted as content of its
// own (claimed by its sha256, so an inner file known already costs nothing);
// then the container's content is indexed, its structure counting entries
// and failures. A plugin that fails part-way (a timeout) keeps the entries
// it emitted, which are indexed, and the container is marked failed with
// the reason. retry (an earlier attempt failed or died) takes inner
// contents left pending or failed again.
func (in *Pipeline) ingestContainer(ctx context.Context, f filemeta.Item, r wasm.Input, retry bool) error {
	cp := in.containers
	if err := in.recordExtractor(ctx, f, cp.resolver); err != nil {
		return in.failed(ctx, f, f.Name, err)
	}
	sink := newEntrySink(cp.blobs, f.Name)
	idx, callErr := cp.resolver.Resolve(wasm.WithTenant(ctx, f.TenantID), f.Name, f.MIMEType, "", r, sink)
	sink.wait()
	entries := sink.entries
	if why, _ := idx.Structure["stoppedBecause"].(string); why != "" && len(sink.notes) == 0 {
		// The limit that ended the walk names the entry it stopped at;
		// the container says so too.
		sink.notes = append(sink.notes, why)
	}
	if err := cp.store.SaveContainerEntries(ctx, f.TenantID, f.SHA256, entries); err != nil {
		return fmt.Errorf("knowledge: saving the entries of %s: %w", f.Name, err)
	}
	// The entries' chunks are embedded together, a few requests for an
	// archive of thousands of small files rather than one per entry.
	batch := in.newEmbedBatch(f)
	failed := 0
	for _, e := range entries {
		if e.Error != "" {
			failed++
			continue
		}
		if e.SHA256 == "" || e.Container {
			continue
		}
		attached, err := in.indexEntryAttached(ctx, f, e, retry, batch)
		if err != nil {
			if ctx.Err() != nil {
				return err
			}
			failed++
			continue
		}
		// A document in the archive may carry files of its own.
		failed += in.entryAttachments(ctx, f, e, attached, retry, batch)
	}
	if err := batch.flush(ctx); err != nil {
		return err
	}
	if idx.Structure == nil {
		idx.Structure = map[string]any{}
	}
	idx.Structure["entries"] = len(entries)
	idx.Structure["failedEntries"] = failed
	if len(sink.notes) > 0 {
		idx.Structure["notes"] = sink.notes
	}
	idx.FileName, idx.MIMEType, idx.TotalSize, idx.TotalObjects = f.Name, f.MIMEType, f.Size, 0
	if err := in.store.SaveContent(ctx, f.TenantID, f.SHA256, idx, nil, kindex.StatusIndexed); err != nil {
		return fmt.Errorf("knowledge: saving %s: %w", f.Name, err)
	}
	reason := strings.Join(sink.notes, "; ")
	if enc, _ := idx.Structure["encrypted"].(bool); enc && callErr == nil {
		// Nothing in it could be read without its password: the
		// container says so instead of counting as indexed and empty.
		why := fmt.Sprintf("%s%s needs its password (give it with POST /api/v1/files/{id}/password); none of its %d entries could be read", kindex.ReasonEncrypted, f.Name, len(entries))
		if unlock.PasswordOf(ctx) != "" {
			why = fmt.Sprintf("%sthe password given does not open %s; none of its %d entries could be read, nothing was lost", kindex.ReasonWrongPassword, f.Name, len(entries))
		}
		if err := in.store.SetContentStatus(ctx, f.TenantID, f.SHA256, kindex.StatusFailed, why); err != nil {
			return err
		}
		in.logger.Info("container encrypted", "file", f.ID, "name", f.Name, "entries", len(entries))
		return nil
	}
	if callErr != nil {
		err := fmt.Errorf("knowledge: resolving %s (%d entries kept): %w", f.Name, len(entries), callErr)
		if errors.As(callErr, new(*wasm.Error)) {
			err = fmt.Errorf("%w: %w", ErrPermanent, err)
		}
		if serr := in.store.SetContentStatus(context.WithoutCancel(ctx), f.TenantID, f.SHA256, kindex.StatusFailed, err.Error()); serr != nil {
			return serr
		}
		return err
	}
	if reason != "" {
		// Indexed, with what the walk could not do (a walk-ending limit).
		if err := in.store.SetContentStatus(ctx, f.TenantID, f.SHA256, kindex.StatusIndexed, reason); err != nil {
			return err
		}
	}
	in.logger.Info("container indexed", "file", f.ID, "name", f.Name, "entries", len(entries), "failed", failed)
	return nil
}

// hasAttachments reports whether an extracted document's index lists
// attached files (Structure "attachments", as the PDF extractor gives it).
func hasAttachments(idx content.Index) bool {
	switch v := idx.Structure["attachments"].(type) {
	case []any:
		return len(v) > 0
	case []map[string]any:
		return len(v) > 0
	}
	return false
}

// ingestAttachments resolves the files attached to an indexed document
// (a PDF's attachments) as a container's entries: the extractor's
// attachments tool emits them into a sink that stores their bytes, the
// entries are recorded under the document's content, and each is
// extracted as content of its own, with its own extractor, as an
// archive's members are. The document stays indexed whatever happens to
// its attachments: failures are entries' failures, or logged.
func (in *Pipeline) ingestAttachments(ctx context.Context, f filemeta.Item, retry bool) {
	entries, ok := in.resolveAttachments(ctx, f.TenantID, f.Name, f.MIMEType, f.SHA256)
	if !ok {
		return
	}
	batch := in.newEmbedBatch(f)
	failed := in.indexEntries(ctx, f, entries, retry, batch)
	if err := batch.flush(ctx); err != nil {
		in.logger.Warn("knowledge: attachments not embedded", "file", f.ID, "name", f.Name, "err", err)
	}
	in.logger.Info("attachments indexed", "file", f.ID, "name", f.Name, "entries", len(entries), "failed", failed)
}

// resolveAttachments runs a document's attachments tool on its content
// (sha in tenant) and stores the attached files as the content's entries;
// ok is false when there is nothing to store (no attachments tool, or the
// content unreadable: logged). A tool that fails part way keeps what it
// emitted, logged.
func (in *Pipeline) resolveAttachments(ctx context.Context, tenant, name, mimeType, sha string) (entries []kindex.ContainerEntry, ok bool) {
	cp := in.containers
	ar, isAR := cp.resolver.(AttachmentResolver)
	if !isAR {
		return nil, false
	}
	r, err := in.blobs.Open(ctx, sha)
	if err != nil {
		in.logger.Warn("knowledge: attachments not read", "name", name, "err", err)
		return nil, false
	}
	defer r.Close()
	sink := newEntrySink(cp.blobs, name)
	_, ran, callErr := ar.Attachments(wasm.WithTenant(ctx, tenant), name, mimeType, r, sink)
	sink.wait()
	if !ran {
		return nil, false
	}
	if callErr != nil {
		in.logger.Warn("knowledge: attachments resolved in part", "name", name, "entries", len(sink.entries), "err", callErr)
	}
	if err := cp.store.SaveContainerEntries(ctx, tenant, sha, sink.entries); err != nil {
		in.logger.Warn("knowledge: attachments not saved", "name", name, "err", err)
		return nil, false
	}
	return sink.entries, true
}

// indexEntries indexes the readable ones of a container's entries (see
// indexEntry) and counts those that failed.
func (in *Pipeline) indexEntries(ctx context.Context, f filemeta.Item, entries []kindex.ContainerEntry, retry bool, batch *embedBatch) (failed int) {
	for _, e := range entries {
		if e.Error != "" {
			failed++
			continue
		}
		if e.SHA256 == "" || e.Container {
			continue
		}
		if err := in.indexEntry(ctx, f, e, retry, batch); err != nil {
			if ctx.Err() != nil {
				return failed
			}
			failed++
		}
	}
	return failed
}

// entryAttachments adds the files attached to an archive's inner document
// (a PDF in a ZIP) to the archive's entries, below the document's path,
// and indexes them. The document's own attachments are resolved once per
// content, when it is first extracted (attached), and kept as its
// entries; the same bytes in another archive reuse them.
func (in *Pipeline) entryAttachments(ctx context.Context, f filemeta.Item, e kindex.ContainerEntry, attached bool, retry bool, batch *embedBatch) int {
	if ar, ok := in.containers.resolver.(AttachmentResolver); !ok || !ar.CarriesAttachments(path.Base(e.Path), e.MIMEType) {
		return 0
	}
	var entries []kindex.ContainerEntry
	if attached {
		entries, _ = in.resolveAttachments(ctx, f.TenantID, path.Base(e.Path), e.MIMEType, e.SHA256)
	} else {
		var err error
		if entries, err = in.containers.store.ContainerEntriesForIndexing(ctx, f.TenantID, e.SHA256); err != nil {
			in.logger.Warn("knowledge: attachments not read", "file", f.ID, "entry", e.Path, "err", err)
			return 0
		}
	}
	for i := range entries {
		entries[i].Path = e.Path + "/" + entries[i].Path
		if err := in.containers.store.PutContainerEntry(ctx, f.TenantID, f.SHA256, entries[i]); err != nil {
			in.logger.Warn("knowledge: attachment entry not saved", "file", f.ID, "entry", entries[i].Path, "err", err)
			return 0
		}
	}
	return in.indexEntries(ctx, f, entries, retry, batch)
}

// indexEntry extracts one inner file as content of its own, keyed by its
// sha256 in the container's tenant, unless that content is indexed or being
// indexed already (reclaim takes a pending or failed one again). Its
// failure is recorded on the content, so the entry shows it.
func (in *Pipeline) indexEntry(ctx context.Context, f filemeta.Item, e kindex.ContainerEntry, reclaim bool, batch *embedBatch) error {
	_, err := in.indexEntryAttached(ctx, f, e, reclaim, batch)
	return err
}

// indexEntryAttached is indexEntry that also reports whether it extracted
// the entry now and its index lists attached files.
func (in *Pipeline) indexEntryAttached(ctx context.Context, f filemeta.Item, e kindex.ContainerEntry, reclaim bool, batch *embedBatch) (attached bool, err error) {
	claimed, err := in.store.ClaimContent(ctx, f.TenantID, e.SHA256, reclaim)
	if err != nil || !claimed {
		return false, err
	}
	inner := f
	inner.SHA256, inner.Name, inner.MIMEType, inner.Size = e.SHA256, path.Base(e.Path), e.MIMEType, e.Size
	fail := func(err error) (bool, error) { return false, in.failed(ctx, inner, e.Path, err) }
	r, err := in.blobs.Open(ctx, e.SHA256)
	if err != nil {
		return fail(fmt.Errorf("knowledge: content of %s: %w", e.Path, err))
	}
	defer r.Close()
	// The smart-PDF policy applies inside archives too: a large inner PDF
	// is pre-scanned only, its pages read on demand (Reader, by entry).
	var idx content.Index
	var objects []content.Object
	err = in.timed(PhaseExtract, func() (err error) {
		idx, objects, err = in.extract(ctx, inner, r)
		return err
	})
	if err != nil {
		return fail(fmt.Errorf("knowledge: extracting %s: %w", e.Path, err))
	}
	idx.FileName, idx.MIMEType, idx.TotalSize, idx.ContainerPath = inner.Name, inner.MIMEType, inner.Size, f.Name+"/"+e.Path
	if _, err = in.saveContent(ctx, inner, e.Path, idx, objects, batch); err != nil {
		return false, err
	}
	return hasAttachments(idx), nil
}

// ExtractEntry extracts on demand one entry of a container file that is
// not indexed: one whose extraction failed earlier is extracted again; one
// whose bytes the walk did not deliver (not listed, e.g. past the entry
// limit) is resolved alone by the container plugin (a walk that reads only
// that entry's bytes) and then extracted. A document's attachments are
// entries the same way, from what its indexing stored. The caller checks
// access.
func (in *Pipeline) ExtractEntry(ctx context.Context, fileID, entryPath string) (kindex.ContainerEntry, error) {
	if in.containers == nil {
		return kindex.ContainerEntry{}, fmt.Errorf("knowledge: %w: this host resolves no containers", extract.ErrNotContainer)
	}
	f, err := in.store.FileForIndexing(ctx, fileID)
	if err != nil {
		return kindex.ContainerEntry{}, err
	}
	// A document with attached files (a PDF's attachments) has entries
	// too, stored when it was indexed; it is not walked again.
	container := in.isContainer(f)
	cp := in.containers
	find := func() (kindex.ContainerEntry, bool, error) {
		entries, err := cp.store.ContainerEntriesForIndexing(ctx, f.TenantID, f.SHA256)
		if err != nil {
			return kindex.ContainerEntry{}, false, err
		}
		for _, e := range entries {
			if e.Path == entryPath {
				return e, true, nil
			}
		}
		return kindex.ContainerEntry{}, false, nil
	}
	// Entries are stored by their path inside the container; callers name
	// them by the full path, which starts with the file's name.
	rel := strings.TrimPrefix(entryPath, f.Name+"/")
	full := func(e kindex.ContainerEntry, err error) (kindex.ContainerEntry, error) {
		if err == nil {
			e.Path = f.Name + "/" + e.Path
		}
		return e, err
	}
	entryPath = rel
	e, ok, err := find()
	if err != nil {
		return kindex.ContainerEntry{}, err
	}
	if ok && (e.Container || e.Status == string(kindex.StatusIndexed)) {
		return full(e, nil)
	}
	if !container {
		if entries, err := cp.store.ContainerEntriesForIndexing(ctx, f.TenantID, f.SHA256); err != nil || len(entries) == 0 {
			return kindex.ContainerEntry{}, fmt.Errorf("knowledge: %s: %w", f.Name, extract.ErrNotContainer)
		}
		if !ok || e.SHA256 == "" {
			return kindex.ContainerEntry{}, fmt.Errorf("knowledge: %s: %w: %q", f.Name, extract.ErrNoEntry, entryPath)
		}
	}
	if !ok || e.SHA256 == "" {
		// The walk did not deliver its bytes: resolve that entry alone.
		// The container limits still apply to its bytes; an entry refused for
		// what it is (traversal, link, bomb) stays refused.
		if _, err := in.store.ClaimContent(ctx, f.TenantID, f.SHA256, false); err != nil {
			return kindex.ContainerEntry{}, err
		}
		r, err := in.blobs.Open(ctx, f.SHA256)
		if err != nil {
			return kindex.ContainerEntry{}, fmt.Errorf("knowledge: content of %s: %w", f.Name, err)
		}
		sink := newEntrySink(cp.blobs, f.Name)
		_, callErr := cp.resolver.Resolve(wasm.WithTenant(ctx, f.TenantID), f.Name, f.MIMEType, sink.root+"/"+rel, r, sink)
		sink.wait()
		r.Close()
		var got *kindex.ContainerEntry
		for i := range sink.entries {
			if sink.entries[i].Path == entryPath {
				got = &sink.entries[i]
			}
		}
		if got == nil {
			if callErr != nil {
				var we *wasm.Error
				if errors.As(callErr, &we) && we.Code == "not_found" {
					return kindex.ContainerEntry{}, fmt.Errorf("knowledge: %s: %w: %q", f.Name, extract.ErrNoEntry, entryPath)
				}
				return kindex.ContainerEntry{}, fmt.Errorf("knowledge: resolving %s in %s: %w", entryPath, f.Name, callErr)
			}
			return kindex.ContainerEntry{}, fmt.Errorf("knowledge: %s: %w: %q", f.Name, extract.ErrNoEntry, entryPath)
		}
		if err := cp.store.PutContainerEntry(ctx, f.TenantID, f.SHA256, *got); err != nil {
			return kindex.ContainerEntry{}, err
		}
		if got.Error != "" || got.Container {
			return full(e1(find()))
		}
		e = *got
	}
	if err := in.indexEntry(ctx, f, e, true, nil); err != nil && ctx.Err() != nil {
		return kindex.ContainerEntry{}, err
	}
	return full(e1(find()))
}

// e1 drops find's middle result.
func e1(e kindex.ContainerEntry, _ bool, err error) (kindex.ContainerEntry, error) { return e, err }

// entrySink is the wasm.OutputSink of one container call: each inner file's
// bytes go to the blob store, and the entry is kept once the file is
// complete; failures become failed entries. A large file (or one of unknown
// size) streams into BlobPutter.Put while the plugin writes it; a small one
// (most of an archive's files) is hashed in memory and stored in the
// background, several at a time, because a blob store's Put costs two
// fsyncs whatever the size: 10,000 small files take 7 s that way instead of
// 50. wait() must be called before the entries are used.
type entrySink struct {
	blobs   BlobPutter
	root    string // the container's name: a failure on it is a note
	entries []kindex.ContainerEntry
	byPath  map[string]int
	notes   []string

	mu       sync.Mutex // entries, while background stores report
	puts     sync.WaitGroup
	slots    chan struct{} // bounds the stores in flight (and their buffers)
	storeCtx context.Context
}

// smallEntry is the largest file stored in the background; putSlots how
// many are in flight (so at most putSlots MiB of buffers).
const (
	smallEntry = 1 << 20
	putSlots   = 8
)

// wait blocks until every background store has finished.
func (s *entrySink) wait() { s.puts.Wait() }

// newEntrySink returns the sink of a container called name: the plugin
// names every entry from it (path.Base of it, as the plugin does), and the
// sink keeps the path inside the container.
func newEntrySink(blobs BlobPutter, name string) *entrySink {
	root := path.Base(strings.ReplaceAll(name, "\\", "/"))
	if root == "." || root == "/" || root == "" {
		root = "input"
	}
	return &entrySink{blobs: blobs, root: root, byPath: map[string]int{}, slots: make(chan struct{}, putSlots)}
}

// rel is an emitted path inside the container.
func (s *entrySink) rel(p string) string { return strings.TrimPrefix(p, s.root+"/") }

func (s *entrySink) add(e kindex.ContainerEntry) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if i, ok := s.byPath[e.Path]; ok && s.entries[i].SHA256 == "" && !s.entries[i].Container {
		// A failure reported twice for one path: keep the first.
		return -1
	}
	s.byPath[e.Path] = len(s.entries)
	s.entries = append(s.entries, e)
	return len(s.entries) - 1
}

// Begin implements wasm.OutputSink.
func (s *entrySink) Begin(ctx context.Context, f wasm.OutputFile) (wasm.OutputWriter, error) {
	e := kindex.ContainerEntry{Path: s.rel(f.Path), Size: max(f.Size, 0), MIMEType: f.MIMEType, Container: f.Container}
	if f.Container {
		return &containerMark{s: s, e: e}, nil
	}
	if f.Size >= 0 && f.Size <= smallEntry {
		if s.storeCtx == nil {
			s.storeCtx = context.WithoutCancel(ctx)
		}
		return &smallWriter{s: s, e: e, h: sha256.New(), buf: make([]byte, 0, f.Size)}, nil
	}
	pr, pw := io.Pipe()
	w := &blobWriter{s: s, e: e, pw: pw, done: make(chan struct{})}
	go func() {
		defer close(w.done)
		w.sha, w.size, w.err = s.blobs.Put(ctx, pr, wasm.DefaultOutputBytes)
		pr.CloseWithError(w.err) // unblocks a writer if Put stopped early
	}()
	return w, nil
}

// Fail implements wasm.OutputSink.
func (s *entrySink) Fail(_ context.Context, p, kind, reason string) error {
	if p == s.root {
		s.notes = append(s.notes, reason)
		return nil
	}
	p = s.rel(p)
	s.mu.Lock()
	if i, ok := s.byPath[p]; ok && s.entries[i].Container {
		// A container that was listed but not (fully) opened.
		s.entries[i].Error, s.entries[i].ErrorKind, s.entries[i].Status = reason, kind, string(kindex.StatusFailed)
		s.mu.Unlock()
		return nil
	}
	s.mu.Unlock()
	s.add(kindex.ContainerEntry{Path: p, Status: string(kindex.StatusFailed), Error: reason, ErrorKind: kind})
	return nil
}

// containerMark records a nested container when the plugin ends it.
type containerMark struct {
	s *entrySink
	e kindex.ContainerEntry
}

func (m *containerMark) Write(p []byte) (int, error) {
	return 0, errors.New("a container entry has no bytes")
}
func (m *containerMark) Commit(context.Context) (string, error) {
	m.e.Status = string(kindex.StatusIndexed)
	m.s.add(m.e)
	return "", nil
}
func (m *containerMark) Abort(error) {}

// blobWriter streams one inner file into the blob store.
type blobWriter struct {
	s    *entrySink
	e    kindex.ContainerEntry
	pw   *io.PipeWriter
	once sync.Once
	done chan struct{}
	sha  string
	size int64
	err  error
}

func (w *blobWriter) Write(p []byte) (int, error) { return w.pw.Write(p) }

func (w *blobWriter) Commit(context.Context) (string, error) {
	w.pw.Close()
	<-w.done
	if w.err != nil {
		return "", fmt.Errorf("storing %s: %w", w.e.Path, w.err)
	}
	w.e.SHA256, w.e.Size, w.e.Status = w.sha, w.size, string(kindex.StatusPending)
	w.s.add(w.e)
	return w.sha, nil
}

func (w *blobWriter) Abort(reason error) {
	w.once.Do(func() {
		w.pw.CloseWithError(fmt.Errorf("discarded: %w", reason))
		<-w.done
	})
}

// smallWriter keeps a small file in memory, hashing it as it comes; Commit
// records the entry under that hash at once and stores the bytes in the
// background (a failed store turns the entry into a failed one).
type smallWriter struct {
	s   *entrySink
	e   kindex.ContainerEntry
	h   hash.Hash
	buf []byte
}

func (w *smallWriter) Write(p []byte) (int, error) {
	if len(w.buf)+len(p) > smallEntry {
		return 0, fmt.Errorf("%s: more than the %d bytes announced", w.e.Path, cap(w.buf))
	}
	w.buf = append(w.buf, p...)
	w.h.Write(p)
	return len(p), nil
}

func (w *smallWriter) Commit(context.Context) (string, error) {
	sha := hex.EncodeToString(w.h.Sum(nil))
	w.e.SHA256, w.e.Size, w.e.Status = sha, int64(len(w.buf)), string(kindex.StatusPending)
	i := w.s.add(w.e)
	if i < 0 {
		return sha, nil
	}
	s, buf := w.s, w.buf
	s.slots <- struct{}{}
	s.puts.Add(1)
	go func() {
		defer s.puts.Done()
		defer func() { <-s.slots }()
		got, _, err := s.blobs.Put(s.storeCtx, bytes.NewReader(buf), smallEntry)
		if err == nil && got != sha {
			err = fmt.Errorf("stored as %s, hashed as %s", got, sha)
		}
		if err != nil {
			s.mu.Lock()
			s.entries[i].SHA256, s.entries[i].Status = "", string(kindex.StatusFailed)
			s.entries[i].Error, s.entries[i].ErrorKind = "storing its bytes failed: "+err.Error(), "io"
			s.mu.Unlock()
		}
	}()
	return sha, nil
}

func (w *smallWriter) Abort(error) { w.buf = nil }
