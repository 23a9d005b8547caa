// Package knowledge reads the host's knowledge store (capability
// "knowledge"; declare it in plugin.json): search, a file's content index,
// its content objects by page, type or section, and container entries. The
// host acts for the user the tool call runs for and sees only the files
// that user can read; a file is named by its id or by "docItem:<id>" of the
// calling workflow. Pages of large PDFs are extracted the first time they
// are read and kept, so reading them again extracts nothing.
package knowledge

import (
	"github.com/agenthost/agenthost/pdk"
	"github.com/agenthost/agenthost/pdk/content"
)

// SearchRequest is a search of the knowledge store. Layer is "" (every
// readable file), "instance" (the calling workspace's files) or "shared".
type SearchRequest struct {
	Query   string       `json:"query"`
	Limit   int          `json:"limit,omitempty"`
	Layer   string       `json:"layer,omitempty"`
	FileIDs []string     `json:"fileIds,omitempty"`
	Page    int          `json:"page,omitempty"`
	Section string       `json:"section,omitempty"`
	Type    content.Type `json:"type,omitempty"`
}

// Hit is a chunk a search found, with the file that carries it.
type Hit struct {
	ID          string       `json:"id"`
	ObjectID    string       `json:"objectId"`
	ContentType content.Type `json:"contentType"`
	Text        string       `json:"text"`
	Ref         content.Ref  `json:"contextRef"`
	FileID      string       `json:"fileId"`
	FileName    string       `json:"fileName"`
	Score       float64      `json:"score"`
}

// Search runs a search as the calling user.
func Search(r SearchRequest) ([]Hit, error) {
	var out struct {
		Hits []Hit `json:"hits"`
	}
	err := pdk.Invoke(search, r, &out)
	return out.Hits, err
}

// Section is a section of a file: a run of pages (PDF) or a heading's
// numbered part (office documents).
type Section struct {
	ID        string `json:"id"`
	Title     string `json:"title"`
	Level     int    `json:"level,omitempty"`
	StartPage int    `json:"startPage,omitempty"`
	EndPage   int    `json:"endPage,omitempty"`
}

// Index is a file's content index.
type Index struct {
	FileID   string `json:"fileId"`
	FileName string `json:"fileName"`
	MIMEType string `json:"mimeType"`
	Size     int64  `json:"size"`
	// Status: pending, extracted, embedding, indexed or failed (Error).
	Status string `json:"status"`
	Error  string `json:"error,omitempty"`
	// OnDemand: the pages of this (large) PDF are extracted when read;
	// ExtractedPages are those read so far.
	OnDemand       bool              `json:"onDemand,omitempty"`
	Pages          int               `json:"pages,omitempty"`
	ExtractedPages []int             `json:"extractedPages,omitempty"`
	Sections       []Section         `json:"sections,omitempty"`
	Structure      map[string]any    `json:"structure,omitempty"`
	TotalObjects   int               `json:"totalObjects"`
	Objects        []content.Summary `json:"objectSummary"`
	// Entries of a container (archive, folder), nested containers'
	// members included, each by its full path.
	Entries []Entry `json:"entries,omitempty"`
}

// Entry is one entry of a container file.
type Entry struct {
	Path     string `json:"path"`
	Size     int64  `json:"size"`
	MIMEType string `json:"mimeType,omitempty"`
	SHA256   string `json:"sha256,omitempty"`
	// Container marks a nested container: its members are entries too.
	Container bool `json:"container,omitempty"`
	// Status: pending, extracted, embedding, indexed or failed (Error,
	// classified by ErrorKind: traversal, symlink, bomb, limit, …).
	Status    string `json:"status"`
	Error     string `json:"error,omitempty"`
	ErrorKind string `json:"errorKind,omitempty"`
}

// IndexRequest names the file (and, for a container, the entry) whose
// index to read; ObjectsLimit caps its object summaries (0: the host's
// default).
type IndexRequest struct {
	File         string `json:"file"`
	Path         string `json:"path,omitempty"`
	ObjectsLimit int    `json:"objectsLimit,omitempty"`
}

// GetIndex returns a file's (or a container entry's) content index.
func GetIndex(r IndexRequest) (Index, error) {
	var out Index
	err := pdk.Invoke(index, r, &out)
	return out, err
}

// ObjectsRequest selects content objects of one file. Offset and Limit
// page through the matches; MaxBytes caps the data returned.
type ObjectsRequest struct {
	File string `json:"file"`
	// Path names an entry of a container file (its path from the
	// container's entries): that entry's objects are read instead, pages
	// of a large inner PDF extracted on demand.
	Path     string         `json:"path,omitempty"`
	Pages    []int          `json:"pages,omitempty"`
	Types    []content.Type `json:"types,omitempty"`
	Section  string         `json:"section,omitempty"`
	Offset   int            `json:"offset,omitempty"`
	Limit    int            `json:"limit,omitempty"`
	MaxBytes int            `json:"maxBytes,omitempty"`
}

// Objects is a page of a file's content objects.
type Objects struct {
	FileID   string `json:"fileId"`
	FileName string `json:"fileName"`
	// Path is the container entry read, when one was.
	Path    string           `json:"path,omitempty"`
	Objects []content.Object `json:"objects"`
	Total   int              `json:"total"`
	// NextOffset continues the read; 0 when this page is the last.
	NextOffset int      `json:"nextOffset,omitempty"`
	Truncated  bool     `json:"truncated,omitempty"`
	Section    *Section `json:"section,omitempty"`
	// ExtractedPages were extracted by this read (on-demand PDFs).
	ExtractedPages []int `json:"extractedPages,omitempty"`
}

// ReadObjects reads content objects of a file.
func ReadObjects(r ObjectsRequest) (Objects, error) {
	var out Objects
	err := pdk.Invoke(readObjects, r, &out)
	return out, err
}

// SectionRequest names a section (by id or title) of a file or of a
// container's entry (Path), paged like ObjectsRequest.
type SectionRequest struct {
	File     string `json:"file"`
	Path     string `json:"path,omitempty"`
	Section  string `json:"section"`
	Offset   int    `json:"offset,omitempty"`
	Limit    int    `json:"limit,omitempty"`
	MaxBytes int    `json:"maxBytes,omitempty"`
}

// ReadSection reads a section of a file, paged like ReadObjects.
func ReadSection(r SectionRequest) (Objects, error) {
	var out Objects
	err := pdk.Invoke(readSection, r, &out)
	return out, err
}

// ExtractItem extracts one entry of a container on demand (a write: only
// tools that are not read-only may call it) and returns the entry as the
// host describes it.
func ExtractItem(file, path string) (Entry, error) {
	var out struct {
		Entry Entry `json:"entry"`
	}
	err := pdk.Invoke(extractItem, struct {
		File string `json:"file"`
		Path string `json:"path"`
	}{file, path}, &out)
	return out.Entry, err
}
