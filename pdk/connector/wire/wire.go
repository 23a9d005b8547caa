// Package wire declares the tools every connector plugin exports (the
// operations every service of a provider offers) and their documents,
// shared by the host (package connections' resolver) and the guest
// (pdk/connector).
package wire

import (
	"strconv"
	"strings"
	"time"
)

// The tools of a connector plugin. Each takes the connection and service
// in its arguments; the plugin dispatches to the service's adapter.
const (
	ToolBrowse   = "browse"
	ToolDownload = "download"
	ToolUpload   = "upload"
	ToolSearch   = "search"
	ToolSendMail = "sendMail"
	ToolListMail = "listMail"
)

// Target names the connection and service a request is for; every request
// carries both (as fields, not embedded, so its JSON Schema is flat).
type Target struct {
	Connection string `json:"connection"`
	Service    string `json:"service"`
}

// Entry is an item of an external service: a folder, a file, an issue, a
// board, a message.
type Entry struct {
	ID       string    `json:"id"`
	Name     string    `json:"name"`
	Path     string    `json:"path,omitempty"`
	Folder   bool      `json:"folder,omitempty"`
	Size     int64     `json:"size,omitempty"`
	MIMEType string    `json:"mimeType,omitempty"`
	Modified time.Time `json:"modified,omitzero"`
	// Summary is a short text (an issue's summary and status).
	Summary string `json:"summary,omitempty"`
	// WebURL is where a person opens the item.
	WebURL string `json:"webUrl,omitempty"`
}

// BrowseRequest lists what is under Path ("" for the service's root).
type BrowseRequest struct {
	Connection string `json:"connection" minLength:"1" description:"the connection id"`
	Service    string `json:"service" minLength:"1" description:"the provider's service (e.g. issues, drive, mail)"`
	Path       string `json:"path,omitempty"`
	Cursor     string `json:"cursor,omitempty"`
	Limit      int    `json:"limit,omitempty" minimum:"0" maximum:"1000"`
}

// Listing is a page of entries; Next is the cursor of the next page.
type Listing struct {
	Entries []Entry `json:"entries"`
	Next    string  `json:"next,omitempty"`
}

// DownloadRequest fetches one file (by the Path or ID a listing gave).
type DownloadRequest struct {
	Connection string `json:"connection" minLength:"1" description:"the connection id"`
	Service    string `json:"service" minLength:"1" description:"the provider's service (e.g. issues, drive, mail)"`
	Path       string `json:"path,omitempty"`
	ID         string `json:"id,omitempty"`
	MaxBytes   int64  `json:"maxBytes,omitempty" minimum:"0"`
}

// File is a downloaded file.
type File struct {
	Name     string `json:"name"`
	MIMEType string `json:"mimeType,omitempty"`
	Data     []byte `json:"data"`
}

// UploadRequest stores a file under Path.
type UploadRequest struct {
	Connection string `json:"connection" minLength:"1" description:"the connection id"`
	Service    string `json:"service" minLength:"1" description:"the provider's service (e.g. issues, drive, mail)"`
	Path       string `json:"path,omitempty"`
	Name       string `json:"name" minLength:"1"`
	MIMEType   string `json:"mimeType,omitempty"`
	// Data is the file when the caller holds it (small files, tests).
	// The host hands a connector no Data: it gets Size, and sends the
	// file's bytes by ranges of it in its requests' Parts (the host
	// reads them from the workspace and streams them), so no upload is
	// held whole in any plugin.
	Data []byte `json:"data,omitempty"`
	// File is the workspace file to upload (its id or a docItem
	// reference), given by the connection tools to the host in place of
	// Data; a connector never gets it.
	File string `json:"file,omitempty"`
	// Size is the file's length in bytes.
	Size int64 `json:"size,omitempty" minimum:"0"`
	// Conflict says what happens when Name exists under Path: ConflictFail
	// (the default, also for ""), ConflictReplace or ConflictRename
	// (docs/connectors.md, "Uploads"). Every connector implements the
	// three the same way, so one tool behaves alike on every provider.
	Conflict string `json:"conflict,omitempty" enum:"fail,replace,rename"`
}

// The conflict policies of an upload.
const (
	// ConflictFail refuses the upload (code "exists") and changes nothing.
	ConflictFail = "fail"
	// ConflictReplace stores the bytes as the existing file's new content.
	ConflictReplace = "replace"
	// ConflictRename stores a new file named "name (1).ext" (the first
	// free number); the answer's Entry names it.
	ConflictRename = "rename"
)

// ConflictPolicy returns the request's policy ("" is ConflictFail), or
// false for a value that is none of the three.
func (r UploadRequest) ConflictPolicy() (string, bool) {
	switch r.Conflict {
	case "", ConflictFail:
		return ConflictFail, true
	case ConflictReplace, ConflictRename:
		return r.Conflict, true
	}
	return "", false
}

// RenameCandidate is the n-th name ConflictRename tries for name:
// "report (1).pdf" for "report.pdf", "notes (2)" for "notes".
func RenameCandidate(name string, n int) string {
	ext := ""
	if i := strings.LastIndexByte(name, '.'); i > 0 {
		name, ext = name[:i], name[i:]
	}
	return name + " (" + strconv.Itoa(n) + ")" + ext
}

// SearchRequest searches the service.
type SearchRequest struct {
	Connection string `json:"connection" minLength:"1" description:"the connection id"`
	Service    string `json:"service" minLength:"1" description:"the provider's service (e.g. issues, drive, mail)"`
	Query      string `json:"query" minLength:"1"`
	Cursor     string `json:"cursor,omitempty"`
	Limit      int    `json:"limit,omitempty" minimum:"0" maximum:"1000"`
}

// Mail is a message to send or one listed.
type Mail struct {
	ID      string    `json:"id,omitempty"`
	From    string    `json:"from,omitempty"`
	To      []string  `json:"to"`
	Cc      []string  `json:"cc,omitempty"`
	Subject string    `json:"subject"`
	Body    string    `json:"body"`
	Date    time.Time `json:"date,omitzero"`
}

// SendMailRequest sends Mail.
type SendMailRequest struct {
	Connection string `json:"connection" minLength:"1" description:"the connection id"`
	Service    string `json:"service" minLength:"1" description:"the provider's service (e.g. issues, drive, mail)"`
	Mail       Mail   `json:"mail"`
}

// ListMailRequest lists messages of a folder ("" for the inbox).
type ListMailRequest struct {
	Connection string `json:"connection" minLength:"1" description:"the connection id"`
	Service    string `json:"service" minLength:"1" description:"the provider's service (e.g. issues, drive, mail)"`
	Folder     string `json:"folder,omitempty"`
	Cursor     string `json:"cursor,omitempty"`
	Limit      int    `json:"limit,omitempty" minimum:"0" maximum:"1000"`
}

// MailList is a page of messages.
type MailList struct {
	Messages []Mail `json:"messages"`
	Next     string `json:"next,omitempty"`
}

// Of returns the target a request names.
func Of(connection, service string) Target { return Target{Connection: connection, Service: service} }

// Target returns the request's connection and service.
func (r BrowseRequest) Target() Target { return Of(r.Connection, r.Service) }

// Target returns the request's connection and service.
func (r DownloadRequest) Target() Target { return Of(r.Connection, r.Service) }

// Target returns the request's connection and service.
func (r UploadRequest) Target() Target { return Of(r.Connection, r.Service) }

// Target returns the request's connection and service.
func (r SearchRequest) Target() Target { return Of(r.Connection, r.Service) }

// Target returns the request's connection and service.
func (r SendMailRequest) Target() Target { return Of(r.Connection, r.Service) }

// Target returns the request's connection and service.
func (r ListMailRequest) Target() Target { return Of(r.Connection, r.Service) }
