// Package files reads the workspace's files and stores new ones (capability
// "files"; declare it in plugin.json). Calls act for the user running the
// tool, inside their access rights; a read-only tool may read but not write.
package files

import (
	"encoding/base64"
	"fmt"

	"github.com/agenthost/agenthost/pdk"
)

// File is a file's content as Read returns it.
type File struct {
	FileID   string `json:"fileId"`
	Name     string `json:"name"`
	MIMEType string `json:"mimeType"`
	// Size is the whole file's; Data may be shorter when Truncated.
	Size int64 `json:"size"`
	// Version is the file's current version number.
	Version int `json:"version"`
	// Offset is where Data starts in the file.
	Offset    int64  `json:"offset"`
	Data      []byte `json:"-"`
	Truncated bool   `json:"truncated"`
}

// Read returns a file of the workspace: ref is a file id or a workflow
// document reference "docItem:<id>". maxBytes > 0 reads at most that much
// (the host caps every read too; File.Truncated says so).
func Read(ref string, maxBytes int64) (File, error) {
	return ReadAt(ref, 0, maxBytes)
}

// ReadAt is Read from byte offset on: a large file is read page by page.
func ReadAt(ref string, offset, maxBytes int64) (File, error) {
	var resp struct {
		File
		Data string `json:"data"`
	}
	if err := pdk.Invoke(read, struct {
		File     string `json:"file"`
		MaxBytes int64  `json:"maxBytes,omitempty"`
		Offset   int64  `json:"offset,omitempty"`
	}{ref, maxBytes, offset}, &resp); err != nil {
		return File{}, err
	}
	f := resp.File
	b, err := base64.StdEncoding.DecodeString(resp.Data)
	if err != nil {
		return File{}, fmt.Errorf("files.read: data: %w", err)
	}
	f.Data = b
	return f, nil
}

// Written is a stored file. DocItem ("docItem:<id>") is set when the call
// runs in a workflow: the file is then a document of it, which other tools
// take as input.
type Written struct {
	FileID    string `json:"fileId"`
	DocItem   string `json:"docItem"`
	MessageID string `json:"messageId"`
	Name      string `json:"name"`
	MIMEType  string `json:"mimeType"`
	Size      int64  `json:"size"`
	Existing  bool   `json:"existing"`
	Warning   string `json:"warning"`
}

// Write stores data as a new file of the workspace (deduplicated and indexed
// like an upload) and binds it to the running workflow. label groups the
// workflow's documents (docList:<label>); empty means "<tool>:<name>".
func Write(name, mimeType string, data []byte, label string) (Written, error) {
	return WriteInFolder("", name, mimeType, data, label)
}

// WriteInFolder is Write into a folder of the workspace (its id or path,
// "Reports/2024"; "" for none), in one step: an unknown folder stores
// nothing.
func WriteInFolder(folder, name, mimeType string, data []byte, label string) (Written, error) {
	var w Written
	// A []byte field encodes straight to base64 in the request: no
	// intermediate string for encoding/json to scan again.
	err := pdk.Invoke(write, struct {
		Name     string `json:"name"`
		MIMEType string `json:"mimeType,omitempty"`
		Data     []byte `json:"data"`
		Label    string `json:"label,omitempty"`
		Folder   string `json:"folder,omitempty"`
	}{name, mimeType, nonNil(data), label, folder}, &w)
	return w, err
}

// nonNil keeps empty data an empty string in a request (a nil []byte
// encodes as null).
func nonNil(b []byte) []byte {
	if b == nil {
		return []byte{}
	}
	return b
}

// Summary is the result text of every tool that makes a file: both
// references, so the model can pass the docItem to a tool taking document
// lists and the file id to the file tools (docs/files.md).
func (w Written) Summary(what string) string {
	s := fmt.Sprintf("%s '%s' (%d bytes)\n", what, w.Name, w.Size)
	if w.DocItem != "" {
		s += "documentList ref: " + w.DocItem + "\n"
	}
	s += "file id: " + w.FileID
	if w.Warning != "" {
		s += "\nwarning: " + w.Warning
	}
	return s
}
