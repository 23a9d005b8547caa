package main

import (
	"errors"
	"mime"
	"path"
	"strconv"
	"strings"

	"github.com/agenthost/agenthost/pdk"
	"github.com/agenthost/agenthost/pdk/connector"
	"github.com/agenthost/agenthost/pdk/connector/wire"
	"github.com/agenthost/agenthost/pdk/filetransfer"
)

// files is the service "files". Paths are the server's, relative to the
// connection's base directory ("" is the base).
type files struct{}

// pageSize is a browse page's size when the caller names none.
const pageSize = 200

func entry(e filetransfer.Entry) connector.Entry {
	out := connector.Entry{ID: e.Path, Name: e.Name, Path: e.Path, Folder: e.Dir, Size: e.Size, Modified: e.Modified}
	if !e.Dir {
		out.MIMEType = mimeType(e.Name)
	}
	if e.Link {
		out.Summary = "link"
		if e.Target != "" {
			out.Summary = "link to " + e.Target
		} else {
			out.Summary = "link leading outside the base directory or nowhere (not followed)"
		}
	}
	return out
}

func mimeType(name string) string {
	if t := mime.TypeByExtension(strings.ToLower(path.Ext(name))); t != "" {
		return t
	}
	return "application/octet-stream"
}

// Browse lists a directory a page at a time; the cursor is the offset of
// the next page in the name-sorted listing.
func (files) Browse(r connector.BrowseRequest) (connector.Listing, error) {
	offset := 0
	if r.Cursor != "" {
		n, err := strconv.Atoi(r.Cursor)
		if err != nil || n < 0 {
			return connector.Listing{}, pdk.Errorf("invalid_cursor", "cursor %q is not one this connector gave", r.Cursor)
		}
		offset = n
	}
	size := r.Limit
	if size <= 0 || size > 1000 {
		size = pageSize
	}
	l, err := filetransfer.List(r.Connection, r.Path, offset+size+1)
	if err != nil {
		return connector.Listing{}, err
	}
	out := connector.Listing{Entries: []connector.Entry{}}
	for i := offset; i < len(l.Entries) && i < offset+size; i++ {
		out.Entries = append(out.Entries, entry(l.Entries[i]))
	}
	if len(l.Entries) > offset+size {
		out.Next = strconv.Itoa(offset + size)
	}
	return out, nil
}

func (files) Download(r connector.DownloadRequest) (connector.File, error) {
	p := r.Path
	if p == "" {
		p = r.ID
	}
	if strings.Trim(p, "/") == "" {
		return connector.File{}, pdk.Errorf("invalid_path", "name a file to download")
	}
	f, err := filetransfer.Read(r.Connection, p, r.MaxBytes)
	if err != nil {
		return connector.File{}, err
	}
	return connector.File{Name: f.Entry.Name, MIMEType: mimeType(f.Entry.Name), Data: f.Data}, nil
}

// Upload stores the file named Name in the directory Path with the
// request's conflict policy: fail leaves a file of that name as it is
// ("exists"), replace overwrites it (through the host's ".part" file and
// rename, so a failed upload never leaves half a file), rename stores the
// first free "name (n).ext" — each try refuses an existing file, so a name
// taken meanwhile is skipped, never overwritten.
func (files) Upload(r connector.UploadRequest) (connector.Entry, error) {
	if r.Name == "" || strings.ContainsAny(r.Name, "/\\") || r.Name == "." || r.Name == ".." {
		return connector.Entry{}, pdk.Errorf("invalid_name", "%q is not a file name", r.Name)
	}
	policy, ok := r.ConflictPolicy()
	if !ok {
		return connector.Entry{}, pdk.Errorf("invalid", "conflict is fail, replace or rename, not %q", r.Conflict)
	}
	dir := strings.Trim(r.Path, "/")
	if policy != wire.ConflictRename {
		e, err := filetransfer.WriteUpload(r.Connection, path.Join(dir, r.Name), policy == wire.ConflictReplace)
		if err != nil {
			return connector.Entry{}, existsError(err, r.Name)
		}
		return entry(e), nil
	}
	for n := 0; n <= maxRename; n++ {
		name := r.Name
		if n > 0 {
			name = wire.RenameCandidate(r.Name, n)
		}
		e, err := filetransfer.WriteUpload(r.Connection, path.Join(dir, name), false)
		var pe *pdk.Error
		if errors.As(err, &pe) && pe.Code == "exists" {
			continue
		}
		if err != nil {
			return connector.Entry{}, err
		}
		return entry(e), nil
	}
	return connector.Entry{}, pdk.Errorf("exists", "%s and %d numbered copies exist there", r.Name, maxRename)
}

// maxRename bounds the names ConflictRename tries.
const maxRename = 100

// existsError says how to get past a refused existing name.
func existsError(err error, name string) error {
	var pe *pdk.Error
	if errors.As(err, &pe) && pe.Code == "exists" {
		return pdk.Errorf("exists", "%s exists there (conflict=fail); pass conflict=replace or conflict=rename", name)
	}
	return err
}
