package files

import (
	"time"

	"github.com/agenthost/agenthost/pdk"
)

// Item is a file of the workspace as the host describes it.
type Item struct {
	ID          string    `json:"id"`
	Name        string    `json:"name"`
	MIMEType    string    `json:"mimeType"`
	SHA256      string    `json:"sha256"`
	Size        int64     `json:"size"`
	Version     int       `json:"version"`
	FolderID    string    `json:"folderId"`
	FolderPath  string    `json:"folderPath"`
	Tags        []string  `json:"tags"`
	Description string    `json:"description"`
	Status      string    `json:"status"`
	Shared      bool      `json:"shared"`
	CreatedAt   time.Time `json:"createdAt"`
	UpdatedAt   time.Time `json:"updatedAt"`
	// Versions and Proposals are filled by Info with versions=true.
	Versions  []Version  `json:"versions"`
	Proposals []Proposal `json:"proposals"`
}

// Version is one content a file has had.
type Version struct {
	Version   int       `json:"version"`
	SHA256    string    `json:"sha256"`
	Size      int64     `json:"size"`
	CreatedAt time.Time `json:"createdAt"`
	Note      string    `json:"note"`
}

// Proposal is a proposed edit awaiting (or past) the user's decision.
type Proposal struct {
	ID          string `json:"id"`
	FileID      string `json:"fileId"`
	BaseVersion int    `json:"baseVersion"`
	Diff        string `json:"diff"`
	Description string `json:"description"`
	Status      string `json:"status"`
	// Warning says what went wrong after the proposal was stored (its
	// event could not be recorded).
	Warning string `json:"warning"`
}

// ListRequest filters a listing of the workspace's files.
type ListRequest struct {
	// Folder is a folder id or path ("Reports/2024"); "/" lists the files
	// in no folder; empty lists every folder.
	Folder   string   `json:"folder,omitempty"`
	Tags     []string `json:"tags,omitempty"`
	MIMEType string   `json:"mimeType,omitempty"`
	// Name is a case-insensitive glob ("*.md").
	Name   string `json:"name,omitempty"`
	Limit  int    `json:"limit,omitempty"`
	Cursor string `json:"cursor,omitempty"`
}

// Listing is one page of files; Next continues it.
type Listing struct {
	Files []Item `json:"files"`
	Next  string `json:"next"`
}

// List lists the workspace's files the user can read.
func List(r ListRequest) (Listing, error) {
	var l Listing
	err := pdk.Invoke(list, r, &l)
	return l, err
}

// Info describes one file (ref: a file id or docItem:<id>); versions adds
// its versions and pending proposals.
func Info(ref string, versions bool) (Item, error) {
	var it Item
	err := pdk.Invoke(info, struct {
		File     string `json:"file"`
		Versions bool   `json:"versions,omitempty"`
	}{ref, versions}, &it)
	return it, err
}

// Changed is a file after a new version was written.
type Changed struct {
	File    Item    `json:"file"`
	Version Version `json:"version"`
	Warning string  `json:"warning"`
}

// Overwrite makes data the file's next version; baseVersion > 0 refuses the
// write when the file is no longer at that version (someone changed it
// since it was read).
func Overwrite(ref string, data []byte, baseVersion int) (Changed, error) {
	return setContentMode(ref, data, "overwrite", baseVersion)
}

// Append adds text at the end of a text file, as its next version.
func Append(ref string, data []byte, baseVersion int) (Changed, error) {
	return setContentMode(ref, data, "append", baseVersion)
}

func setContentMode(ref string, data []byte, mode string, baseVersion int) (Changed, error) {
	var c Changed
	err := pdk.Invoke(setContent, struct {
		File        string `json:"file"`
		Data        []byte `json:"data"`
		Mode        string `json:"mode"`
		BaseVersion int    `json:"baseVersion,omitempty"`
	}{ref, nonNil(data), mode, baseVersion}, &c)
	return c, err
}

// Move puts a file into a folder (an id or a path; "" or "/" for none),
// optionally renaming it (newName "" keeps the name).
func Move(ref, folder, newName string) (Item, error) {
	var it Item
	req := struct {
		File   string  `json:"file"`
		Folder string  `json:"folder"`
		Name   *string `json:"name,omitempty"`
	}{File: ref, Folder: folder}
	if newName != "" {
		req.Name = &newName
	}
	err := pdk.Invoke(move, req, &it)
	return it, err
}

// Tag adds and removes tags of a file.
func Tag(ref string, add, remove []string) (Item, error) {
	var it Item
	err := pdk.Invoke(tag, struct {
		File   string   `json:"file"`
		Add    []string `json:"add,omitempty"`
		Remove []string `json:"remove,omitempty"`
	}{ref, add, remove}, &it)
	return it, err
}

// Propose proposes content as the file's next version, for the user to
// accept or reject; the host computes the diff against baseVersion (0: the
// current version) and announces it to the workflow.
func Propose(ref, content string, baseVersion int, description string) (Proposal, error) {
	var p Proposal
	err := pdk.Invoke(propose, struct {
		File        string `json:"file"`
		Content     string `json:"content"`
		BaseVersion int    `json:"baseVersion,omitempty"`
		Description string `json:"description,omitempty"`
	}{ref, content, baseVersion, description}, &p)
	return p, err
}
