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
	"github.com/agenthost/agenthost/pdk/knowledge/wire"
)

// The requests and answers, declared once with the host's side of the
// capability (package wire); see there for their fields.
type (
	// SearchRequest is a search of the knowledge store. Layer is ""
	// (every readable file), "instance" (the calling workspace's files) or
	// "shared".
	SearchRequest = wire.SearchRequest
	// Hit is a chunk a search found, with the file that carries it.
	Hit = wire.Hit
	// IndexRequest names the file (and, for a container, the entry) whose
	// index to read; ObjectsLimit caps its object summaries (0: the
	// host's default).
	IndexRequest = wire.IndexRequest
	// Index is a file's content index.
	Index = wire.Index
	// Status is an index's (pending, extracted, embedding, indexed or
	// failed).
	Status = wire.Status
	// Section is a section of a file: a run of pages (PDF) or a heading's
	// numbered part (office documents).
	Section = wire.Section
	// Entry is one entry of a container file.
	Entry = wire.Entry
	// ObjectsRequest selects content objects of one file.
	ObjectsRequest = wire.ObjectsRequest
	// Objects is a page of a file's content objects.
	Objects = wire.Objects
	// SectionRequest names a section (by id or title) of a file or of a
	// container's entry, paged like ObjectsRequest.
	SectionRequest = wire.SectionRequest
)

// Search runs a search as the calling user.
func Search(r SearchRequest) ([]Hit, error) {
	var out wire.SearchResponse
	err := pdk.Invoke(search, r, &out)
	return out.Hits, err
}

// GetIndex returns a file's (or a container entry's) content index.
func GetIndex(r IndexRequest) (Index, error) {
	var out Index
	err := pdk.Invoke(index, r, &out)
	return out, err
}

// ReadObjects reads content objects of a file.
func ReadObjects(r ObjectsRequest) (Objects, error) {
	var out Objects
	err := pdk.Invoke(readObjects, r, &out)
	return out, err
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
	var out wire.ExtractItemResponse
	err := pdk.Invoke(extractItem, wire.ExtractItemRequest{File: file, Path: path}, &out)
	return out.Entry, err
}

// Folder aliases the folder listing's wire types.
type (
	FolderRequest = wire.FolderRequest
	Folder        = wire.Folder
	FolderFile    = wire.FolderFile
)

// BrowseFolder lists a folder of the caller's workspace ("" for the files
// in no folder): its subfolders and a page of its files with their status.
func BrowseFolder(r FolderRequest) (Folder, error) {
	var out Folder
	err := pdk.Invoke(folder, r, &out)
	return out, err
}
