package ondemand

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"path"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/agenthost/agenthost/host/blob"
	"github.com/agenthost/agenthost/host/files/filemeta"
	"github.com/agenthost/agenthost/host/knowledge/chunk"
	"github.com/agenthost/agenthost/host/knowledge/extract"
	"github.com/agenthost/agenthost/host/knowledge/internal/keyed"
	"github.com/agenthost/agenthost/host/knowledge/kindex"
	"github.com/agenthost/agenthost/host/knowledge/unlock"
	"github.com/agenthost/agenthost/host/llm"
	"github.com/agenthost/agenthost/host/llm/modeluse"
	"github.com/agenthost/agenthost/host/tenancy"
	"github.com/agenthost/agenthost/host/wasm"
	"github.com/agenthost/agenthost/pdk/content"
	"github.com/agenthost/agenthost/pdk/knowledge/wire"
)

// Store is what reading content back needs of the database.
// Access is checked on the file read (ContentState, ContainerEntries: the
// principal must be able to read it); the content it reaches, its own or
// an entry's inside it, is then read by its sha256.
type Store interface {
	ContentState(ctx context.Context, p tenancy.Principal, fileID string) (kindex.ContentState, error)
	// ContainerEntries lists a container file's entries by full path.
	ContainerEntries(ctx context.Context, p tenancy.Principal, fileID string) ([]kindex.ContainerEntry, error)
	ContentStateOf(ctx context.Context, tenantID, sha string) (kindex.ContentState, error)
	ContentChunksOf(ctx context.Context, tenantID, sha string, f kindex.ChunkFilter) ([]kindex.Chunk, error)
	AddContentPages(ctx context.Context, tenantID, sha string, pages []int, summaries []content.Summary, chunks []kindex.Chunk) error
	// AddVectors adds the vectors of chunks to a content's, keeping the
	// others (SaveVectors replaces them).
	AddVectors(ctx context.Context, tenantID, sha, model string, chunks []kindex.Chunk, vecs [][]float32) error
}

// Blobs opens stored content.
type Blobs interface {
	Open(ctx context.Context, sha string) (blob.Reader, error)
}

// Embedder turns texts into vectors (the model layer's embedding
// operation); search.Embedder and the others' are the same interface.
type Embedder interface {
	Embed(ctx context.Context, texts []string) ([][]float32, modeluse.Usage, error)
	Model(op modeluse.Operation) (llm.ModelInfo, bool)
}

// ErrNotReady: the file's content is not indexed yet (or failed).
var ErrNotReady = errors.New("content not indexed")

// Reading limits: a tool result must stay a reasonable part of a model's
// context.
const (
	DefaultObjectLimit = 20
	MaxObjectLimit     = 200
	DefaultMaxBytes    = 48 << 10
	MaxMaxBytes        = 1 << 20
)

// ObjectQuery selects content objects of one file. Offset and Limit page
// through the objects that match; for an on-demand PDF an object is a page.
type ObjectQuery struct {
	// Entry names a container entry (its path, with or without the
	// container's name in front): its content is read instead of the
	// file's own, access checked on the container.
	Entry   string
	Pages   []int
	Section string
	Types   []content.Type
	Offset  int
	// Limit of objects (DefaultObjectLimit when 0, at most MaxObjectLimit).
	Limit int
	// MaxBytes caps the objects' data (DefaultMaxBytes when 0); the object
	// that crosses it ends the page, cut if it is the first.
	MaxBytes int
}

// ObjectPage is one page of a file's content objects (as read_objects
// answers it).
type ObjectPage = wire.ObjectPage

// Section is a section of a file: a run of pages (PDF outline or headings)
// or a heading's numbered part (office documents).
type Section = wire.Section

// Sections lists an index's sections with their ids: an extractor's "id",
// or "s<n>" (n from 1, in order) for the PDF plugin's page sections.
func Sections(idx content.Index) []Section {
	raw, err := json.Marshal(idx.Structure["sections"])
	if err != nil {
		return nil
	}
	var secs []Section
	if json.Unmarshal(raw, &secs) != nil {
		return nil
	}
	for i := range secs {
		if secs[i].ID == "" {
			secs[i].ID = "s" + strconv.Itoa(i+1)
		}
	}
	return secs
}

// FindSection finds a section by id, else by title (exact, then as a
// prefix, then contained; case folded).
func FindSection(idx content.Index, name string) (Section, bool) {
	secs := Sections(idx)
	name = strings.TrimSpace(name)
	for _, s := range secs {
		if s.ID == name {
			return s, true
		}
	}
	lname := strings.ToLower(name)
	for _, match := range []func(t string) bool{
		func(t string) bool { return t == lname },
		func(t string) bool { return strings.HasPrefix(t, lname) },
		func(t string) bool { return strings.Contains(t, lname) },
	} {
		for _, s := range secs {
			if lname != "" && match(strings.ToLower(strings.TrimSpace(s.Title))) {
				return s, true
			}
		}
	}
	return Section{}, false
}

// Reader reads a file's content objects back from the knowledge store and
// extracts the pages of on-demand PDFs the first time they are read,
// embedding them too when an embedder is set.
type Reader struct {
	store  Store
	blobs  Blobs
	pages  PageReader
	embed  Embedder // nil: pages read on demand are found by words only
	logger *slog.Logger
	locks  keyed.Mutex
}

// NewReader returns a reader; pages extracts on-demand pages (the
// extractors).
func NewReader(store Store, blobs Blobs, pages PageReader) *Reader {
	return &Reader{store: store, blobs: blobs, pages: pages, logger: slog.New(slog.DiscardHandler)}
}

// WithEmbedder makes the reader embed the chunks of pages it extracts on
// demand, as ingestion embeds a content's chunks (billed to the file's
// tenant, workspace and uploader), so vector searches find them; logger
// (nil: discarded) hears of embeddings that failed, which leave the pages
// found by their words.
func (r *Reader) WithEmbedder(e Embedder, logger *slog.Logger) *Reader {
	r.embed = e
	if logger != nil {
		r.logger = logger
	}
	return r
}

// Content is what a read reaches: a file's own content, or an entry's
// inside a container file.
type Content struct {
	// File is the file read (the container, for an entry).
	File filemeta.Item
	// Entry is the entry's full container path; empty for the file's own.
	Entry string
	// Name, MIMEType, SHA256 and Size are the content's (the entry's for
	// one).
	Name, MIMEType, SHA256 string
	Size                   int64
	State                  kindex.ContentState
}

// Content resolves what a read of f (entry: one of its container entries,
// "" for f itself) reaches, for a principal who can read f, ready to be
// read (indexed or being embedded).
func (r *Reader) Content(ctx context.Context, p tenancy.Principal, f filemeta.Item, entry string) (Content, error) {
	ctx = wasm.WithTenant(ctx, p.TenantID)
	c := Content{File: f, Name: f.Name, MIMEType: f.MIMEType, SHA256: f.SHA256, Size: f.Size}
	if entry = strings.Trim(strings.TrimSpace(entry), "/"); entry == "" {
		st, err := r.State(ctx, p, f.ID)
		c.State = st
		return c, err
	}
	entries, err := r.store.ContainerEntries(ctx, p, f.ID)
	if err != nil {
		return c, err
	}
	var e *kindex.ContainerEntry
	for i := range entries {
		if entries[i].Path == entry || entries[i].Path == f.Name+"/"+entry {
			e = &entries[i]
			break
		}
	}
	switch {
	case e == nil && len(entries) == 0:
		// A container locked by its password lists no entries: say why.
		if st, err := r.store.ContentState(ctx, p, f.ID); err == nil && unlock.ShownStatus(st.Status, st.Error) == unlock.StatusEncrypted {
			return c, fmt.Errorf("%w: %s", ErrNotReady, st.Error)
		}
		return c, fmt.Errorf("%w: %s has no entry %q (see its index for the entries)", extract.ErrNoEntry, f.Name, entry)
	case e == nil:
		return c, fmt.Errorf("%w: %s has no entry %q (see its index for the entries)", extract.ErrNoEntry, f.Name, entry)
	case e.Container:
		return c, fmt.Errorf("%w: %s is a container inside %s; read one of its entries", tenancy.ErrInvalid, e.Path, f.Name)
	case e.Error != "" || e.SHA256 == "":
		return c, fmt.Errorf("%w: entry %s: %s", ErrNotReady, e.Path, cmp.Or(e.Error, "its bytes were not extracted"))
	}
	c.Entry, c.Name, c.MIMEType, c.SHA256, c.Size = e.Path, path.Base(e.Path), e.MIMEType, e.SHA256, e.Size
	st, err := r.store.ContentStateOf(ctx, f.TenantID, e.SHA256)
	if errors.Is(err, tenancy.ErrNotFound) {
		return c, fmt.Errorf("%w: entry %s is still being indexed (pending); try again shortly", ErrNotReady, e.Path)
	}
	if err != nil {
		return c, err
	}
	c.State = st
	return c, ready(st)
}

// State returns the content state of a file the principal can read, ready
// to be read (indexed or being embedded).
func (r *Reader) State(ctx context.Context, p tenancy.Principal, fileID string) (kindex.ContentState, error) {
	st, err := r.store.ContentState(ctx, p, fileID)
	if err != nil {
		return st, err
	}
	return st, ready(st)
}

// ContentState returns the content state of a file the principal can
// read, whatever its status (State answers only for a readable one).
func (r *Reader) ContentState(ctx context.Context, p tenancy.Principal, fileID string) (kindex.ContentState, error) {
	return r.store.ContentState(ctx, p, fileID)
}

// ready says whether a content can be read, and why not.
func ready(st kindex.ContentState) error {
	switch st.Status {
	case kindex.StatusIndexed, kindex.StatusEmbedding:
		return nil
	case kindex.StatusFailed:
		return fmt.Errorf("%w: indexing failed: %s", ErrNotReady, st.Error)
	default:
		state := string(st.Status)
		if st.Note != "" {
			state += ": " + st.Note
		}
		return fmt.Errorf("%w: the file is still being indexed (%s); try again shortly", ErrNotReady, state)
	}
}

// Objects returns the page of f's content objects that q selects,
// extracting missing pages of an on-demand PDF first.
func (r *Reader) Objects(ctx context.Context, p tenancy.Principal, f filemeta.Item, q ObjectQuery) (ObjectPage, error) {
	ctx = wasm.WithTenant(ctx, p.TenantID)
	if err := q.normalize(); err != nil {
		return ObjectPage{}, err
	}
	c, err := r.Content(ctx, p, f, q.Entry)
	if err != nil {
		return ObjectPage{}, err
	}
	st := c.State
	var out ObjectPage
	flt := kindex.ChunkFilter{Pages: q.Pages, Types: q.Types}
	if q.Section != "" {
		sec, ok := FindSection(st.Index, q.Section)
		if !ok {
			return ObjectPage{}, fmt.Errorf("%w: %s has no section %q (see its index for the sections)", tenancy.ErrInvalid, c.Name, q.Section)
		}
		out.Section = &sec
		if sec.EndPage > 0 {
			flt.Pages = PagesWithin(q.Pages, sec.StartPage, sec.EndPage)
			if len(flt.Pages) == 0 {
				return out, nil
			}
		} else {
			flt.Section = sec.ID
		}
	}
	if Is(st.Index) {
		return r.onDemand(ctx, c, q, flt, out)
	}
	chunks, err := r.store.ContentChunksOf(ctx, f.TenantID, c.SHA256, flt)
	if err != nil {
		return ObjectPage{}, err
	}
	objs := fromChunks(chunks)
	objs = append(objs, unchunked(st.Index, flt)...)
	out.Total = len(objs)
	fillPage(&out, objs, q)
	return out, nil
}

// onDemand serves q from an on-demand PDF: its objects are its pages, the
// window's missing pages are extracted and stored first.
func (r *Reader) onDemand(ctx context.Context, c Content, q ObjectQuery, flt kindex.ChunkFilter, out ObjectPage) (ObjectPage, error) {
	if len(flt.Types) > 0 && !slices.Contains(flt.Types, content.Text) {
		return out, nil // a PDF's pages are text
	}
	n := PageCount(c.State.Index)
	want := flt.Pages
	if len(want) == 0 {
		want = PagesWithin(nil, 1, n)
	}
	for _, pg := range want {
		if pg < 1 || pg > n {
			return ObjectPage{}, fmt.Errorf("%w: page %d is outside %s's pages 1-%d", tenancy.ErrInvalid, pg, c.Name, n)
		}
	}
	out.Total = len(want)
	if q.Offset >= len(want) {
		return out, nil
	}
	window := want[q.Offset:min(len(want), q.Offset+q.Limit)]
	extracted, err := r.ensurePages(ctx, c, window)
	if err != nil {
		return ObjectPage{}, err
	}
	out.ExtractedPages = extracted
	chunks, err := r.store.ContentChunksOf(ctx, c.File.TenantID, c.SHA256, kindex.ChunkFilter{Pages: window})
	if err != nil {
		return ObjectPage{}, err
	}
	byPage := map[int][]kindex.Chunk{}
	for _, c := range chunks {
		byPage[c.Ref.PageIndex] = append(byPage[c.Ref.PageIndex], c)
	}
	objs := make([]content.Object, 0, len(window))
	for _, pg := range window {
		if cs := byPage[pg]; len(cs) > 0 {
			objs = append(objs, fromChunks(cs)...)
			continue
		}
		// A page without text (a scan, a picture) is still a page.
		objs = append(objs, content.Object{ID: fmt.Sprintf("page-%d", pg), ContentType: content.Text,
			Ref: content.Ref{PageIndex: pg, Location: fmt.Sprintf("page:%d", pg)}, Sequence: pg,
			Metadata: map[string]any{"empty": true}})
	}
	page := out
	fillPage(&page, objs, ObjectQuery{Limit: len(objs), MaxBytes: q.MaxBytes})
	if page.NextOffset > 0 {
		// The byte cap ended the page: go on from the first page left out.
		page.NextOffset = q.Offset + slices.Index(window, objs[page.NextOffset].Ref.PageIndex)
	} else if q.Offset+len(window) < len(want) {
		page.NextOffset = q.Offset + len(window)
	}
	page.Total = len(want)
	return page, nil
}

// ensurePages extracts and stores the pages not extracted yet, once per
// content at a time in this host: a second reader waits, then finds them
// stored. Across hosts two readers may both extract a page; the store keeps
// it once.
func (r *Reader) ensurePages(ctx context.Context, c Content, pages []int) ([]int, error) {
	tenant := c.File.TenantID
	release := r.locks.Lock(tenant + ":" + c.SHA256)
	defer release()
	st, err := r.store.ContentStateOf(ctx, tenant, c.SHA256)
	if err != nil {
		return nil, err
	}
	done := kindex.ExtractedPages(st.Index)
	var missing []int
	for _, pg := range pages {
		if _, ok := slices.BinarySearch(done, pg); !ok {
			missing = append(missing, pg)
		}
	}
	if len(missing) == 0 {
		return nil, nil
	}
	slices.Sort(missing)
	missing = slices.Compact(missing)
	// The pre-scan's sections are definitive: none found means none, not
	// "look for them".
	sections := Sections(st.Index)
	if sections == nil {
		sections = []Section{}
	}
	blob, err := r.blobs.Open(ctx, c.SHA256)
	if err != nil {
		return nil, fmt.Errorf("knowledge: content of %s: %w", c.Name, err)
	}
	defer blob.Close()
	for _, run := range runs(missing) {
		objs, err := r.pages.ReadPages(ctx, c.Name, c.MIMEType, blob, run[0], run[len(run)-1], sections)
		if err != nil {
			return nil, fmt.Errorf("knowledge: reading pages %d-%d of %s: %w", run[0], run[len(run)-1], c.Name, err)
		}
		var sums []content.Summary
		var chunks []kindex.Chunk
		for _, o := range objs {
			sums = append(sums, content.Summarize(o))
			// One object at a time: chunk ids ("page-7#0") stay unique
			// across the runs stored at different times.
			chunks = append(chunks, chunk.Split([]content.Object{o}, chunk.Tokens)...)
		}
		if err := r.store.AddContentPages(ctx, tenant, c.SHA256, run, sums, chunks); err != nil {
			return nil, fmt.Errorf("knowledge: storing pages of %s: %w", c.Name, err)
		}
		r.embedPages(ctx, c, chunks)
	}
	return missing, nil
}

// embedPages embeds the chunks of pages read on demand and adds their
// vectors to the content's, billed as ingestion bills its embeddings. A
// failure leaves the pages found by their words, as at ingestion.
func (r *Reader) embedPages(ctx context.Context, c Content, chunks []kindex.Chunk) {
	if r.embed == nil || len(chunks) == 0 {
		return
	}
	m, ok := r.embed.Model(modeluse.OpEmbedding)
	if !ok {
		return
	}
	f := c.File
	ctx = llm.WithAttribution(ctx, llm.Attribution{TenantID: f.TenantID, WorkspaceID: f.WorkspaceID, UserID: f.CreatedBy, Purpose: "embedding"})
	texts := make([]string, len(chunks))
	for i, ch := range chunks {
		texts[i] = ch.Text
	}
	vecs, _, err := r.embed.Embed(ctx, texts)
	if err == nil {
		err = r.store.AddVectors(ctx, f.TenantID, c.SHA256, m.Name, chunks, vecs)
	}
	if err != nil {
		r.logger.Warn("knowledge: embedding pages read on demand failed; they are found by their words", "file", f.ID, "entry", c.Entry, "err", err)
	}
}

// runs cuts sorted pages into runs of consecutive pages, so each run is one
// readPages call.
func runs(pages []int) [][]int {
	var out [][]int
	for i, pg := range pages {
		if i == 0 || pg != pages[i-1]+1 {
			out = append(out, nil)
		}
		out[len(out)-1] = append(out[len(out)-1], pg)
	}
	return out
}

// PagesWithin is the pages of want within from..to, or all of from..to
// when want is empty.
func PagesWithin(want []int, from, to int) []int {
	var out []int
	if len(want) == 0 {
		for pg := from; pg <= to; pg++ {
			out = append(out, pg)
		}
		return out
	}
	for _, pg := range want {
		if pg >= from && pg <= to {
			out = append(out, pg)
		}
	}
	return out
}

// fromChunks joins the chunks of each object back into the object, in
// order. Chunks were cut at paragraph, sentence or word boundaries; they
// are joined with a blank line, which keeps the words and their order.
func fromChunks(chunks []kindex.Chunk) []content.Object {
	var out []content.Object
	at := map[string]int{}
	for _, c := range chunks {
		if i, ok := at[c.ObjectID]; ok {
			out[i].Data += "\n\n" + c.Text
			continue
		}
		at[c.ObjectID] = len(out)
		out = append(out, content.Object{ID: c.ObjectID, ContentType: c.ContentType, Data: c.Text, Ref: c.Ref, Sequence: len(out)})
	}
	return out
}

// unchunked lists the index's objects that have no text chunks (images,
// media) and match the filter, as objects without data: the store keeps
// their summary, not their bytes.
func unchunked(idx content.Index, flt kindex.ChunkFilter) []content.Object {
	var out []content.Object
	for _, s := range idx.Objects {
		if s.ContentType == content.Text {
			continue
		}
		if len(flt.Types) > 0 && !slices.Contains(flt.Types, s.ContentType) {
			continue
		}
		if len(flt.Pages) > 0 && !slices.Contains(flt.Pages, s.Ref.PageIndex) {
			continue
		}
		if flt.Section != "" && s.Ref.SectionID != flt.Section && !strings.HasPrefix(s.Ref.SectionID, flt.Section+".") {
			continue
		}
		md := map[string]any{"stored": "summary"}
		if s.Dimensions != "" {
			md["dimensions"] = s.Dimensions
		}
		if s.Duration > 0 {
			md["duration"] = s.Duration
		}
		out = append(out, content.Object{ID: s.ID, ContentType: s.ContentType, Ref: s.Ref, Metadata: md})
	}
	return out
}

// fillPage sets pg's objects: objs[q.Offset:] up to q.Limit objects and
// q.MaxBytes bytes of data.
func fillPage(pg *ObjectPage, objs []content.Object, q ObjectQuery) {
	pg.Objects = []content.Object{}
	if q.Offset >= len(objs) {
		return
	}
	bytes := 0
	i := q.Offset
	for ; i < len(objs) && i < q.Offset+q.Limit; i++ {
		o := objs[i]
		if bytes+len(o.Data) > q.MaxBytes {
			if len(pg.Objects) == 0 {
				o.Data = cut(o.Data, q.MaxBytes)
				pg.Objects = append(pg.Objects, o)
				pg.Truncated = true
				i++
			}
			break
		}
		bytes += len(o.Data)
		pg.Objects = append(pg.Objects, o)
	}
	if i < len(objs) {
		pg.NextOffset = i
	}
}

// cut shortens s to at most n bytes on a rune boundary.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

func (q *ObjectQuery) normalize() error {
	if q.Offset < 0 {
		return fmt.Errorf("%w: offset %d is negative", tenancy.ErrInvalid, q.Offset)
	}
	switch {
	case q.Limit < 0 || q.Limit > MaxObjectLimit:
		return fmt.Errorf("%w: limit %d is outside 1-%d", tenancy.ErrInvalid, q.Limit, MaxObjectLimit)
	case q.Limit == 0:
		q.Limit = DefaultObjectLimit
	}
	switch {
	case q.MaxBytes < 0 || q.MaxBytes > MaxMaxBytes:
		return fmt.Errorf("%w: maxBytes %d is outside 1-%d", tenancy.ErrInvalid, q.MaxBytes, MaxMaxBytes)
	case q.MaxBytes == 0:
		q.MaxBytes = DefaultMaxBytes
	}
	for _, pg := range q.Pages {
		if pg < 1 {
			return fmt.Errorf("%w: page %d (pages count from 1)", tenancy.ErrInvalid, pg)
		}
	}
	if len(q.Pages) > 10000 {
		return fmt.Errorf("%w: %d pages asked for; at most 10000", tenancy.ErrInvalid, len(q.Pages))
	}
	for _, t := range q.Types {
		switch t {
		case content.Text, content.Image, content.VideoStream, content.AudioStream, content.Other:
		default:
			return fmt.Errorf("%w: unknown content type %q (text, image, videostream, audiostream, other)", tenancy.ErrInvalid, t)
		}
	}
	q.Pages = slices.Clone(q.Pages)
	slices.Sort(q.Pages)
	q.Pages = slices.Compact(q.Pages)
	return nil
}
