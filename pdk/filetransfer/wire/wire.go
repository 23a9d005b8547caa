// Package wire declares the documents of the host capability
// "filetransfer", shared by the host (package filetransfer) and the guest
// (pdk/filetransfer).
package wire

import "time"

// Entry is a file, a folder or a symbolic link on the file server. Path is
// relative to the connection's base directory, "/"-separated, "" for the
// base itself.
type Entry struct {
	Name     string    `json:"name"`
	Path     string    `json:"path"`
	Dir      bool      `json:"dir,omitempty"`
	Size     int64     `json:"size,omitempty"`
	Modified time.Time `json:"modified,omitzero"`
	// Link marks a symbolic link. On SFTP, Dir, Size and Modified are its
	// target's and Target is the path the link resolves to under the base
	// directory; a link leading outside the base, or nowhere, has no Target
	// and cannot be used.
	Link   bool   `json:"link,omitempty"`
	Target string `json:"target,omitempty"`
}

// ListRequest lists a directory, at most Limit entries (0: the host's
// bound).
type ListRequest struct {
	PathRequest
	Limit int `json:"limit,omitempty"`
}

// Listing is a directory's entries, sorted by name; Truncated says the
// directory held more than the limit.
type Listing struct {
	Entries   []Entry `json:"entries"`
	Truncated bool    `json:"truncated,omitempty"`
}

// PathRequest names one path of a connection (stat, mkdir; the others
// embed it).
type PathRequest struct {
	Connection string `json:"connection"`
	Path       string `json:"path"`
}

// ReadRequest reads a whole file of at most MaxBytes (0: the plugin's
// response limit, which also bounds a larger MaxBytes).
type ReadRequest struct {
	PathRequest
	MaxBytes int64 `json:"maxBytes,omitempty"`
}

// File is a file read whole.
type File struct {
	Entry Entry  `json:"entry"`
	Data  []byte `json:"data"`
}

// WriteRequest stores Data at Path: uploaded under a temporary name in the
// same directory, then renamed, so the file appears whole or not at all.
// An existing file is replaced only when Overwrite is set.
//
// Upload, in place of Data, stores the file the running upload sends: the
// host streams it from the workspace to the server, so it never passes
// through the plugin.
type WriteRequest struct {
	PathRequest
	Data      []byte `json:"data,omitempty"`
	Upload    bool   `json:"upload,omitempty"`
	Overwrite bool   `json:"overwrite,omitempty"`
}
