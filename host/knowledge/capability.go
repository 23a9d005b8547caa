package knowledge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"strings"

	"github.com/agenthost/agenthost/host/files"
	"github.com/agenthost/agenthost/host/files/filemeta"
	"github.com/agenthost/agenthost/host/knowledge/extract"
	"github.com/agenthost/agenthost/host/knowledge/kindex"
	"github.com/agenthost/agenthost/host/knowledge/ondemand"
	"github.com/agenthost/agenthost/host/knowledge/progress"
	"github.com/agenthost/agenthost/host/knowledge/unlock"
	"github.com/agenthost/agenthost/host/tenancy"
	"github.com/agenthost/agenthost/host/toolcall"
	"github.com/agenthost/agenthost/host/wasm"
	"github.com/agenthost/agenthost/host/workflows"
	"github.com/agenthost/agenthost/pdk/content"
	"github.com/agenthost/agenthost/pdk/knowledge/wire"
)

// CapabilityName is the knowledge capability's name in manifests; its
// functions are imported from module "agenthost:knowledge".
const CapabilityName = "knowledge"

// FileGetter reads a file's metadata for a principal (files.Service).
type FileGetter interface {
	Get(ctx context.Context, p tenancy.Principal, id string) (filemeta.Item, error)
}

// DocumentResolver turns docItem references into a workflow's documents
// (workflows.Service).
type DocumentResolver interface {
	ResolveDocuments(ctx context.Context, p tenancy.Principal, workflowID string, refs []string) ([]workflows.Document, error)
}

// HitSearcher runs a knowledge search for a principal (the search.Service).
type HitSearcher interface {
	Search(ctx context.Context, p tenancy.Principal, q kindex.Query) ([]kindex.Hit, error)
}

// Capability is the knowledge capability and what it acts through. Every
// function acts for the caller of the tool call (toolcall.From) and sees
// only the files that caller can read. The plugin host is built before the
// services it reaches, so a server holds it by pointer and fills it in
// before serving; until then its functions answer "unavailable".
type Capability struct {
	Files     FileGetter
	Documents DocumentResolver // nil: docItem references are refused
	Search    HitSearcher
	Reader    *ondemand.Reader
	// Containers lists and extracts archives' entries (the containers side
	// of indexing); nil: files are not containers here.
	Containers ContainerEntries
	// Folders lists the caller's workspace folders as containers; nil:
	// folders are not browsed here.
	Folders FolderLister
}

// ContainerEntries lists a container's entry tree and extracts one entry
// on demand, both for a principal (indexing.Containers).
type ContainerEntries interface {
	Entries(ctx context.Context, p tenancy.Principal, fileID string) ([]kindex.ContainerEntry, error)
	ExtractEntry(ctx context.Context, p tenancy.Principal, fileID, path string) (kindex.ContainerEntry, error)
}

// Capability error codes of the knowledge functions.
const (
	CodeNoCaller        = "no_caller"
	CodeInvalidArgument = "invalid_arguments"
	CodeNotFound        = "not_found"
	CodeNotReady        = "not_ready"
	CodeUnsupported     = "unsupported"
	CodeUnavailable     = "unavailable"
)

// Wasm returns the capability "knowledge" (docs/plugin-abi.md): search,
// index, read_objects, read_section (read) and extract_item (write), JSON
// functions of module "agenthost:knowledge".
func (d *Capability) Wasm() wasm.Capability {
	fn := func(name string, write bool) wasm.HostFunction {
		return wasm.JSONFunction(wasm.CapabilityPrefix+CapabilityName, name, write, func(ctx context.Context, _ *wasm.Call, req json.RawMessage) (any, error) {
			return d.Call(ctx, name, req)
		})
	}
	return wasm.Capability{
		Name:        CapabilityName,
		Description: "search the knowledge store and read files' content indexes, sections and content objects as the calling user (pages of large PDFs are extracted on demand); list the workspace's folders; extract container entries",
		Functions: []wasm.HostFunction{
			fn("search", false), fn("index", false), fn("read_objects", false), fn("read_section", false), fn("extract_item", true),
			fn("folder", false),
		},
	}
}

// Call runs the named function (search, index, read_objects, read_section,
// extract_item) on a JSON request for the caller in ctx, exactly as a
// plugin's call does; errors are *wasm.CapabilityError with the code a
// plugin sees. Whether the tool may write is the plugin runtime's check,
// not this one's.
func (d *Capability) Call(ctx context.Context, name string, req json.RawMessage) (any, error) {
	handlers := map[string]func(context.Context, toolcall.Caller, json.RawMessage) (any, error){
		"search": d.search, "index": d.index, "read_objects": d.readObjects, "read_section": d.readSection, "extract_item": d.extractItem,
		"folder": d.folder,
	}
	h, ok := handlers[name]
	if !ok {
		return nil, &wasm.CapabilityError{Code: CodeInvalidArgument, Message: "knowledge: no function " + name}
	}
	c, ok := toolcall.From(ctx)
	if !ok || c.Principal.TenantID == "" {
		return nil, &wasm.CapabilityError{Code: CodeNoCaller, Message: "knowledge." + name + ": this call acts for nobody (no caller in its context), so it may read nothing"}
	}
	if d.Reader == nil || d.Files == nil || d.Search == nil {
		return nil, &wasm.CapabilityError{Code: CodeUnavailable, Message: "knowledge." + name + ": the knowledge store is not connected in this process"}
	}
	out, err := h(ctx, c, req)
	if err != nil {
		return nil, capabilityError(name, err)
	}
	return out, nil
}

// capabilityError gives an error its capability code.
func capabilityError(fn string, err error) error {
	code := "error"
	switch {
	case errors.Is(err, tenancy.ErrNotFound), errors.Is(err, tenancy.ErrForbidden):
		code = CodeNotFound
	case errors.Is(err, tenancy.ErrInvalid):
		code = CodeInvalidArgument
	case errors.Is(err, ondemand.ErrNotReady):
		code = CodeNotReady
	case errors.Is(err, extract.ErrNoExtractor):
		code = CodeUnsupported
	}
	return &wasm.CapabilityError{Code: code, Message: "knowledge." + fn + ": " + err.Error()}
}

// decode reads a request strictly: an unknown field is a mistake worth
// reporting, not ignoring.
func decode(req json.RawMessage, v any) error {
	if err := wasm.DecodeRequest(req, v); err != nil {
		return fmt.Errorf("%w: %v", tenancy.ErrInvalid, err)
	}
	return nil
}

// file resolves a file argument, a file id or "docItem:<id>" of the
// caller's workflow, to a file the caller can read (files.ResolveFile: the
// one reference parser).
func (d *Capability) file(ctx context.Context, c toolcall.Caller, ref string) (filemeta.Item, error) {
	if strings.TrimSpace(ref) == "" {
		return filemeta.Item{}, fmt.Errorf("%w: file is required (a file id or docItem:<id>)", tenancy.ErrInvalid)
	}
	var docs files.DocumentResolver
	if d.Documents != nil {
		docs = d.Documents
	}
	id, err := files.ResolveFile(ctx, docs, c, ref)
	if err != nil {
		return filemeta.Item{}, fmt.Errorf("%w: %w", codeErr(err), err)
	}
	f, err := d.Files.Get(ctx, c.Principal, id)
	if err != nil {
		return filemeta.Item{}, err
	}
	return f, nil
}

// codeErr maps a files capability error's code back to the domain error
// this capability reports.
func codeErr(err error) error {
	var ce *wasm.CapabilityError
	if errors.As(err, &ce) {
		switch ce.Code {
		case "not_found":
			return tenancy.ErrNotFound
		case "forbidden":
			return tenancy.ErrForbidden
		case "invalid_request":
			return tenancy.ErrInvalid
		}
	}
	return tenancy.ErrInvalid
}

// The capability's requests and answers are declared once, with the guest
// bindings' (pdk/knowledge/wire); these names are the host's for them.
type (
	// SearchResponse is knowledge.search's answer.
	SearchResponse = wire.SearchResponse
	// IndexResponse is a file's content index as knowledge.index gives it.
	IndexResponse = wire.Index
	// ReadObjectsResponse is a page of a file's content objects, as
	// read_objects and read_section give it.
	ReadObjectsResponse = wire.Objects
	// ExtractItemResponse is the entry extract_item extracted.
	ExtractItemResponse = wire.ExtractItemResponse
)

func (d *Capability) search(ctx context.Context, c toolcall.Caller, req json.RawMessage) (any, error) {
	var r wire.SearchRequest
	if err := decode(req, &r); err != nil {
		return nil, err
	}
	if strings.TrimSpace(r.Query) == "" {
		return nil, fmt.Errorf("%w: query is required", tenancy.ErrInvalid)
	}
	if r.Limit < 0 || r.Limit > 50 {
		return nil, fmt.Errorf("%w: limit %d is outside 1-50", tenancy.ErrInvalid, r.Limit)
	}
	if r.Page < 0 {
		return nil, fmt.Errorf("%w: page %d (pages count from 1)", tenancy.ErrInvalid, r.Page)
	}
	if err := kindex.CheckHidden(r.Hidden); err != nil {
		return nil, err
	}
	q := kindex.Query{Text: r.Query, Layer: kindex.Layer(r.Layer), Limit: r.Limit, Page: r.Page, Section: r.Section, ContentType: r.Type, Hidden: r.Hidden}
	if q.Layer == kindex.LayerInstance {
		q.WorkspaceID = c.WorkspaceID
	}
	for _, ref := range r.FileIDs {
		f, err := d.file(ctx, c, ref)
		if err != nil {
			return nil, err
		}
		q.FileIDs = append(q.FileIDs, f.ID)
	}
	hits, err := d.Search.Search(ctx, c.Principal, q)
	if err != nil {
		return nil, err
	}
	if hits == nil {
		hits = []kindex.Hit{}
	}
	return SearchResponse{Hits: hits}, nil
}

func (d *Capability) index(ctx context.Context, c toolcall.Caller, req json.RawMessage) (any, error) {
	var r wire.IndexRequest
	if err := decode(req, &r); err != nil {
		return nil, err
	}
	switch {
	case r.ObjectsLimit < 0 || r.ObjectsLimit > 1000:
		return nil, fmt.Errorf("%w: objectsLimit %d is outside 1-1000", tenancy.ErrInvalid, r.ObjectsLimit)
	case r.ObjectsLimit == 0:
		r.ObjectsLimit = 100
	}
	f, err := d.file(ctx, c, r.File)
	if err != nil {
		return nil, err
	}
	out := IndexResponse{FileID: f.ID, FileName: f.Name, MIMEType: f.MIMEType, Size: f.Size, Objects: []content.Summary{}}
	if d.Containers != nil {
		entries, eerr := d.Containers.Entries(ctx, c.Principal, f.ID)
		if eerr == nil {
			out.Entries = entries
		}
	}
	var st kindex.ContentState
	if r.Path != "" {
		// An entry's index, whatever its status (pending: no row yet).
		cn, err := d.Reader.Content(ctx, c.Principal, f, r.Path)
		if cn.Entry == "" {
			return nil, err
		}
		out.Path, out.FileName, out.MIMEType, out.Size, out.Entries = cn.Entry, cn.Name, cn.MIMEType, cn.Size, nil
		if st = cn.State; st.Status == "" {
			out.Status = kindex.StatusPending
			return out, nil
		}
	} else if st, err = d.Reader.ContentState(ctx, c.Principal, f.ID); err != nil {
		if errors.Is(err, tenancy.ErrNotFound) {
			// Readable file, no content row yet: indexing has not started.
			out.Status = kindex.StatusPending
			return out, nil
		}
		return nil, err
	}
	out.Status, out.Error = unlock.ShownStatus(st.Status, st.Error), st.Error
	out.OnDemand, out.Pages = ondemand.Is(st.Index), ondemand.PageCount(st.Index)
	if out.OnDemand {
		out.ExtractedPages = kindex.ExtractedPages(st.Index)
		if out.ExtractedPages == nil {
			out.ExtractedPages = []int{}
		}
	}
	out.Sections = ondemand.Sections(st.Index)
	out.Progress = progress.Of(st)
	out.Structure = maps.Clone(st.Index.Structure)
	for _, k := range []string{"pageMap", "outline", "headings", "sections", kindex.StructOnDemand, kindex.StructExtractedPages} {
		delete(out.Structure, k)
	}
	out.TotalObjects = st.Index.TotalObjects
	out.Objects = st.Index.Objects[:min(len(st.Index.Objects), r.ObjectsLimit)]
	return out, nil
}

func (d *Capability) readObjects(ctx context.Context, c toolcall.Caller, req json.RawMessage) (any, error) {
	var r wire.ObjectsRequest
	if err := decode(req, &r); err != nil {
		return nil, err
	}
	return d.read(ctx, c, r)
}

func (d *Capability) read(ctx context.Context, c toolcall.Caller, r wire.ObjectsRequest) (any, error) {
	f, err := d.file(ctx, c, r.File)
	if err != nil {
		return nil, err
	}
	pg, err := d.Reader.Objects(ctx, c.Principal, f, ondemand.ObjectQuery{
		Entry: r.Path, Pages: r.Pages, Section: r.Section, Types: r.Types, Offset: r.Offset, Limit: r.Limit, MaxBytes: r.MaxBytes,
	})
	if err != nil {
		return nil, err
	}
	out := ReadObjectsResponse{FileID: f.ID, FileName: f.Name, ObjectPage: pg}
	if r.Path == "" {
		// Said where the agent reads, not only in the index: pages read
		// now are complete, but a search may miss pages not indexed yet.
		if st, err := d.Reader.ContentState(ctx, c.Principal, f.ID); err == nil {
			if p := progress.Of(st); p != nil && p.Pending {
				out.Indexing = "this document is still being indexed: " + p.Message
			}
		}
	}
	if r.Path != "" {
		out.Path = f.Name + "/" + strings.TrimPrefix(strings.Trim(r.Path, "/ "), f.Name+"/")
	}
	return out, nil
}

func (d *Capability) readSection(ctx context.Context, c toolcall.Caller, req json.RawMessage) (any, error) {
	var r wire.SectionRequest
	if err := decode(req, &r); err != nil {
		return nil, err
	}
	if strings.TrimSpace(r.Section) == "" {
		return nil, fmt.Errorf("%w: section is required (an id or title from the file's index)", tenancy.ErrInvalid)
	}
	return d.read(ctx, c, wire.ObjectsRequest{File: r.File, Path: r.Path, Section: r.Section, Offset: r.Offset, Limit: r.Limit, MaxBytes: r.MaxBytes})
}

func (d *Capability) extractItem(ctx context.Context, c toolcall.Caller, req json.RawMessage) (any, error) {
	var r wire.ExtractItemRequest
	if err := decode(req, &r); err != nil {
		return nil, err
	}
	if strings.TrimSpace(r.Path) == "" {
		return nil, fmt.Errorf("%w: path is required (an entry's path from the container's index)", tenancy.ErrInvalid)
	}
	f, err := d.file(ctx, c, r.File)
	if err != nil {
		return nil, err
	}
	if d.Containers == nil {
		return nil, fmt.Errorf("%w: this host resolves no containers, so %s has no entries to extract", extract.ErrNoExtractor, f.Name)
	}
	e, err := d.Containers.ExtractEntry(ctx, c.Principal, f.ID, r.Path)
	if err != nil {
		return nil, err
	}
	return ExtractItemResponse{FileID: f.ID, Path: r.Path, Entry: e}, nil
}
