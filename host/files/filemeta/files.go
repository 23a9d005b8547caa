package filemeta

import (
	"time"
)

// Status is a file's life-cycle state.
type Status string

// The file states.
const (
	StatusActive     Status = "active"
	StatusArchived   Status = "archived"
	StatusProcessing Status = "processing"
)

// Valid reports whether s is a known status.
func (s Status) Valid() bool {
	return s == StatusActive || s == StatusArchived || s == StatusProcessing
}

// Item is a stored file.
type Item struct {
	ID          string `json:"id"`
	TenantID    string `json:"tenantId"`
	WorkspaceID string `json:"workspaceId"`
	CreatedBy   string `json:"createdBy"`
	Name        string `json:"name"`
	MIMEType    string `json:"mimeType"`
	SHA256      string `json:"sha256"`
	Size        int64  `json:"size"`
	// Version numbers the file's contents from 1; every change of content
	// adds one (Service.Versions lists them).
	Version     int       `json:"version"`
	FolderID    string    `json:"folderId,omitempty"`
	Tags        []string  `json:"tags"`
	Description string    `json:"description"`
	Status      Status    `json:"status"`
	Shared      bool      `json:"shared"`
	CreatedAt   time.Time `json:"createdAt"`
	UpdatedAt   time.Time `json:"updatedAt"`
}

// Folder is a folder of a workspace. AutoRule, when
// set, files new and retagged files that match it and have no folder into
// this folder: "tag:financial", "mime:image/*", "name:*.pdf".
type Folder struct {
	ID          string    `json:"id"`
	TenantID    string    `json:"tenantId"`
	WorkspaceID string    `json:"workspaceId"`
	ParentID    string    `json:"parentId,omitempty"`
	Name        string    `json:"name"`
	CreatedBy   string    `json:"createdBy"`
	AutoRule    string    `json:"autoRule,omitempty"`
	CreatedAt   time.Time `json:"createdAt"`
}

// Order is the order of a listing.
type Order string

// Listing orders.
const (
	OrderNewest Order = "newest" // created_at descending (the default)
	OrderName   Order = "name"   // name ascending
)

// Filter selects files of one listing page. Zero fields do not filter.
type Filter struct {
	// WorkspaceID limits the listing to one workspace; empty lists every
	// workspace the principal can read (and shared files).
	WorkspaceID string
	// Folder: nil for any folder, "" for files in no folder, else a folder id.
	Folder *string
	// Tags: files carrying all of them.
	Tags []string
	// MIMEType: an exact type ("application/pdf") or a family ("image/*").
	MIMEType string
	// Name: a case-insensitive glob, * any run, ? one character ("*.pdf").
	Name string
	// Status: one status; empty means every status but archived.
	Status Status
	// Order of the listing; empty is OrderNewest.
	Order Order
	// Limit of items per page: default 50, at most 1000.
	Limit int
	// Cursor continues a listing where the previous page's Next left off.
	Cursor string
}

// Page is one page of a listing; Next is empty on the last page.
type Page struct {
	Items []Item `json:"items"`
	Next  string `json:"next,omitempty"`
}

// Update changes a file's metadata; nil fields are left alone.
type Update struct {
	Name        *string
	Description *string
	Status      *Status
	// Folder moves the file: "" to no folder.
	Folder *string
	// AddTags and RemoveTags edit the tag set.
	AddTags    []string
	RemoveTags []string
	// Shared promotes the file to (or withdraws it from) the tenant's shared
	// layer; it needs access level ALL.
	Shared *bool
}

// FolderUpdate renames or moves a folder; nil fields are left alone.
type FolderUpdate struct {
	Name *string
	// Parent moves the folder: "" to the workspace's root.
	Parent   *string
	AutoRule *string
}
