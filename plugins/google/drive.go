package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"mime/multipart"
	"net/textproto"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/agenthost/agenthost/pdk"
	"github.com/agenthost/agenthost/pdk/connection"
	"github.com/agenthost/agenthost/pdk/connector"
	"github.com/agenthost/agenthost/pdk/connector/wire"
)

// drive is the service "drive". Paths are folder by folder from My Drive
// ("/Finanzen/Budget-2026.xlsx"), or start at an id ("id:<id>",
// "id:<id>/Sub"). Drive allows several items of one name in a folder: such
// a path is refused naming the ids, to be used in the id form.
type drive struct{}

const (
	folderType   = "application/vnd.google-apps.folder"
	shortcutType = "application/vnd.google-apps.shortcut"
	// multipartMax: Google documents multipart uploads for media of 5 MB
	// or less; larger ones go resumable.
	multipartMax = 5 << 20
	// maxDownload is this connector's download limit (the host's).
	maxDownload = 64 << 20
	// maxUpload is Drive's file size limit, 5 TB ("Upload file data":
	// "files up to 5,120 GB"); the host's own upload setting is usually
	// lower and applies first.
	maxUpload  = 5120 << 30
	fileFields = "id,name,mimeType,size,modifiedTime,webViewLink,shortcutDetails"
)

// exportAs is the format a Google-native document is exported to on
// download: Office formats keep structure (headings, tables, sheets,
// slides) for the extractors; drawings go to PDF.
var exportAs = map[string]struct{ mimeType, ext string }{
	"application/vnd.google-apps.document":     {"application/vnd.openxmlformats-officedocument.wordprocessingml.document", ".docx"},
	"application/vnd.google-apps.spreadsheet":  {"application/vnd.openxmlformats-officedocument.spreadsheetml.sheet", ".xlsx"},
	"application/vnd.google-apps.presentation": {"application/vnd.openxmlformats-officedocument.presentationml.presentation", ".pptx"},
	"application/vnd.google-apps.drawing":      {"application/pdf", ".pdf"},
}

// driveFile is the part of a Drive file resource the connector reads.
type driveFile struct {
	ID           string `json:"id"`
	Name         string `json:"name"`
	MIMEType     string `json:"mimeType"`
	Size         string `json:"size"` // int64 as a string
	ModifiedTime string `json:"modifiedTime"`
	WebViewLink  string `json:"webViewLink"`
	// ShortcutDetails names a shortcut's target.
	ShortcutDetails struct {
		TargetID string `json:"targetId"`
	} `json:"shortcutDetails"`
}

type fileList struct {
	Files         []driveFile `json:"files"`
	NextPageToken string      `json:"nextPageToken"`
}

func (f driveFile) folder() bool { return f.MIMEType == folderType }

func (f driveFile) size() int64 {
	n, _ := strconv.ParseInt(f.Size, 10, 64)
	return n
}

// check refuses a file resource a hostile provider could use to steer the
// connector (an id that is not an id goes into URL paths).
func (f driveFile) check() error {
	if !idPattern.MatchString(f.ID) || f.Name == "" {
		return pdk.Errorf("bad_response", "Google answered a file without a valid id and name")
	}
	return nil
}

func (f driveFile) entry(path string) connector.Entry {
	e := connector.Entry{ID: f.ID, Name: f.Name, Path: path, Folder: f.folder(), Size: f.size(), MIMEType: f.MIMEType, WebURL: f.WebViewLink}
	if t, err := time.Parse(time.RFC3339Nano, f.ModifiedTime); err == nil {
		e.Modified = t.UTC()
	}
	if x, ok := exportAs[f.MIMEType]; ok {
		e.Summary = "Google document, downloads as " + strings.TrimPrefix(x.ext, ".")
	}
	if f.MIMEType == shortcutType {
		e.Summary = "shortcut: browsing or downloading it follows it"
	}
	return e
}

func pageSize(n, def, max int) int {
	if n <= 0 {
		return def
	}
	return min(n, max)
}

// list runs one files.list page.
// Drive refuses orderBy with fullText terms; ordered lists sort folders first.
func (c *client) list(q, cursor string, limit int, ordered bool) (fileList, error) {
	if err := checkCursor(cursor); err != nil {
		return fileList{}, err
	}
	n := pageSize(limit, 100, 1000)
	v := url.Values{"q": {q}, "pageSize": {strconv.Itoa(n)}, "fields": {"nextPageToken,files(" + fileFields + ")"},
		"supportsAllDrives": {"true"}, "includeItemsFromAllDrives": {"true"}}
	if ordered {
		v.Set("orderBy", "folder,name")
	}
	if cursor != "" {
		v.Set("pageToken", cursor)
	}
	var out fileList
	if err := c.getJSON(c.drive, "/drive/v3/files", v, &out); err != nil {
		return fileList{}, err
	}
	if len(out.Files) > n { // never more than asked, whatever the provider says
		out.Files = out.Files[:n]
	}
	for _, f := range out.Files {
		if err := f.check(); err != nil {
			return fileList{}, err
		}
	}
	return out, nil
}

func (c *client) get(id string) (driveFile, error) {
	var f driveFile
	if err := c.getJSON(c.drive, "/drive/v3/files/"+id, url.Values{"fields": {fileFields}, "supportsAllDrives": {"true"}}, &f); err != nil {
		return driveFile{}, err
	}
	return f, f.check()
}

// follow resolves a shortcut to its target, once: a shortcut to a
// shortcut is refused, so shortcuts cannot chain or loop.
func (c *client) follow(f driveFile, shown string) (driveFile, error) {
	if f.MIMEType != shortcutType {
		return f, nil
	}
	t := f.ShortcutDetails.TargetID
	if !idPattern.MatchString(t) {
		return driveFile{}, pdk.Errorf("bad_response", "shortcut %s has no valid target", shown)
	}
	target, err := c.get(t)
	if err != nil {
		return driveFile{}, err
	}
	if target.MIMEType == shortcutType {
		return driveFile{}, pdk.Errorf("invalid_path", "shortcut %s points to another shortcut", shown)
	}
	return target, nil
}

// resolve walks a path folder by folder and returns the item and its
// display path.
func (c *client) resolve(raw string) (driveFile, string, error) {
	p, err := parseDrivePath(raw)
	if err != nil {
		return driveFile{}, "", err
	}
	cur := driveFile{ID: "root", Name: "My Drive", MIMEType: folderType}
	shown := ""
	if p.startID != "" {
		if cur, err = c.get(p.startID); err != nil {
			return driveFile{}, "", err
		}
		shown = "id:" + cur.ID
		if cur, err = c.follow(cur, shown); err != nil {
			return driveFile{}, "", err
		}
	}
	for i, name := range p.names {
		if !cur.folder() {
			return driveFile{}, "", pdk.Errorf("invalid_path", "%s is a file, not a folder", or(shown, "/"))
		}
		next, err := c.child(cur, name, i == len(p.names)-1, or(shown, "/"))
		if err != nil {
			return driveFile{}, "", err
		}
		shown += "/" + name
		if cur, err = c.follow(next, shown); err != nil {
			return driveFile{}, "", err
		}
	}
	return cur, or(shown, "/"), nil
}

func or(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// child finds the one item called name in folder. The last segment may
// name a Google-native document by its export name ("Budget-2026.xlsx"
// for the spreadsheet "Budget-2026").
func (c *client) child(folder driveFile, name string, last bool, where string) (driveFile, error) {
	find := func(q, want string) ([]driveFile, error) {
		l, err := c.list(q, "", 10, true)
		if err != nil {
			return nil, err
		}
		var out []driveFile
		for _, f := range l.Files {
			if f.Name == want { // the provider is not trusted to have filtered
				out = append(out, f)
			}
		}
		return out, nil
	}
	base := quote(folder.ID) + " in parents and trashed = false"
	hits, err := find(base+" and name = "+quote(name), name)
	if err != nil {
		return driveFile{}, err
	}
	if len(hits) == 0 && last {
		for t, x := range exportAs {
			if stem, ok := strings.CutSuffix(name, x.ext); ok && stem != "" {
				native, err := find(base+" and name = "+quote(stem)+" and mimeType = "+quote(t), stem)
				if err != nil {
					return driveFile{}, err
				}
				hits = append(hits, native...)
			}
		}
	}
	switch len(hits) {
	case 0:
		return driveFile{}, pdk.Errorf("not_found", "no item %q in %s", name, where)
	case 1:
		return hits[0], nil
	}
	ids := make([]string, len(hits))
	for i, h := range hits {
		ids[i] = h.ID
	}
	return driveFile{}, pdk.Errorf("ambiguous", "%d items are named %q in %s (ids %s); name one as id:<id>", len(hits), name, where, strings.Join(ids, ", "))
}

func (drive) Browse(r connector.BrowseRequest) (connector.Listing, error) {
	c, err := newClient(r.Connection)
	if err != nil {
		return connector.Listing{}, err
	}
	f, shown, err := c.resolve(r.Path)
	if err != nil {
		return connector.Listing{}, err
	}
	if !f.folder() {
		return connector.Listing{Entries: []connector.Entry{f.entry(shown)}}, nil
	}
	l, err := c.list(quote(f.ID)+" in parents and trashed = false", r.Cursor, r.Limit, true)
	if err != nil {
		return connector.Listing{}, err
	}
	return listing(l, strings.TrimSuffix(shown, "/"), true), nil
}

// listing makes entries, by name under parent when byName; a name that is
// not a usable path segment, or that several entries share, gets the id
// form.
func listing(l fileList, parent string, byName bool) connector.Listing {
	seen := map[string]int{}
	for _, f := range l.Files {
		seen[f.Name]++
	}
	out := connector.Listing{Entries: []connector.Entry{}, Next: l.NextPageToken}
	for _, f := range l.Files {
		p := "id:" + f.ID
		if byName && seen[f.Name] == 1 && !strings.Contains(f.Name, "/") && checkName(f.Name) == nil {
			p = parent + "/" + f.Name
		}
		out.Entries = append(out.Entries, f.entry(p))
	}
	return out
}

func (drive) Download(r connector.DownloadRequest) (connector.File, error) {
	c, err := newClient(r.Connection)
	if err != nil {
		return connector.File{}, err
	}
	path := r.Path
	if r.ID != "" {
		if !idPattern.MatchString(r.ID) {
			return connector.File{}, pdk.Errorf("invalid_path", "%q is not a Drive id", r.ID)
		}
		path = "id:" + r.ID
	}
	f, shown, err := c.resolve(path)
	if err != nil {
		return connector.File{}, err
	}
	if f.folder() {
		return connector.File{}, pdk.Errorf("invalid_path", "%s is a folder; browse it", shown)
	}
	limit := r.MaxBytes
	if limit <= 0 || limit > maxDownload {
		limit = maxDownload
	}
	name, mimeType := f.Name, f.MIMEType
	var u string
	if x, ok := exportAs[f.MIMEType]; ok {
		u = c.drive + "/drive/v3/files/" + f.ID + "/export?" + url.Values{"mimeType": {x.mimeType}}.Encode() // files.export takes no supportsAllDrives (Drive v3 reference)
		mimeType = x.mimeType
		if !strings.HasSuffix(strings.ToLower(name), x.ext) {
			name += x.ext
		}
	} else if strings.HasPrefix(f.MIMEType, "application/vnd.google-apps.") {
		return connector.File{}, pdk.Errorf("unsupported", "%s is a %s, which Drive cannot export as a file", shown, f.MIMEType)
	} else {
		if f.size() > limit {
			return connector.File{}, pdk.Errorf("too_large", "%s is %d bytes, over the limit of %d", shown, f.size(), limit)
		}
		u = c.drive + "/drive/v3/files/" + f.ID + "?alt=media&supportsAllDrives=true"
	}
	resp, err := c.send("GET", u, nil, map[string]string{"Accept": "*/*"})
	if err != nil {
		return connector.File{}, err
	}
	if int64(len(resp.Body)) > limit {
		return connector.File{}, pdk.Errorf("too_large", "%s is over the limit of %d bytes", shown, limit)
	}
	return connector.File{Name: name, MIMEType: mimeType, Data: resp.Body}, nil
}

// Upload stores a file in a folder with the request's conflict policy.
// Drive keeps any number of files of one name in a folder (a path to
// them is then ambiguous), so the policy is the connector's: the folder
// is searched for the name first; fail refuses ("exists"), replace sends
// the bytes as the existing file's new content (files.update), rename
// creates the first free "name (n).ext". Files over multipartMax go
// through a resumable session in chunks, resumed after a failed one.
func (drive) Upload(r connector.UploadRequest) (connector.Entry, error) {
	if err := checkFileName(r.Name); err != nil {
		return connector.Entry{}, err
	}
	if r.Size > maxUpload {
		return connector.Entry{}, pdk.Errorf("too_large", "%s is %d bytes, over Drive's file size limit of %d", r.Name, r.Size, int64(maxUpload))
	}
	policy, ok := r.ConflictPolicy()
	if !ok {
		return connector.Entry{}, pdk.Errorf("invalid", "conflict is fail, replace or rename, not %q", r.Conflict)
	}
	c, err := newClient(r.Connection)
	if err != nil {
		return connector.Entry{}, err
	}
	folder, shown, err := c.resolve(r.Path)
	if err != nil {
		return connector.Entry{}, err
	}
	if !folder.folder() {
		return connector.Entry{}, pdk.Errorf("invalid_path", "%s is a file; upload into a folder", shown)
	}
	mimeType := r.MIMEType
	if mimeType == "" {
		mimeType = "application/octet-stream"
	}
	name := r.Name
	same, err := c.named(folder, name)
	if err != nil {
		return connector.Entry{}, err
	}
	replace := ""
	switch {
	case len(same) == 0:
	case policy == wire.ConflictFail:
		return connector.Entry{}, pdk.Errorf("exists", "%s exists there (conflict=fail); pass conflict=replace or conflict=rename", name)
	case policy == wire.ConflictReplace:
		if len(same) > 1 {
			return connector.Entry{}, pdk.Errorf("ambiguous", "%d files are called %s there; Drive keeps them apart by id only", len(same), name)
		}
		if same[0].folder() || same[0].MIMEType == shortcutType || strings.HasPrefix(same[0].MIMEType, "application/vnd.google-apps.") {
			return connector.Entry{}, pdk.Errorf("exists", "%s there is not a file whose content can be replaced", name)
		}
		replace = same[0].ID
	default:
		for n := 1; ; n++ {
			if n > maxRename {
				return connector.Entry{}, pdk.Errorf("exists", "%s and %d numbered copies exist there", r.Name, maxRename)
			}
			name = wire.RenameCandidate(r.Name, n)
			if same, err = c.named(folder, name); err != nil {
				return connector.Entry{}, err
			}
			if len(same) == 0 {
				break
			}
		}
	}
	fields := url.Values{"fields": {fileFields}, "supportsAllDrives": {"true"}}
	var resp []byte
	if replace == "" && r.Size <= multipartMax {
		meta, _ := json.Marshal(map[string]any{"name": name, "parents": []string{folder.ID}})
		parts, ct := related(meta, mimeType, r.Size)
		fields.Set("uploadType", "multipart")
		out, err := connection.Send(connection.Request{Connection: c.conn, Method: "POST", URL: c.drive + "/upload/drive/v3/files?" + fields.Encode(),
			Parts: parts, Headers: map[string]string{"Content-Type": ct, "Accept": "application/json"}}, statusError)
		if err != nil {
			return connector.Entry{}, err
		}
		resp = out.Body
	} else {
		// Resumable: the metadata opens a session, whose URI takes the bytes.
		fields.Set("uploadType", "resumable")
		method, u, meta := "POST", c.drive+"/upload/drive/v3/files?"+fields.Encode(), []byte(nil)
		if replace != "" {
			method, u = "PATCH", c.drive+"/upload/drive/v3/files/"+url.PathEscape(replace)+"?"+fields.Encode()
		} else {
			meta, _ = json.Marshal(map[string]any{"name": name, "parents": []string{folder.ID}})
		}
		start, err := c.send(method, u, meta, map[string]string{
			"Content-Type": "application/json; charset=UTF-8", "X-Upload-Content-Type": mimeType, "X-Upload-Content-Length": strconv.FormatInt(r.Size, 10)})
		if err != nil {
			return connector.Entry{}, err
		}
		loc := start.Headers["location"]
		lu, err := url.Parse(loc)
		du, _ := url.Parse(c.drive)
		if err != nil || lu.Host != du.Host || lu.Scheme != du.Scheme || !strings.HasPrefix(lu.Path, "/upload/drive/v3/files") {
			return connector.Entry{}, pdk.Errorf("bad_response", "Google answered a resumable upload with no usable session URI")
		}
		if resp, err = c.resumable(loc, mimeType, r.Size); err != nil {
			return connector.Entry{}, err
		}
	}
	var f driveFile
	if err := json.Unmarshal(resp, &f); err != nil {
		return connector.Entry{}, pdk.Errorf("bad_response", "Google answered the upload with something that is not its JSON: %v", err)
	}
	if err := f.check(); err != nil {
		return connector.Entry{}, err
	}
	return f.entry(strings.TrimSuffix(shown, "/") + "/" + f.Name), nil
}

const (
	// chunkSize is a resumable upload's chunk: Google wants multiples of
	// 256 KiB for every chunk but the last ("Perform a resumable upload").
	// The host reads each from the workspace as it is sent.
	chunkSize = 32 * 256 << 10
	// maxResumes bounds the status queries after failed chunks.
	maxResumes = 5
	// maxRename bounds the names ConflictRename tries.
	maxRename = 100
)

// named lists the items of folder called name.
func (c *client) named(folder driveFile, name string) ([]driveFile, error) {
	l, err := c.list(quote(folder.ID)+" in parents and trashed = false and name = "+quote(name), "", 10, false)
	if err != nil {
		return nil, err
	}
	var out []driveFile
	for _, f := range l.Files {
		if f.Name == name { // the provider is not trusted to have filtered
			out = append(out, f)
		}
	}
	return out, nil
}

// resumable sends data to a session URI in chunks. 308 Resume Incomplete
// names what Google holds (Range: bytes=0-N); after a failed chunk a
// status query (empty PUT, Content-Range: bytes */total) says where to go
// on. It returns the body of the final 200 or 201.
func (c *client) resumable(loc, mimeType string, total int64) ([]byte, error) {
	accept308 := func(resp connection.Response) error {
		if resp.Status == 308 {
			return nil
		}
		return statusError(resp)
	}
	held := func(resp connection.Response) (int64, error) {
		rg := resp.Headers["range"]
		if rg == "" {
			return 0, nil
		}
		var last int64
		if _, err := fmt.Sscanf(rg, "bytes=0-%d", &last); err != nil || last < 0 || last >= total {
			return 0, pdk.Errorf("bad_response", "Google's resumable upload holds range %q of a %d-byte file", rg, total)
		}
		return last + 1, nil
	}
	off, resumes := int64(0), 0
	for {
		end := min(off+chunkSize, total)
		resp, err := connection.Send(connection.Request{Connection: c.conn, Method: "PUT", URL: loc, Parts: []connection.Part{connection.Upload(off, end-off)},
			Headers: map[string]string{"Content-Type": mimeType, "Content-Range": fmt.Sprintf("bytes %d-%d/%d", off, end-1, total)}}, accept308)
		if err == nil && resp.Status != 308 {
			if len(resp.Body) == 0 {
				return nil, pdk.Errorf("bad_response", "Google answered chunk %d-%d of %d with HTTP %d and no file", off, end-1, total, resp.Status)
			}
			return resp.Body, nil
		}
		if err == nil {
			if off, err = held(resp); err != nil {
				return nil, err
			}
			continue
		}
		var pe *pdk.Error
		if errors.As(err, &pe) && pe.Code != "rate_limited" && pe.Code != "google_error" && pe.Code != "unavailable" {
			return nil, err
		}
		if resumes++; resumes > maxResumes {
			return nil, fmt.Errorf("resumable upload: gave up after %d failed chunks: %w", maxResumes, err)
		}
		st, serr := connection.Send(connection.Request{Connection: c.conn, Method: "PUT", URL: loc,
			Headers: map[string]string{"Content-Range": fmt.Sprintf("bytes */%d", total)}}, accept308)
		if serr != nil {
			return nil, fmt.Errorf("resumable upload: status after a failed chunk (%v): %w", err, serr)
		}
		if st.Status != 308 {
			return st.Body, nil
		}
		if off, err = held(st); err != nil {
			return nil, err
		}
	}
}

// related is a multipart/related body: the JSON metadata, then the
// media, which the host streams from the upload between the head and
// the tail.
func related(meta []byte, mimeType string, size int64) ([]connection.Part, string) {
	var head bytes.Buffer
	w := multipart.NewWriter(&head)
	// Writes to a bytes.Buffer do not fail.
	p, _ := w.CreatePart(textproto.MIMEHeader{"Content-Type": {"application/json; charset=UTF-8"}})
	_, _ = p.Write(meta)
	_, _ = w.CreatePart(textproto.MIMEHeader{"Content-Type": {mimeType}})
	tail := "\r\n--" + w.Boundary() + "--\r\n"
	return []connection.Part{connection.Bytes(head.Bytes()), connection.Upload(0, size), connection.Bytes([]byte(tail))},
		fmt.Sprintf("multipart/related; boundary=%s", w.Boundary())
}

func (drive) Search(r connector.SearchRequest) (connector.Listing, error) {
	c, err := newClient(r.Connection)
	if err != nil {
		return connector.Listing{}, err
	}
	l, err := c.list("fullText contains "+quote(r.Query)+" and trashed = false", r.Cursor, r.Limit, false)
	if err != nil {
		return connector.Listing{}, err
	}
	// A hit's folder is not known without walking its parents: its path
	// is the id form.
	return listing(l, "", false), nil
}
