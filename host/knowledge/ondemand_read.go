package knowledge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/agenthost/agenthost/host/files"
	"github.com/agenthost/agenthost/host/tenancy"
	"github.com/agenthost/agenthost/pdk/content"
)

// ContentStore is what reading content back needs of the database.
type ContentStore interface {
	ContentState(ctx context.Context, p tenancy.Principal, fileID string) (ContentState, error)
	ContentChunks(ctx context.Context, p tenancy.Principal, fileID string, f ChunkFilter) ([]Chunk, error)
	AddContentPages(ctx context.Context, tenantID, sha string, pages []int, summaries []content.Summary, chunks []Chunk) error
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

// ObjectPage is one page of a file's content objects.
type ObjectPage struct {
	Objects []content.Object `json:"objects"`
	// Total is how many objects match the query.
	Total int `json:"total"`
	// NextOffset is where the next page starts; 0 when this is the last.
	NextOffset int `json:"nextOffset,omitempty"`
	// Truncated: the byte cap cut the page's only object.
	Truncated bool `json:"truncated,omitempty"`
	// Section is the section the query named, resolved.
	Section *Section `json:"section,omitempty"`
	// ExtractedPages are the pages this read extracted on demand (none when
	// everything came from the store).
	ExtractedPages []int `json:"extractedPages,omitempty"`
}

// Section is a section of a file: a run of pages (PDF outline or headings)
// or a heading's numbered part (office documents).
type Section struct {
	ID        string `json:"id"`
	Title     string `json:"title"`
	Level     int    `json:"level,omitempty"`
	StartPage int    `json:"startPage,omitempty"`
	EndPage   int    `json:"endPage,omitempty"`
}

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
// extracts the pages of on-demand PDFs the first time they are read.
type Reader struct {
	store ContentStore
	blobs Blobs
	pages PageReader
	locks keyedMutex
}

// NewReader returns a reader; pages extracts on-demand pages (the
// extractors).
func NewReader(store ContentStore, blobs Blobs, pages PageReader) *Reader {
	return &Reader{store: store, blobs: blobs, pages: pages}
}

// State returns the content state of a file the principal can read, ready
// to be read (indexed or being embedded).
func (r *Reader) State(ctx context.Context, p tenancy.Principal, fileID string) (ContentState, error) {
	st, err := r.store.ContentState(ctx, p, fileID)
	if err != nil {
		return st, err
	}
	switch st.Status {
	case StatusIndexed, StatusEmbedding:
		return st, nil
	case StatusFailed:
		return st, fmt.Errorf("%w: indexing failed: %s", ErrNotReady, st.Error)
	default:
		return st, fmt.Errorf("%w: the file is still being indexed (%s); try again shortly", ErrNotReady, st.Status)
	}
}

// Objects returns the page of f's content objects that q selects,
// extracting missing pages of an on-demand PDF first.
func (r *Reader) Objects(ctx context.Context, p tenancy.Principal, f files.Item, q ObjectQuery) (ObjectPage, error) {
	if err := q.normalize(); err != nil {
		return ObjectPage{}, err
	}
	st, err := r.State(ctx, p, f.ID)
	if err != nil {
		return ObjectPage{}, err
	}
	var out ObjectPage
	flt := ChunkFilter{Pages: q.Pages, Types: q.Types}
	if q.Section != "" {
		sec, ok := FindSection(st.Index, q.Section)
		if !ok {
			return ObjectPage{}, fmt.Errorf("%w: %s has no section %q (see its index for the sections)", tenancy.ErrInvalid, f.Name, q.Section)
		}
		out.Section = &sec
		if sec.EndPage > 0 {
			flt.Pages = pagesWithin(q.Pages, sec.StartPage, sec.EndPage)
			if len(flt.Pages) == 0 {
				return out, nil
			}
		} else {
			flt.Section = sec.ID
		}
	}
	if OnDemand(st.Index) {
		return r.onDemand(ctx, p, f, st, q, flt, out)
	}
	chunks, err := r.store.ContentChunks(ctx, p, f.ID, flt)
	if err != nil {
		return ObjectPage{}, err
	}
	objs := fromChunks(chunks)
	objs = append(objs, unchunked(st.Index, flt)...)
	out.Total = len(objs)
	out.window(objs, q)
	return out, nil
}

// onDemand serves q from an on-demand PDF: its objects are its pages, the
// window's missing pages are extracted and stored first.
func (r *Reader) onDemand(ctx context.Context, p tenancy.Principal, f files.Item, st ContentState, q ObjectQuery, flt ChunkFilter, out ObjectPage) (ObjectPage, error) {
	if len(flt.Types) > 0 && !slices.Contains(flt.Types, content.Text) {
		return out, nil // a PDF's pages are text
	}
	n := pageCount(st.Index)
	want := flt.Pages
	if len(want) == 0 {
		want = pagesWithin(nil, 1, n)
	}
	for _, pg := range want {
		if pg < 1 || pg > n {
			return ObjectPage{}, fmt.Errorf("%w: page %d is outside %s's pages 1-%d", tenancy.ErrInvalid, pg, f.Name, n)
		}
	}
	out.Total = len(want)
	if q.Offset >= len(want) {
		return out, nil
	}
	window := want[q.Offset:min(len(want), q.Offset+q.Limit)]
	extracted, err := r.ensurePages(ctx, p, f, window)
	if err != nil {
		return ObjectPage{}, err
	}
	out.ExtractedPages = extracted
	chunks, err := r.store.ContentChunks(ctx, p, f.ID, ChunkFilter{Pages: window})
	if err != nil {
		return ObjectPage{}, err
	}
	byPage := map[int][]Chunk{}
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
	page.window(objs, ObjectQuery{Limit: len(objs), MaxBytes: q.MaxBytes})
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
func (r *Reader) ensurePages(ctx context.Context, p tenancy.Principal, f files.Item, pages []int) ([]int, error) {
	unlock := r.locks.lock(f.TenantID + ":" + f.SHA256)
	defer unlock()
	st, err := r.store.ContentState(ctx, p, f.ID)
	if err != nil {
		return nil, err
	}
	done := ExtractedPages(st.Index)
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
	blob, err := r.blobs.Open(ctx, f.SHA256)
	if err != nil {
		return nil, fmt.Errorf("knowledge: content of %s: %w", f.Name, err)
	}
	defer blob.Close()
	for _, run := range runs(missing) {
		objs, err := r.pages.ReadPages(ctx, f.Name, f.MIMEType, blob, run[0], run[len(run)-1])
		if err != nil {
			return nil, fmt.Errorf("knowledge: reading pages %d-%d of %s: %w", run[0], run[len(run)-1], f.Name, err)
		}
		var sums []content.Summary
		var chunks []Chunk
		for _, o := range objs {
			sums = append(sums, content.Summarize(o))
			// One object at a time: chunk ids ("page-7#0") stay unique
			// across the runs stored at different times.
			chunks = append(chunks, Split([]content.Object{o}, ChunkTokens)...)
		}
		if err := r.store.AddContentPages(ctx, f.TenantID, f.SHA256, run, sums, chunks); err != nil {
			return nil, fmt.Errorf("knowledge: storing pages of %s: %w", f.Name, err)
		}
	}
	return missing, nil
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

// pagesWithin is the pages of want within from..to, or all of from..to
// when want is empty.
func pagesWithin(want []int, from, to int) []int {
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
func fromChunks(chunks []Chunk) []content.Object {
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
func unchunked(idx content.Index, flt ChunkFilter) []content.Object {
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

// window keeps objs[q.Offset:] up to q.Limit objects and q.MaxBytes bytes
// of data.
func (pg *ObjectPage) window(objs []content.Object, q ObjectQuery) {
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

// keyedMutex is one mutex per key, dropped when nobody holds or waits.
type keyedMutex struct {
	mu sync.Mutex
	m  map[string]*keyedEntry
}

type keyedEntry struct {
	mu sync.Mutex
	n  int
}

func (k *keyedMutex) lock(key string) (unlock func()) {
	k.mu.Lock()
	if k.m == nil {
		k.m = map[string]*keyedEntry{}
	}
	e := k.m[key]
	if e == nil {
		e = &keyedEntry{}
		k.m[key] = e
	}
	e.n++
	k.mu.Unlock()
	e.mu.Lock()
	return func() {
		e.mu.Unlock()
		k.mu.Lock()
		if e.n--; e.n == 0 {
			delete(k.m, key)
		}
		k.mu.Unlock()
	}
}
