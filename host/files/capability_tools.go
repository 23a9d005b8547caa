package files

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/agenthost/agenthost/host/files/filemeta"
	"github.com/agenthost/agenthost/host/toolcall"
	"github.com/agenthost/agenthost/host/wasm"
	"github.com/agenthost/agenthost/host/workflows"
)

// The operations below serve the agent's file tools (plugins/files): each
// acts for the tool call's caller, in the caller's workspace only, inside
// the caller's access rights; the write ones are linked only into tools that
// are not read-only.

// Info is a file as the file tools see it: its metadata, the folder's path
// and, on request, its versions and pending proposals.
type Info struct {
	filemeta.Item
	// FolderPath is the folder as a path from the workspace's root
	// ("Reports/2024"); empty for no folder.
	FolderPath string              `json:"folderPath,omitempty"`
	Versions   []filemeta.Version  `json:"versions,omitempty"`
	Proposals  []filemeta.Proposal `json:"proposals,omitempty"`
}

// ListRequest is files.list's request.
type ListRequest struct {
	// Folder is a folder id or path ("Reports/2024"); "/" means the files
	// in no folder; empty means every folder.
	Folder   string   `json:"folder,omitempty"`
	Tags     []string `json:"tags,omitempty"`
	MIMEType string   `json:"mimeType,omitempty"`
	Name     string   `json:"name,omitempty"`
	Limit    int      `json:"limit,omitempty"`
	Cursor   string   `json:"cursor,omitempty"`
}

// ListResult is files.list's answer.
type ListResult struct {
	Files []Info `json:"files"`
	Next  string `json:"next,omitempty"`
}

func decodeStrict(req json.RawMessage, v any) error {
	if err := wasm.DecodeRequest(req, v); err != nil {
		return &wasm.CapabilityError{Code: "invalid_request", Message: err.Error()}
	}
	return nil
}

// folderPaths maps the workspace's folder ids to their paths.
func (h *Capability) folderPaths(ctx context.Context, c toolcall.Caller) (map[string]string, []filemeta.Folder, error) {
	folders, err := h.Files.Folders(ctx, c.Principal, c.WorkspaceID)
	if err != nil {
		return nil, nil, capError(err)
	}
	byID := make(map[string]filemeta.Folder, len(folders))
	for _, f := range folders {
		byID[f.ID] = f
	}
	paths := make(map[string]string, len(folders))
	var path func(id string, depth int) string
	path = func(id string, depth int) string {
		if p, ok := paths[id]; ok {
			return p
		}
		f, ok := byID[id]
		if !ok || depth > 64 {
			return ""
		}
		p := f.Name
		if f.ParentID != "" {
			p = path(f.ParentID, depth+1) + "/" + p
		}
		paths[id] = p
		return p
	}
	for _, f := range folders {
		path(f.ID, 0)
	}
	return paths, folders, nil
}

// ResolveFolder turns a folder argument into a folder id of the caller's
// workspace: "" or "/" is the root (""), an id is taken when it is one of
// the workspace's folders, anything else is a path of folder names from the
// root, each element a valid name ("..", "." and empty elements refused).
func (h *Capability) ResolveFolder(ctx context.Context, c toolcall.Caller, arg string) (string, error) {
	arg = strings.TrimSpace(arg)
	if arg == "" || arg == "/" {
		return "", nil
	}
	_, folders, err := h.folderPaths(ctx, c)
	if err != nil {
		return "", err
	}
	for _, f := range folders {
		if f.ID == arg {
			return f.ID, nil
		}
	}
	parent := ""
	for _, el := range strings.Split(strings.TrimSuffix(strings.TrimPrefix(arg, "/"), "/"), "/") {
		if err := ValidateName("folder", el); err != nil {
			return "", &wasm.CapabilityError{Code: "invalid_request", Message: fmt.Sprintf("folder path %q: %v", arg, err)}
		}
		next := ""
		for _, f := range folders {
			if f.ParentID == parent && f.Name == el {
				next = f.ID
				break
			}
		}
		if next == "" {
			return "", &wasm.CapabilityError{Code: "not_found", Message: fmt.Sprintf("folder %q: no folder %q in this workspace", arg, el)}
		}
		parent = next
	}
	return parent, nil
}

func (h *Capability) list(ctx context.Context, _ *wasm.Call, req json.RawMessage) (any, error) {
	c, err := h.caller(ctx)
	if err != nil {
		return nil, err
	}
	var r ListRequest
	if err := decodeStrict(req, &r); err != nil {
		return nil, err
	}
	flt := filemeta.Filter{WorkspaceID: c.WorkspaceID, Tags: r.Tags, MIMEType: r.MIMEType, Name: r.Name, Limit: r.Limit, Cursor: r.Cursor, Order: filemeta.OrderName}
	if strings.TrimSpace(r.Folder) != "" {
		id, err := h.ResolveFolder(ctx, c, r.Folder)
		if err != nil {
			return nil, err
		}
		flt.Folder = &id
	}
	page, err := h.Files.List(ctx, c.Principal, flt)
	if err != nil {
		return nil, capError(err)
	}
	paths, _, err := h.folderPaths(ctx, c)
	if err != nil {
		return nil, err
	}
	out := ListResult{Files: make([]Info, 0, len(page.Items)), Next: page.Next}
	for _, it := range page.Items {
		out.Files = append(out.Files, Info{Item: it, FolderPath: paths[it.FolderID]})
	}
	return out, nil
}

// item resolves ref for the caller to a file of the caller's workspace.
func (h *Capability) item(ctx context.Context, c toolcall.Caller, ref string) (filemeta.Item, error) {
	id, err := ResolveFile(ctx, h.Workflows, c, ref)
	if err != nil {
		return filemeta.Item{}, err
	}
	it, err := h.Files.Get(ctx, c.Principal, id)
	if err != nil {
		return filemeta.Item{}, capError(err)
	}
	if it.WorkspaceID != c.WorkspaceID {
		return filemeta.Item{}, &wasm.CapabilityError{Code: "not_found", Message: fmt.Sprintf("file %q is not in this workspace", id)}
	}
	return it, nil
}

func (h *Capability) info(ctx context.Context, _ *wasm.Call, req json.RawMessage) (any, error) {
	c, err := h.caller(ctx)
	if err != nil {
		return nil, err
	}
	var r struct {
		File     string `json:"file"`
		Versions bool   `json:"versions"`
	}
	if err := decodeStrict(req, &r); err != nil {
		return nil, err
	}
	it, err := h.item(ctx, c, r.File)
	if err != nil {
		return nil, err
	}
	paths, _, err := h.folderPaths(ctx, c)
	if err != nil {
		return nil, err
	}
	out := Info{Item: it, FolderPath: paths[it.FolderID]}
	if r.Versions {
		if out.Versions, err = h.Files.Versions(ctx, c.Principal, it.ID); err != nil {
			return nil, capError(err)
		}
		all, err := h.Files.Proposals(ctx, c.Principal, it.ID)
		if err != nil {
			return nil, capError(err)
		}
		for _, x := range all {
			if x.Status == filemeta.ProposalPending {
				out.Proposals = append(out.Proposals, x)
			}
		}
	}
	return out, nil
}

// ContentResult is set_content's answer: the file and its new version.
type ContentResult struct {
	File    filemeta.Item    `json:"file"`
	Version filemeta.Version `json:"version"`
	Warning string           `json:"warning,omitempty"`
}

func (h *Capability) setContent(ctx context.Context, call *wasm.Call, req json.RawMessage) (any, error) {
	c, err := h.caller(ctx)
	if err != nil {
		return nil, err
	}
	var r struct {
		File        string `json:"file"`
		Data        string `json:"data"`
		Mode        string `json:"mode"`
		BaseVersion int    `json:"baseVersion"`
	}
	if err := decodeStrict(req, &r); err != nil {
		return nil, err
	}
	data, err := base64.StdEncoding.DecodeString(r.Data)
	if err != nil {
		return nil, &wasm.CapabilityError{Code: "invalid_request", Message: "data is not base64: " + err.Error()}
	}
	if r.BaseVersion < 0 {
		return nil, &wasm.CapabilityError{Code: "invalid_request", Message: "baseVersion must not be negative"}
	}
	it, err := h.item(ctx, c, r.File)
	if err != nil {
		return nil, err
	}
	// The file tools write text: a document (PDF, Office…) is not
	// overwritten with text, nor a text file with binary data.
	if ok, err := h.Files.LooksText(ctx, c.Principal, it.ID); err != nil {
		return nil, capError(err)
	} else if !ok {
		return nil, &wasm.CapabilityError{Code: "invalid_request", Message: fmt.Sprintf("%s (%s) is not a text file; write a new file instead", it.Name, it.MIMEType)}
	}
	if !IsText(data) {
		return nil, &wasm.CapabilityError{Code: "invalid_request", Message: "the content to write is not UTF-8 text"}
	}
	var v filemeta.Version
	switch r.Mode {
	case "overwrite":
		it, v, err = h.Files.SetContent(ctx, c.Principal, it.ID, strings.NewReader(string(data)), r.BaseVersion, call.Tool)
	case "append":
		it, v, err = h.Files.Append(ctx, c.Principal, it.ID, data, r.BaseVersion, call.Tool)
	default:
		return nil, &wasm.CapabilityError{Code: "invalid_request", Message: fmt.Sprintf("mode %q: want overwrite or append", r.Mode)}
	}
	if err != nil {
		return nil, capError(err)
	}
	res := ContentResult{File: it, Version: v}
	if w := h.announce(ctx, c, workflows.EventFileVersion, workflows.FileVersionData{FileID: it.ID, Name: it.Name,
		SHA256: v.SHA256, Size: v.Size, Version: v.Version}); w != "" {
		res.Warning = w
	}
	return res, nil
}

// announce appends an event to the caller's workflow, if any; a failure is
// reported to the tool, never the operation's failure (it is done).
func (h *Capability) announce(ctx context.Context, c toolcall.Caller, typ workflows.EventType, payload any) string {
	if c.WorkflowID == "" || h.Workflows == nil {
		return ""
	}
	if _, err := h.Workflows.Append(ctx, c.Principal, c.WorkflowID, typ, payload); err != nil {
		h.logger().Warn("files: announcing a file change", "type", typ, "workflow", c.WorkflowID, "err", err)
		return fmt.Sprintf("done, but the %s event was not recorded: %v", typ, err)
	}
	return ""
}

func (h *Capability) move(ctx context.Context, _ *wasm.Call, req json.RawMessage) (any, error) {
	c, err := h.caller(ctx)
	if err != nil {
		return nil, err
	}
	var r struct {
		File   string  `json:"file"`
		Folder string  `json:"folder"`
		Name   *string `json:"name"`
	}
	if err := decodeStrict(req, &r); err != nil {
		return nil, err
	}
	it, err := h.item(ctx, c, r.File)
	if err != nil {
		return nil, err
	}
	folder, err := h.ResolveFolder(ctx, c, r.Folder)
	if err != nil {
		return nil, err
	}
	u := filemeta.Update{Folder: &folder}
	if r.Name != nil && *r.Name != it.Name {
		u.Name = r.Name
	}
	it, err = h.Files.Update(ctx, c.Principal, it.ID, u)
	if err != nil {
		return nil, capError(err)
	}
	paths, _, err := h.folderPaths(ctx, c)
	if err != nil {
		return nil, err
	}
	return Info{Item: it, FolderPath: paths[it.FolderID]}, nil
}

func (h *Capability) tag(ctx context.Context, _ *wasm.Call, req json.RawMessage) (any, error) {
	c, err := h.caller(ctx)
	if err != nil {
		return nil, err
	}
	var r struct {
		File   string   `json:"file"`
		Add    []string `json:"add"`
		Remove []string `json:"remove"`
	}
	if err := decodeStrict(req, &r); err != nil {
		return nil, err
	}
	if len(r.Add) == 0 && len(r.Remove) == 0 {
		return nil, &wasm.CapabilityError{Code: "invalid_request", Message: "give tags to add or to remove"}
	}
	it, err := h.item(ctx, c, r.File)
	if err != nil {
		return nil, err
	}
	it, err = h.Files.Update(ctx, c.Principal, it.ID, filemeta.Update{AddTags: r.Add, RemoveTags: r.Remove})
	if err != nil {
		return nil, capError(err)
	}
	return it, nil
}

func (h *Capability) propose(ctx context.Context, _ *wasm.Call, req json.RawMessage) (any, error) {
	c, err := h.caller(ctx)
	if err != nil {
		return nil, err
	}
	var r struct {
		File        string `json:"file"`
		Content     string `json:"content"`
		BaseVersion int    `json:"baseVersion"`
		Description string `json:"description"`
	}
	if err := decodeStrict(req, &r); err != nil {
		return nil, err
	}
	it, err := h.item(ctx, c, r.File)
	if err != nil {
		return nil, err
	}
	x, err := h.Files.Propose(ctx, c.Principal, ProposeRequest{FileID: it.ID, WorkflowID: c.WorkflowID, BaseVersion: r.BaseVersion,
		Content: r.Content, Description: r.Description})
	if err != nil {
		return nil, capError(err)
	}
	res := struct {
		filemeta.Proposal
		Warning string `json:"warning,omitempty"`
	}{Proposal: x}
	res.Warning = h.announce(ctx, c, workflows.EventFileEditProposal, workflows.FileEditProposalData{ProposalID: x.ID, FileID: it.ID,
		Name: it.Name, Description: x.Description, Diff: x.Diff, BaseVersion: x.BaseVersion})
	return res, nil
}

// writeInFolder is files.write with an optional "folder" (an id or path of
// the caller's workspace): the folder is resolved before anything is
// stored, so an unknown folder stores nothing; the new file is then filed
// there. Should filing fail after all (the folder was deleted meanwhile),
// the file stays in no folder and the result's warning says so.
func (h *Capability) writeInFolder(ctx context.Context, call *wasm.Call, req json.RawMessage) (any, error) {
	var r struct {
		Folder string `json:"folder"`
	}
	if err := json.Unmarshal(req, &r); err != nil {
		return nil, &wasm.CapabilityError{Code: "invalid_request", Message: "write: " + err.Error()}
	}
	if strings.TrimSpace(r.Folder) == "" || strings.TrimSpace(r.Folder) == "/" {
		return h.write(ctx, call, req)
	}
	c, err := h.caller(ctx)
	if err != nil {
		return nil, err
	}
	folder, err := h.ResolveFolder(ctx, c, r.Folder)
	if err != nil {
		return nil, err
	}
	out, err := h.write(ctx, call, req)
	if err != nil {
		return nil, err
	}
	res, ok := out.(WriteResult)
	if !ok {
		return out, nil
	}
	if res.Existing {
		// The same name and bytes were there already: that file is the
		// answer, and it stays where its owner put it.
		res.Warning = strings.TrimPrefix(res.Warning+"; the same file already exists and keeps its folder", "; ")
		return res, nil
	}
	if _, err := h.Files.Update(ctx, c.Principal, res.FileID, filemeta.Update{Folder: &folder}); err != nil {
		msg := fmt.Sprintf("stored, but not filed into folder %q: %v", r.Folder, err)
		if res.Warning != "" {
			msg = res.Warning + "; " + msg
		}
		res.Warning = msg
	}
	return res, nil
}
