package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"

	"github.com/agenthost/agenthost/pdk"
	"github.com/agenthost/agenthost/pdk/connection"
	"github.com/agenthost/agenthost/pdk/connector"
	"github.com/agenthost/agenthost/pdk/connector/wire"
)

// driveRef is one drive (a SharePoint document library or the user's
// OneDrive) as the service's paths name it.
type driveRef struct {
	api    string // "/me/drive" or "/drives/{id}"
	prefix string // the path of the drive's root in the service's scheme
}

// itemAPI addresses an item by its path below the drive's root.
func (d driveRef) itemAPI(segs []string) string {
	if len(segs) == 0 {
		return d.api + "/root"
	}
	return d.api + "/root:/" + escape(segs) + ":"
}

func (d driveRef) byID(id string) string { return d.api + "/items/" + url.PathEscape(id) }

func itemEntry(it driveItem, path string) connector.Entry {
	e := connector.Entry{ID: it.ID, Name: it.Name, Path: path, Size: it.Size, WebURL: it.WebURL, Modified: graphTime(it.LastModifiedDateTime)}
	if it.Folder != nil {
		e.Folder = true
		e.Summary = fmt.Sprintf("folder, %d items", it.Folder.ChildCount)
	}
	if it.File != nil {
		e.MIMEType = it.File.MIMEType
	}
	return e
}

// item fetches the item at segs, which must be a folder (wantFolder) or a file.
func (c *client) item(d driveRef, segs []string, wantFolder bool) (driveItem, error) {
	var it driveItem
	if err := c.get(d.itemAPI(segs), nil, &it); err != nil {
		return it, err
	}
	if it.ID == "" {
		return it, pdk.Errorf("bad_response", "Microsoft Graph answered an item without an id")
	}
	where := "/" + join(append([]string{d.prefix}, segs...)...)
	if wantFolder && it.Folder == nil {
		return it, pdk.Errorf("invalid_path", "%s is a file, not a folder: download it", where)
	}
	if !wantFolder && it.File == nil {
		return it, pdk.Errorf("invalid_path", "%s is a folder, not a file: browse it", where)
	}
	return it, nil
}

// browseDrive lists one page of the folder at segs.
func (c *client) browseDrive(d driveRef, segs []string, cursor string, limit int) (connector.Listing, error) {
	folder, err := c.item(d, segs, true)
	if err != nil {
		return connector.Listing{}, err
	}
	p, err := list[driveItem](c, d.itemAPI(segs)+"/children", top(limit), cursor)
	if err != nil {
		return connector.Listing{}, err
	}
	out := connector.Listing{Entries: []connector.Entry{}, Next: p.NextLink}
	base := join(append([]string{d.prefix}, segs...)...)
	for _, it := range p.Value {
		// A child that is the folder itself or its parent: the provider's
		// folders form a cycle; following it would never end.
		if it.ID == "" || it.ID == folder.ID || it.ID == folder.ParentReference.ID && folder.ParentReference.ID != "" {
			return connector.Listing{}, pdk.Errorf("bad_response", "Microsoft Graph listed folder %q inside itself (a folder cycle)", folder.Name)
		}
		if itemName(it.Name) != nil {
			continue // a name no path can address (.., a slash): not offered
		}
		out.Entries = append(out.Entries, itemEntry(it, join(base, it.Name)))
	}
	return out, nil
}

// limitOf is a download's bound: the caller's, at most the connector's.
func limitOf(n int64) int64 {
	if n <= 0 || n > maxBytes {
		return maxBytes
	}
	return n
}

// downloadDrive fetches the file at segs. Graph answers /content with a
// 302 to a pre-authenticated URL on a download host; the host's client
// follows it and drops the Authorization header on the way.
func (c *client) downloadDrive(d driveRef, segs []string, max int64) (connector.File, error) {
	if len(segs) == 0 {
		return connector.File{}, pdk.Errorf("invalid_path", "name a file to download")
	}
	limit := limitOf(max)
	it, err := c.item(d, segs, false)
	if err != nil {
		return connector.File{}, err
	}
	if it.Size > limit {
		return connector.File{}, pdk.Errorf("too_large", "%s is %d bytes, over the limit of %d", it.Name, it.Size, limit)
	}
	resp, err := c.do("GET", c.base+d.byID(it.ID)+"/content", nil, map[string]string{"Accept": "*/*"}, nil)
	if err != nil {
		return connector.File{}, err
	}
	if int64(len(resp.Body)) > limit {
		return connector.File{}, pdk.Errorf("too_large", "%s is over the limit of %d bytes", it.Name, limit)
	}
	mime := it.File.MIMEType
	if mime == "" {
		mime = resp.Headers["content-type"]
	}
	return connector.File{Name: it.Name, MIMEType: mime, Data: resp.Body}, nil
}

// uploadDrive stores a file in the folder at segs, with the conflict
// policy of the request mapped to Graph's @microsoft.graph.conflictBehavior
// (fail, replace, rename: the same three names). A file up to
// simpleUploadMax goes in one PUT …:/{name}:/content; a larger one through
// an upload session, chunk by chunk, so no request carries the whole file
// (Microsoft Graph, "Upload large files with an upload session").
func (c *client) uploadDrive(d driveRef, segs []string, r connector.UploadRequest) (connector.Entry, error) {
	if err := itemName(r.Name); err != nil {
		return connector.Entry{}, err
	}
	if r.Size > maxUpload {
		return connector.Entry{}, pdk.Errorf("too_large", "%s is %d bytes, over Graph's file size limit of %d", r.Name, r.Size, int64(maxUpload))
	}
	policy, ok := r.ConflictPolicy()
	if !ok {
		return connector.Entry{}, pdk.Errorf("invalid", "conflict is fail, replace or rename, not %q", r.Conflict)
	}
	folder, err := c.item(d, segs, true)
	if err != nil {
		return connector.Entry{}, err
	}
	ct := r.MIMEType
	if ct == "" {
		ct = "application/octet-stream"
	}
	name := r.Name
	if policy == wire.ConflictRename {
		// Graph's own rename numbers "name 1.ext"; every connector names
		// the copy "name (1).ext", so the connector picks the first free
		// name and stores it with fail (a name taken meanwhile is a
		// conflict, not an overwrite).
		if name, err = c.freeName(d, segs, r.Name); err != nil {
			return connector.Entry{}, err
		}
		policy = wire.ConflictFail
	}
	var it driveItem
	target := c.base + d.byID(folder.ID) + ":/" + url.PathEscape(name) + ":"
	if r.Size <= simpleUploadMax {
		u := target + "/content?" + url.Values{"@microsoft.graph.conflictBehavior": {policy}}.Encode()
		resp, err := connection.Send(connection.Request{Connection: c.conn, Method: "PUT", URL: u, Parts: []connection.Part{connection.Upload(0, r.Size)},
			Headers: map[string]string{"Content-Type": ct}}, statusError)
		if err != nil {
			return connector.Entry{}, conflictError(err, r.Name)
		}
		if err := json.Unmarshal(resp.Body, &it); err != nil {
			return connector.Entry{}, pdk.Errorf("bad_response", "Microsoft Graph answered the upload with something that is not its JSON: %v", err)
		}
	} else if it, err = c.uploadSession(target, name, policy, r.Size); err != nil {
		return connector.Entry{}, conflictError(err, r.Name)
	}
	if it.ID == "" || itemName(it.Name) != nil {
		return connector.Entry{}, pdk.Errorf("bad_response", "Microsoft Graph stored no item")
	}
	return itemEntry(it, join(append(append([]string{d.prefix}, segs...), it.Name)...)), nil
}

// maxRename bounds the names ConflictRename tries.
const maxRename = 100

// freeName is the first of name, "name (1).ext", "name (2).ext"… that no
// item of the folder at segs has.
func (c *client) freeName(d driveRef, segs []string, name string) (string, error) {
	for n := 0; n <= maxRename; n++ {
		cand := name
		if n > 0 {
			cand = wire.RenameCandidate(name, n)
		}
		var it driveItem
		err := c.get(d.itemAPI(append(segs[:len(segs):len(segs)], cand)), url.Values{"$select": {"id"}}, &it)
		var pe *pdk.Error
		if errors.As(err, &pe) && pe.Code == "not_found" {
			return cand, nil
		}
		if err != nil {
			return "", err
		}
	}
	return "", pdk.Errorf("exists", "%s and %d numbered copies exist there", name, maxRename)
}

// conflictError gives Graph's 409 nameAlreadyExists the code every
// connector answers for ConflictFail.
func conflictError(err error, name string) error {
	var e *pdk.Error
	if errors.As(err, &e) && e.Code == "conflict" {
		return pdk.Errorf("exists", "%s exists there (conflict=fail); pass conflict=replace or conflict=rename", name)
	}
	return err
}

const (
	// simpleUploadMax is the largest file sent in one PUT …/content. Graph
	// takes up to 250 MB that way, but a simple upload cannot resume: a
	// larger file goes through an upload session ("Upload or replace the
	// contents of a driveItem" recommends sessions above a few MB).
	simpleUploadMax = 4 << 20
	// maxUpload is Graph's file size limit for an upload session, 250 GB
	// ("Upload large files with an upload session"; OneDrive and
	// SharePoint's documented maximum file size); the host's own upload
	// setting is usually lower and applies first.
	maxUpload = 250_000_000_000
	// chunkSize is an upload session's fragment: Graph wants multiples of
	// 320 KiB (327,680 bytes), under 60 MiB, for every fragment but the
	// last ("Upload large files with an upload session"). The host reads
	// each from the workspace as it is sent; nothing here holds it.
	chunkSize = 32 * 320 << 10
	// maxResumes bounds the fragments sent again after failures in one
	// upload.
	maxResumes = 5
)

// uploadSession is Graph's resumable upload: createUploadSession, then the
// bytes PUT to its uploadUrl in fragments with Content-Range, each a range
// of the upload the host streams; after a failed fragment the session's
// state (GET uploadUrl) names the next expected range, and the upload
// resumes there. The uploadUrl is pre-authenticated: its requests go
// without the token (NoCredential), as Graph asks ("don't include the
// Authorization header" on the PUTs). A session that expired or vanished
// (404) is opened again once and the file sent from its start.
func (c *client) uploadSession(target, name, policy string, total int64) (driveItem, error) {
	for restarts := 0; ; restarts++ {
		it, err := c.sendSession(target, name, policy, total)
		var pe *pdk.Error
		if restarts == 0 && errors.As(err, &pe) && pe.Code == "session_gone" {
			continue
		}
		return it, err
	}
}

// sendSession opens one upload session and sends the file through it.
func (c *client) sendSession(target, name, policy string, total int64) (driveItem, error) {
	body, _ := json.Marshal(map[string]any{"item": map[string]any{"@microsoft.graph.conflictBehavior": policy, "name": name}})
	var sess uploadSessionState
	if _, err := c.do("POST", target+"/createUploadSession", body, map[string]string{"Content-Type": "application/json"}, &sess); err != nil {
		return driveItem{}, err
	}
	up, err := url.Parse(sess.UploadURL)
	if err != nil || up.User != nil || (up.Scheme != "https" && !strings.HasPrefix(c.base, up.Scheme+"://")) {
		return driveItem{}, pdk.Errorf("bad_response", "Microsoft Graph answered createUploadSession with no usable uploadUrl")
	}
	// A session's own answers: 404 is the session gone (expired), not a
	// missing item.
	refuse := func(resp connection.Response) error {
		if resp.Status == 404 {
			return pdk.Errorf("session_gone", "the upload session expired or was not found: %v", statusError(resp))
		}
		return statusError(resp)
	}
	off, resumes := int64(0), 0
	for {
		end := min(off+chunkSize, total)
		resp, err := connection.Send(connection.Request{Connection: c.conn, Method: "PUT", URL: sess.UploadURL, NoCredential: true,
			Parts:   []connection.Part{connection.Upload(off, end-off)},
			Headers: map[string]string{"Content-Range": fmt.Sprintf("bytes %d-%d/%d", off, end-1, total)}}, refuse)
		if err == nil {
			switch resp.Status {
			case 200, 201:
				var it driveItem
				if err := json.Unmarshal(resp.Body, &it); err != nil {
					return driveItem{}, pdk.Errorf("bad_response", "Microsoft Graph answered the last fragment with something that is not its JSON: %v", err)
				}
				return it, nil
			case 202:
				var st uploadSessionState
				if json.Unmarshal(resp.Body, &st) != nil {
					return driveItem{}, pdk.Errorf("bad_response", "Microsoft Graph answered a fragment with something that is not its JSON")
				}
				next, err := nextRange(st.NextExpectedRanges, total)
				if err != nil {
					return driveItem{}, err
				}
				off = next
				continue
			}
			err = pdk.Errorf("graph_error", "Microsoft Graph answered a fragment with HTTP %d", resp.Status)
		}
		var pe *pdk.Error
		if errors.As(err, &pe) && (pe.Code == "conflict" || pe.Code == "too_large" || pe.Code == "forbidden" || pe.Code == "session_gone") {
			return driveItem{}, err
		}
		// A failed fragment: ask the session where to go on.
		if resumes++; resumes > maxResumes {
			return driveItem{}, fmt.Errorf("upload session: gave up after %d failed fragments: %w", maxResumes, err)
		}
		st, serr := connection.Send(connection.Request{Connection: c.conn, Method: "GET", URL: sess.UploadURL, NoCredential: true,
			Headers: map[string]string{"Accept": "application/json"}}, refuse)
		if serr != nil {
			return driveItem{}, fmt.Errorf("upload session: status after a failed fragment (%v): %w", err, serr)
		}
		var state uploadSessionState
		if json.Unmarshal(st.Body, &state) != nil {
			return driveItem{}, pdk.Errorf("bad_response", "Microsoft Graph answered an upload session's status with something that is not its JSON")
		}
		if off, err = nextRange(state.NextExpectedRanges, total); err != nil {
			return driveItem{}, err
		}
	}
}

// uploadSessionState is an upload session as Graph describes it.
type uploadSessionState struct {
	UploadURL          string   `json:"uploadUrl"`
	NextExpectedRanges []string `json:"nextExpectedRanges"`
}

// nextRange is where the next fragment starts: the start of the first of
// the session's nextExpectedRanges ("26-" or "12345-55232").
func nextRange(ranges []string, total int64) (int64, error) {
	if len(ranges) == 0 {
		return 0, pdk.Errorf("bad_response", "Microsoft Graph's upload session expects no more bytes but stored no item")
	}
	from, _, _ := strings.Cut(ranges[0], "-")
	n, err := strconv.ParseInt(from, 10, 64)
	if err != nil || n < 0 || n >= total {
		return 0, pdk.Errorf("bad_response", "Microsoft Graph's upload session expects range %q of a %d-byte file", ranges[0], total)
	}
	return n, nil
}

// searchDrive runs search(q='…') over the drive. Search results carry no
// parent path in SharePoint, so each hit's path is found by walking up
// its parents (bounded, each folder fetched once).
func (c *client) searchDrive(d driveRef, q, cursor string, limit int) (connector.Listing, error) {
	q = strings.TrimSpace(q)
	if q == "" {
		return connector.Listing{}, pdk.Errorf("invalid", "search for some words")
	}
	path := d.api + "/root/search(q='" + url.PathEscape(strings.ReplaceAll(q, "'", "''")) + "')"
	p, err := list[driveItem](c, path, top(limit), cursor)
	if err != nil {
		return connector.Listing{}, err
	}
	out := connector.Listing{Entries: []connector.Entry{}, Next: p.NextLink}
	cache := map[string]driveItem{}
	for _, it := range p.Value {
		if itemName(it.Name) != nil {
			continue
		}
		rel, err := c.pathOf(d, it, cache)
		if err != nil {
			return connector.Listing{}, err
		}
		out.Entries = append(out.Entries, itemEntry(it, join(d.prefix, rel)))
	}
	return out, nil
}

// pathOf is an item's path below its drive's root. A hostile provider can
// make an item's parents a cycle (a parent id equal to a descendant's):
// the walk remembers the ids it passed and stops at maxDepth.
func (c *client) pathOf(d driveRef, it driveItem, cache map[string]driveItem) (string, error) {
	if p := it.ParentReference.Path; p != "" {
		if _, rel, ok := strings.Cut(p, "root:"); ok {
			if segs, err := segments(rel); err == nil {
				return join(append(segs, it.Name)...), nil
			}
		}
	}
	var segs []string
	seen := map[string]bool{it.ID: true}
	for parent, depth := it.ParentReference.ID, 0; parent != ""; depth++ {
		if depth >= maxDepth {
			return "", pdk.Errorf("bad_response", "Microsoft Graph nests %q deeper than %d folders", it.Name, maxDepth)
		}
		if seen[parent] {
			return "", pdk.Errorf("bad_response", "Microsoft Graph's folders above %q form a cycle (item %s is its own ancestor)", it.Name, parent)
		}
		seen[parent] = true
		p, ok := cache[parent]
		if !ok {
			if err := c.get(d.byID(parent), url.Values{"$select": {"id,name,parentReference,root"}}, &p); err != nil {
				return "", err
			}
			cache[parent] = p
		}
		if p.Root != nil || p.ParentReference.ID == "" {
			break
		}
		if itemName(p.Name) != nil {
			return "", pdk.Errorf("bad_response", "Microsoft Graph named a folder %q", p.Name)
		}
		segs = append([]string{p.Name}, segs...)
		parent = p.ParentReference.ID
	}
	return join(append(segs, it.Name)...), nil
}
