package knowledge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/agenthost/agenthost/host/files/filemeta"
	"github.com/agenthost/agenthost/host/knowledge/extract"
	"github.com/agenthost/agenthost/host/knowledge/kindex"
	"github.com/agenthost/agenthost/host/knowledge/unlock"
	"github.com/agenthost/agenthost/host/tenancy"
	"github.com/agenthost/agenthost/host/toolcall"
	"github.com/agenthost/agenthost/pdk/knowledge/wire"
)

// FolderLister lists a workspace's folders and a folder's files for a
// principal (files.Service).
type FolderLister interface {
	Folders(ctx context.Context, p tenancy.Principal, workspaceID string) ([]filemeta.Folder, error)
	List(ctx context.Context, p tenancy.Principal, f filemeta.Filter) (filemeta.Page, error)
}

// folder answers knowledge.folder: a folder of the caller's workspace as a
// container (a prompt's "@folder/" reference): its subfolders and one page
// of its files with their indexing status, so an agent sees what is ready
// to read before reading it.
func (d *Capability) folder(ctx context.Context, c toolcall.Caller, req json.RawMessage) (any, error) {
	var r wire.FolderRequest
	if err := decode(req, &r); err != nil {
		return nil, err
	}
	switch {
	case r.Limit < 0 || r.Limit > 200:
		return nil, fmt.Errorf("%w: limit %d is outside 1-200", tenancy.ErrInvalid, r.Limit)
	case r.Limit == 0:
		r.Limit = 50
	}
	if d.Folders == nil {
		return nil, fmt.Errorf("%w: this host lists no folders", extract.ErrNoExtractor)
	}
	if c.WorkspaceID == "" {
		return nil, fmt.Errorf("%w: folders belong to a workspace, and this call runs outside one", tenancy.ErrInvalid)
	}
	all, err := d.Folders.Folders(ctx, c.Principal, c.WorkspaceID)
	if err != nil {
		return nil, err
	}
	out := wire.Folder{Name: "/", Subfolders: []wire.FolderRef{}, Files: []wire.FolderFile{}}
	found := r.Folder == ""
	for _, f := range all {
		if f.ID == r.Folder {
			out.ID, out.Name, out.ParentID, found = f.ID, f.Name, f.ParentID, true
		}
		if f.ParentID == r.Folder {
			out.Subfolders = append(out.Subfolders, wire.FolderRef{ID: f.ID, Name: f.Name})
		}
	}
	if !found {
		return nil, fmt.Errorf("%w: folder %s in this workspace", tenancy.ErrNotFound, r.Folder)
	}
	page, err := d.Folders.List(ctx, c.Principal, filemeta.Filter{WorkspaceID: c.WorkspaceID, Folder: &r.Folder,
		Order: filemeta.OrderName, Limit: r.Limit, Cursor: r.Cursor})
	if err != nil {
		return nil, err
	}
	out.Next = page.Next
	for _, f := range page.Items {
		ff := wire.FolderFile{FileID: f.ID, Name: f.Name, MIMEType: f.MIMEType, Size: f.Size, Status: kindex.StatusPending}
		switch st, err := d.Reader.ContentState(ctx, c.Principal, f.ID); {
		case err == nil:
			ff.Status, ff.Error = unlock.ShownStatus(st.Status, st.Error), st.Error
		case !errors.Is(err, tenancy.ErrNotFound):
			return nil, err
		}
		out.Files = append(out.Files, ff)
	}
	return out, nil
}
