// Package wire is the shape of the knowledge capability's requests and
// answers (module "agenthost:knowledge", docs/plugin-abi.md), declared once
// for both sides: the host's capability (host/knowledge) answers with these
// types and the guest bindings (pdk/knowledge) decode them. Like
// pdk/content it holds types only: no guest ABI, no host dependency, so
// either side imports it without the other's code.
package wire

import "github.com/agenthost/agenthost/pdk/content"

// Status is where a file's (or a container entry's) content stands in the
// indexing pipeline.
type Status string

// The indexing states: pending → extracted → embedding → indexed, or failed
// with the reason.
const (
	StatusPending   Status = "pending"
	StatusExtracted Status = "extracted"
	StatusEmbedding Status = "embedding"
	StatusIndexed   Status = "indexed"
	StatusFailed    Status = "failed"
)

// SearchRequest is the request of knowledge.search.
type SearchRequest struct {
	Query string `json:"query"`
	Limit int    `json:"limit,omitempty"`
	// Layer: "" (every readable file), "instance" (the caller's workspace)
	// or "shared" (the tenant's shared files).
	Layer   string       `json:"layer,omitempty"`
	FileIDs []string     `json:"fileIds,omitempty"`
	Page    int          `json:"page,omitempty"`
	Section string       `json:"section,omitempty"`
	Type    content.Type `json:"type,omitempty"`
	// Hidden: "" or "include" finds every chunk; "exclude" leaves out
	// what a document hides (hidden slides, sheets, pages); "only" finds
	// nothing else.
	Hidden string `json:"hidden,omitempty"`
}

// Chunk is a searchable piece of a file's text with its origin, as the
// knowledge store keeps it and a search hit carries it.
type Chunk struct {
	ID string `json:"id"`
	// Seq orders a content's chunks.
	Seq         int          `json:"seq"`
	ObjectID    string       `json:"objectId"`
	ContentType content.Type `json:"contentType"`
	Text        string       `json:"text"`
	Ref         content.Ref  `json:"contextRef"`
	Tokens      int          `json:"tokens"`
	// Hidden: the object is one its document does not show (a hidden
	// slide, sheet or page), marked by the extractor.
	Hidden bool `json:"hidden,omitempty"`
}

// Hit is a chunk found by a search, with a file that carries it.
type Hit struct {
	Chunk
	FileID      string  `json:"fileId"`
	FileName    string  `json:"fileName"`
	WorkspaceID string  `json:"workspaceId"`
	Score       float64 `json:"score"`
	// Match says how the search that found it ranked: "hybrid" (words and
	// vectors) or "words" (words only: no embedding model is configured,
	// or the embedding service did not answer).
	Match string `json:"match,omitempty"`
}

// SearchResponse is knowledge.search's answer.
type SearchResponse struct {
	Hits []Hit `json:"hits"`
}

// IndexRequest is the request of knowledge.index.
type IndexRequest struct {
	File string `json:"file"`
	// Path names an entry of a container file: its index instead.
	Path string `json:"path,omitempty"`
	// ObjectsLimit caps the object summaries returned (0: the host's
	// default, 100; at most 1000).
	ObjectsLimit int `json:"objectsLimit,omitempty"`
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

// Index is a file's content index as knowledge.index gives it.
type Index struct {
	FileID   string `json:"fileId"`
	FileName string `json:"fileName"`
	// Path is the entry's full container path when one was asked for.
	Path     string `json:"path,omitempty"`
	MIMEType string `json:"mimeType"`
	Size     int64  `json:"size"`
	Status   Status `json:"status"`
	Error    string `json:"error,omitempty"`
	// OnDemand: pages are extracted when read (a large PDF); ExtractedPages
	// are those read so far.
	OnDemand       bool      `json:"onDemand,omitempty"`
	Pages          int       `json:"pages,omitempty"`
	ExtractedPages []int     `json:"extractedPages,omitempty"`
	Sections       []Section `json:"sections,omitempty"`
	// Structure is the rest of the extractor's structure map (page map,
	// outline and headings left out: sections and pages carry them).
	Structure    map[string]any    `json:"structure,omitempty"`
	TotalObjects int               `json:"totalObjects"`
	Objects      []content.Summary `json:"objectSummary"`
	// Entries are a container's entries (archives, folders), nested
	// containers' members included, each by its full path.
	Entries []Entry `json:"entries,omitempty"`
	// Progress says how many pages are searchable so far, for a paged
	// document (a PDF, an image file).
	Progress *Progress `json:"progress,omitempty"`
}

// Progress is how far a paged document's indexing is: of Pages, Searchable
// have their text in the index; Pending while pages are still being
// extracted or read by OCR in the background; ImageOnly pages only OCR can
// read (OCR is the state of reading them: pending, running, done,
// notConfigured, stopped). Message says it in words ("120 of 1,158 pages
// searchable; ...").
type Progress struct {
	Pages      int    `json:"pages"`
	Searchable int    `json:"searchable"`
	Pending    bool   `json:"pending,omitempty"`
	ImageOnly  int    `json:"imageOnly,omitempty"`
	OCR        string `json:"ocr,omitempty"`
	Message    string `json:"message"`
}

// Entry is one member of a container file (ZIP, TAR, GZ, TGZ), found by
// the container extractor, nested containers' members included: its full
// container path ("a.zip/docs/b.tar/report.pdf"), its bytes' sha256 (stored
// as a blob, extracted and indexed as content of its own, so the same inner
// file is extracted once per tenant) and where it stands.
type Entry struct {
	Path     string `json:"path"`
	Size     int64  `json:"size"`
	MIMEType string `json:"mimeType,omitempty"`
	// SHA256 is empty when the entry's bytes were refused (traversal, link,
	// bomb, truncated, over a limit) or when it is a nested container.
	SHA256 string `json:"sha256,omitempty"`
	// Container marks a nested container: its members are entries too.
	Container bool `json:"container,omitempty"`
	// Status is the entry's: one of the Status values, "failed" with Error
	// for an entry refused by the walk or whose extraction failed, the inner
	// content's status otherwise.
	Status string `json:"status"`
	Error  string `json:"error,omitempty"`
	// ErrorKind classifies a refused entry: traversal, symlink, bomb, depth,
	// encrypted, truncated, corrupt, unsupported, duplicate, limit, …
	ErrorKind string `json:"errorKind,omitempty"`
}

// ObjectsRequest is the request of knowledge.read_objects: content objects
// of one file selected by page, type or section. Offset and Limit page
// through the matches; MaxBytes caps the data returned.
type ObjectsRequest struct {
	File string `json:"file"`
	// Path names an entry of a container file (its path from the
	// container's entries): that entry's objects are read instead, pages of
	// a large inner PDF extracted on demand.
	Path     string         `json:"path,omitempty"`
	Pages    []int          `json:"pages,omitempty"`
	Types    []content.Type `json:"types,omitempty"`
	Section  string         `json:"section,omitempty"`
	Offset   int            `json:"offset,omitempty"`
	Limit    int            `json:"limit,omitempty"`
	MaxBytes int            `json:"maxBytes,omitempty"`
}

// SectionRequest is the request of knowledge.read_section: a section (by
// id or title) of a file or of a container's entry (Path), paged like
// read_objects.
type SectionRequest struct {
	File     string `json:"file"`
	Path     string `json:"path,omitempty"`
	Section  string `json:"section"`
	Offset   int    `json:"offset,omitempty"`
	Limit    int    `json:"limit,omitempty"`
	MaxBytes int    `json:"maxBytes,omitempty"`
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
	// Indexing is set when the document is still being indexed (pages
	// extracted or read by OCR in the background): what was read may be
	// incomplete, and a search may miss pages not in the index yet.
	Indexing string `json:"indexing,omitempty"`
}

// Objects is knowledge.read_objects' (and read_section's) answer: a page
// of a file's content objects.
type Objects struct {
	FileID   string `json:"fileId"`
	FileName string `json:"fileName"`
	// Path is the container entry read, when one was.
	Path string `json:"path,omitempty"`
	ObjectPage
}

// ExtractItemRequest is the request of knowledge.extract_item.
type ExtractItemRequest struct {
	File string `json:"file"`
	Path string `json:"path"`
}

// ExtractItemResponse is the entry extract_item extracted.
type ExtractItemResponse struct {
	FileID string `json:"fileId"`
	Path   string `json:"path"`
	Entry  Entry  `json:"entry"`
}

// FolderRequest is the request of knowledge.folder: one page of a folder's
// files (the caller's workspace), subfolders first.
type FolderRequest struct {
	// Folder is a folder id, or "" for the workspace's files in no folder.
	Folder string `json:"folder"`
	// Limit caps the files of one page (0: 50; at most 200); Cursor
	// continues a listing where Next left off.
	Limit  int    `json:"limit,omitempty"`
	Cursor string `json:"cursor,omitempty"`
}

// Folder is a page of a folder's contents as knowledge.folder gives it.
type Folder struct {
	ID       string `json:"id,omitempty"`
	Name     string `json:"name"`
	ParentID string `json:"parentId,omitempty"`
	// Subfolders are the folder's direct subfolders.
	Subfolders []FolderRef `json:"subfolders"`
	// Files are the folder's files with their indexing status.
	Files []FolderFile `json:"files"`
	// Next continues the listing; empty on the last page.
	Next string `json:"next,omitempty"`
}

// FolderRef names a folder.
type FolderRef struct {
	ID   string `json:"id"`
	Name string `json:"name"`
}

// FolderFile is one file of a folder.
type FolderFile struct {
	FileID   string `json:"fileId"`
	Name     string `json:"name"`
	MIMEType string `json:"mimeType"`
	Size     int64  `json:"size"`
	// Status is the file's indexing status (pending when indexing has not
	// started); Error says why a failed one failed.
	Status Status `json:"status"`
	Error  string `json:"error,omitempty"`
}
