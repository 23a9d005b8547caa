package google

import (
	"bytes"
	"crypto/md5"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
)

// MIME types of Drive's own kinds.
const (
	FolderType       = "application/vnd.google-apps.folder"
	DocumentType     = "application/vnd.google-apps.document"
	SpreadsheetType  = "application/vnd.google-apps.spreadsheet"
	PresentationType = "application/vnd.google-apps.presentation"
	DrawingType      = "application/vnd.google-apps.drawing"
	ShortcutType     = "application/vnd.google-apps.shortcut"
	// RootID is the id of "My Drive" (alias "root").
	RootID = "0AFakeRootFolderUk9PVA"
)

// exportable are the export formats Drive documents for each
// Google-native type (a subset of "Export MIME types for Google Workspace
// documents").
var exportable = map[string][]string{
	DocumentType: {"application/pdf", "application/vnd.openxmlformats-officedocument.wordprocessingml.document", "text/plain", "text/html",
		"application/rtf", "application/vnd.oasis.opendocument.text", "application/epub+zip", "text/markdown", "application/zip"},
	SpreadsheetType: {"application/pdf", "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet", "text/csv",
		"application/x-vnd.oasis.opendocument.spreadsheet", "text/tab-separated-values", "application/zip"},
	PresentationType: {"application/pdf", "application/vnd.openxmlformats-officedocument.presentationml.presentation", "text/plain",
		"application/vnd.oasis.opendocument.presentation"},
	DrawingType: {"application/pdf", "image/png", "image/jpeg", "image/svg+xml"},
}

// File is a Drive file or folder.
type File struct {
	ID, Name, MIMEType, Description string
	Parents                         []string
	// Content is a binary file's bytes.
	Content []byte
	// Exports are a Google-native document's renditions by MIME type (the
	// fake converts nothing itself); Text is its text (text/plain export
	// and full-text search).
	Exports map[string][]byte
	Text    string
	// Target is a shortcut's target id.
	Target   string
	Trashed  bool
	Modified time.Time
}

func native(mimeType string) bool { return strings.HasPrefix(mimeType, "application/vnd.google-apps.") }

func (s *Server) newID() string {
	s.seq++
	return fmt.Sprintf("1Fk%05dD%s", s.seq, strings.Repeat("x", 20))
}

// Add stores f (an id is made if it has none; no parents means My Drive)
// and returns its id.
func (s *Server) Add(f File) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.add(f)
}

func (s *Server) add(f File) string {
	if f.ID == "" {
		f.ID = s.newID()
	}
	if len(f.Parents) == 0 {
		f.Parents = []string{RootID}
	}
	if f.Modified.IsZero() {
		f.Modified = epoch
	}
	s.files[f.ID] = &f
	s.order = append(s.order, f.ID)
	return f.ID
}

// AddFolder adds a folder under parent ("" for My Drive) and returns its id.
func (s *Server) AddFolder(name, parent string) string {
	f := File{Name: name, MIMEType: FolderType}
	if parent != "" {
		f.Parents = []string{parent}
	}
	return s.Add(f)
}

// SetParents replaces a file's parents (a hostile drive can make cycles).
func (s *Server) SetParents(id string, parents ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if f, ok := s.files[id]; ok {
		f.Parents = slices.Clone(parents)
	}
}

// File returns a copy of file id (false if none).
func (s *Server) File(id string) (File, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f, ok := s.files[id]
	if !ok {
		return File{}, false
	}
	return *f, true
}

// Uploads returns the files created through the API.
func (s *Server) Uploads() []File {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.uploads)
}

// lookup resolves an id or the alias "root".
func (s *Server) lookup(id string) (*File, bool) {
	if id == "root" {
		id = RootID
	}
	f, ok := s.files[id]
	return f, ok
}

func size(f *File) int64 { return int64(len(f.Content)) }

// resource is the file's full JSON resource.
func resource(f *File) map[string]any {
	m := map[string]any{"kind": "drive#file", "id": f.ID, "name": f.Name, "mimeType": f.MIMEType, "trashed": f.Trashed,
		"parents": f.Parents, "modifiedTime": f.Modified.UTC().Format("2006-01-02T15:04:05.000Z"),
		"createdTime": f.Modified.UTC().Format("2006-01-02T15:04:05.000Z"), "starred": false}
	if f.ID == RootID {
		delete(m, "parents")
	}
	if f.Description != "" {
		m["description"] = f.Description
	}
	switch {
	case f.MIMEType == ShortcutType:
		m["shortcutDetails"] = map[string]string{"targetId": f.Target}
	case f.MIMEType == FolderType:
		m["webViewLink"] = "https://drive.google.com/drive/folders/" + f.ID
	case native(f.MIMEType):
		m["webViewLink"] = "https://docs.google.com/document/d/" + f.ID + "/edit"
		links := map[string]string{}
		for _, t := range exportable[f.MIMEType] {
			links[t] = "https://docs.google.com/feeds/download/documents/export/Export?id=" + f.ID + "&exportFormat=" + t
		}
		m["exportLinks"] = links
	default:
		sum := md5.Sum(f.Content)
		m["size"] = strconv.FormatInt(size(f), 10) // int64 travels as a string
		m["md5Checksum"] = hex.EncodeToString(sum[:])
		m["webViewLink"] = "https://drive.google.com/file/d/" + f.ID + "/view?usp=drivesdk"
		m["webContentLink"] = "https://drive.google.com/uc?id=" + f.ID + "&export=download"
	}
	return m
}

// fileFields are the fields a files(...) or a get selection may name.
var fileFields = []string{"kind", "id", "name", "mimeType", "description", "parents", "trashed", "starred", "modifiedTime", "createdTime",
	"size", "md5Checksum", "webViewLink", "webContentLink", "exportLinks", "shortcutDetails"}

var defaultFileFields = "kind,id,name,mimeType"

// selection is a parsed fields parameter: names to sub-selections (nil: all of it).
type selection map[string]selection

// parseFields reads Google's partial-response syntax: a,b(c,d),e/f, "*".
func parseFields(s string) (selection, error) {
	out := selection{}
	s = strings.ReplaceAll(s, " ", "")
	for len(s) > 0 {
		i := strings.IndexAny(s, ",(/")
		name := s
		if i >= 0 {
			name = s[:i]
		}
		if name == "" {
			return nil, fmt.Errorf("invalid field selection %q", s)
		}
		var sub selection
		rest := ""
		switch {
		case i < 0:
		case s[i] == ',':
			rest = s[i+1:]
		case s[i] == '(':
			depth, j := 0, i
			for ; j < len(s); j++ {
				if s[j] == '(' {
					depth++
				} else if s[j] == ')' {
					if depth--; depth == 0 {
						break
					}
				}
			}
			if j >= len(s) {
				return nil, fmt.Errorf("invalid field selection %q: unbalanced parenthesis", s)
			}
			var err error
			if sub, err = parseFields(s[i+1 : j]); err != nil {
				return nil, err
			}
			rest = strings.TrimPrefix(s[j+1:], ",")
		case s[i] == '/':
			end := strings.IndexByte(s[i+1:], ',')
			inner := s[i+1:]
			if end >= 0 {
				inner, rest = s[i+1:i+1+end], s[i+2+end:]
			}
			var err error
			if sub, err = parseFields(inner); err != nil {
				return nil, err
			}
		}
		out[name] = sub
		s = rest
	}
	return out, nil
}

// checkFile verifies a selection of a file's fields.
func checkFile(sel selection) error {
	for k := range sel {
		if k != "*" && !slices.Contains(fileFields, k) {
			return fmt.Errorf("invalid field selection %s", k)
		}
	}
	return nil
}

func pick(m map[string]any, sel selection) map[string]any {
	if sel == nil || sel["*"] != nil || hasStar(sel) {
		return m
	}
	out := map[string]any{}
	for k := range sel {
		if v, ok := m[k]; ok {
			out[k] = v
		}
	}
	return out
}

func hasStar(sel selection) bool {
	_, ok := sel["*"]
	return ok
}

func (s *Server) listFiles(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	fields := q.Get("fields")
	if fields == "" {
		fields = "kind,incompleteSearch,nextPageToken,files(" + defaultFileFields + ")"
	}
	sel, err := parseFields(fields)
	if err == nil {
		for k, sub := range sel {
			switch k {
			case "kind", "incompleteSearch", "nextPageToken", "*":
			case "files":
				err = checkFile(sub)
			default:
				err = fmt.Errorf("invalid field selection %s", k)
			}
		}
	}
	if err != nil {
		fieldsError(w, err)
		return
	}
	pageSize := 100
	if v := q.Get("pageSize"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 1000 {
			invalid(w, "pageSize", fmt.Sprintf("Invalid value '%s'. Values must be within the range: [1, 1000]", v))
			return
		}
		pageSize = n
	}
	expr, err := parseQuery(q.Get("q"))
	if err != nil {
		invalid(w, "q", "Invalid Value")
		return
	}
	if q.Get("orderBy") != "" && strings.Contains(q.Get("q"), "fullText") {
		googleError(w, http.StatusBadRequest, "global", "badRequest",
			"Sorting is not supported for queries with fullText terms. Results are always in descending relevance order.", "INVALID_ARGUMENT", "parameter", "orderBy")
		return
	}
	offset := 0
	if tok := q.Get("pageToken"); tok != "" {
		if offset, err = readPageToken(tok, q.Get("q")); err != nil {
			invalid(w, "pageToken", "Invalid Value")
			return
		}
		if s.pageFailures.Take() {
			googleError(w, http.StatusInternalServerError, "global", "backendError", "Backend Error", "INTERNAL")
			return
		}
	}
	if s.MaxPage > 0 {
		pageSize = min(pageSize, s.MaxPage)
	}
	s.mu.Lock()
	var hits []*File
	for _, id := range s.order {
		f := s.files[id]
		if f.ID != RootID && expr.match(f) {
			hits = append(hits, f)
		}
	}
	if ob := q.Get("orderBy"); strings.Contains(ob, "name") {
		folderFirst := strings.HasPrefix(ob, "folder")
		slices.SortStableFunc(hits, func(a, b *File) int {
			if folderFirst && (a.MIMEType == FolderType) != (b.MIMEType == FolderType) {
				if a.MIMEType == FolderType {
					return -1
				}
				return 1
			}
			return strings.Compare(strings.ToLower(a.Name), strings.ToLower(b.Name))
		})
	}
	page := []map[string]any{}
	for i := offset; i < len(hits) && i < offset+pageSize; i++ {
		page = append(page, pick(resource(hits[i]), sel["files"]))
	}
	s.mu.Unlock()
	out := map[string]any{"kind": "drive#fileList", "incompleteSearch": false, "files": page}
	if offset+pageSize < len(hits) {
		out["nextPageToken"] = pageToken(offset+pageSize, q.Get("q"))
	}
	writeJSON(w, pick(out, sel))
}

// pageToken is opaque to clients: the offset bound to the query it pages.
func pageToken(offset int, query string) string {
	sum := md5.Sum([]byte(query))
	return base64.RawURLEncoding.EncodeToString([]byte(fmt.Sprintf("%d:%x", offset, sum[:6])))
}

func readPageToken(tok, query string) (int, error) {
	b, err := base64.RawURLEncoding.DecodeString(tok)
	if err != nil {
		return 0, err
	}
	n, h, ok := strings.Cut(string(b), ":")
	sum := md5.Sum([]byte(query))
	off, err := strconv.Atoi(n)
	if !ok || err != nil || off < 0 || h != fmt.Sprintf("%x", sum[:6]) {
		return 0, fmt.Errorf("bad page token")
	}
	return off, nil
}

func (s *Server) getFile(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	q := r.URL.Query()
	s.mu.Lock()
	f, ok := s.lookup(id)
	var cp File
	if ok {
		cp = *f
	}
	s.mu.Unlock()
	if !ok {
		notFound(w, "File not found: "+id+".", "fileId")
		return
	}
	if q.Get("alt") == "media" {
		if native(cp.MIMEType) {
			googleError(w, http.StatusForbidden, "global", "fileNotDownloadable",
				"Only files with binary content can be downloaded. Use Export with Docs Editors files.", "PERMISSION_DENIED", "parameter", "alt")
			return
		}
		if s.echoed(w, r) {
			return
		}
		w.Header().Set("Content-Type", cp.MIMEType)
		w.Header().Set("Content-Length", strconv.Itoa(len(cp.Content)))
		_, _ = w.Write(cp.Content)
		return
	}
	fields := q.Get("fields")
	if fields == "" {
		fields = defaultFileFields
	}
	sel, err := parseFields(fields)
	if err == nil {
		err = checkFile(sel)
	}
	if err != nil {
		fieldsError(w, err)
		return
	}
	writeJSON(w, pick(resource(&cp), sel))
}

// exportParams are the query parameters files.export takes: its own
// (mimeType; Drive API v3 reference, files.export, lists no
// supportsAllDrives) and the standard ones every Google API takes. Google's
// APIs refuse a query parameter they do not know with 400 INVALID_ARGUMENT
// ("Unknown name ...: Cannot bind query parameter").
var exportParams = []string{"mimeType", "alt", "fields", "key", "access_token", "oauth_token", "prettyPrint", "quotaUser", "callback", "$.xgafv", "upload_protocol", "uploadType"}

func (s *Server) exportFile(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	for k := range r.URL.Query() {
		if !slices.Contains(exportParams, k) {
			googleError(w, http.StatusBadRequest, "global", "badRequest", "Invalid JSON payload received. Unknown name \""+k+"\": Cannot bind query parameter. Field '"+k+"' could not be found in request message.", "INVALID_ARGUMENT")
			return
		}
	}
	want := r.URL.Query().Get("mimeType")
	s.mu.Lock()
	f, ok := s.lookup(id)
	var cp File
	if ok {
		cp = *f
	}
	limit := s.exportLimit
	s.mu.Unlock()
	switch {
	case !ok:
		notFound(w, "File not found: "+id+".", "fileId")
		return
	case want == "":
		googleError(w, http.StatusBadRequest, "global", "required", "Required parameter: mimeType", "INVALID_ARGUMENT", "parameter", "mimeType")
		return
	case !native(cp.MIMEType) || cp.MIMEType == FolderType:
		googleError(w, http.StatusForbidden, "global", "fileNotExportable", "Export only supports Docs Editors files.", "PERMISSION_DENIED")
		return
	case !slices.Contains(exportable[cp.MIMEType], want):
		googleError(w, http.StatusBadRequest, "global", "badRequest", "The requested conversion is not supported.", "INVALID_ARGUMENT", "parameter", "mimeType")
		return
	}
	data, ok := cp.Exports[want]
	if !ok && want == "text/plain" {
		data, ok = []byte(cp.Text), true
	}
	if !ok {
		googleError(w, http.StatusInternalServerError, "global", "internalError", "Internal Error", "INTERNAL")
		return
	}
	if len(data) > limit {
		googleError(w, http.StatusForbidden, "global", "exportSizeLimitExceeded", "This file is too large to be exported.", "PERMISSION_DENIED")
		return
	}
	if s.echoed(w, r) {
		return
	}
	w.Header().Set("Content-Type", want)
	_, _ = w.Write(data)
}

// metadata is what an upload's JSON part may set.
type metadata struct {
	Name        string   `json:"name"`
	MIMEType    string   `json:"mimeType"`
	Parents     []string `json:"parents"`
	Description string   `json:"description"`
}

// create stores an uploaded file and answers its resource.
func (s *Server) create(w http.ResponseWriter, fields string, md metadata, mediaType string, data []byte) {
	if md.MIMEType == "" {
		md.MIMEType = mediaType
	}
	if md.MIMEType == "" {
		md.MIMEType = "application/octet-stream"
	}
	if md.Name == "" {
		md.Name = "Untitled"
	}
	if len(md.Parents) > 1 {
		googleError(w, http.StatusForbidden, "global", "cannotAddParent", "Increasing the number of parents is not allowed", "PERMISSION_DENIED")
		return
	}
	s.mu.Lock()
	for i, p := range md.Parents {
		f, ok := s.lookup(p)
		if !ok || f.MIMEType != FolderType {
			s.mu.Unlock()
			notFound(w, "File not found: "+p+".", "fileId")
			return
		}
		md.Parents[i] = f.ID
	}
	id := s.add(File{Name: md.Name, MIMEType: md.MIMEType, Description: md.Description, Parents: md.Parents, Content: data, Modified: time.Now().UTC()})
	f := *s.files[id]
	s.uploads = append(s.uploads, f)
	s.mu.Unlock()
	if fields == "" {
		fields = defaultFileFields
	}
	sel, err := parseFields(fields)
	if err != nil {
		sel = nil
	}
	writeJSON(w, pick(resource(&f), sel))
}

// session is a resumable upload in progress.
type session struct {
	md        metadata
	fields    string
	mediaType string
	total     int64
	data      []byte
	// update is the id of the file whose content the session replaces
	// (files.update); "" creates a file.
	update string
}

// createFile is files.create on the upload URI: uploadType media,
// multipart (a JSON metadata part and the media, multipart/related) or
// resumable (metadata now, the bytes by PUT to the session URI).
func (s *Server) createFile(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		invalid(w, "body", "unreadable body")
		return
	}
	switch r.URL.Query().Get("uploadType") {
	case "media":
		s.create(w, r.URL.Query().Get("fields"), metadata{}, r.Header.Get("Content-Type"), body)
	case "multipart":
		mt, params, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
		if err != nil || mt != "multipart/related" || params["boundary"] == "" {
			googleError(w, http.StatusBadRequest, "global", "badContent", "Invalid multipart request with 0 mime parts.", "INVALID_ARGUMENT")
			return
		}
		mr := multipart.NewReader(bytes.NewReader(body), params["boundary"])
		var parts [][]byte
		var types []string
		for {
			p, err := mr.NextPart()
			if err == io.EOF {
				break
			}
			if err != nil {
				googleError(w, http.StatusBadRequest, "global", "badContent", "Malformed multipart body.", "INVALID_ARGUMENT")
				return
			}
			b, _ := io.ReadAll(p)
			parts, types = append(parts, b), append(types, p.Header.Get("Content-Type"))
		}
		if len(parts) != 2 {
			googleError(w, http.StatusBadRequest, "global", "badContent", fmt.Sprintf("Invalid multipart request with %d mime parts.", len(parts)), "INVALID_ARGUMENT")
			return
		}
		var md metadata
		if mt, _, _ := mime.ParseMediaType(types[0]); mt != "application/json" || json.Unmarshal(parts[0], &md) != nil {
			googleError(w, http.StatusBadRequest, "global", "badContent", "Metadata part is not JSON.", "INVALID_ARGUMENT")
			return
		}
		s.mu.Lock()
		limit := s.multipartLimit
		s.mu.Unlock()
		if len(parts[1]) > limit {
			googleError(w, http.StatusRequestEntityTooLarge, "global", "uploadTooLarge", "Media larger than the multipart limit; use a resumable upload.", "INVALID_ARGUMENT")
			return
		}
		s.create(w, r.URL.Query().Get("fields"), md, types[1], parts[1])
	case "resumable":
		var md metadata
		if len(body) > 0 && json.Unmarshal(body, &md) != nil {
			googleError(w, http.StatusBadRequest, "global", "parseError", "Parse Error", "INVALID_ARGUMENT")
			return
		}
		total := int64(-1)
		if v := r.Header.Get("X-Upload-Content-Length"); v != "" {
			if total, err = strconv.ParseInt(v, 10, 64); err != nil || total < 0 {
				invalid(w, "X-Upload-Content-Length", "Invalid Value")
				return
			}
		}
		s.mu.Lock()
		s.seq++
		sid := fmt.Sprintf("ABPtcPp%08d", s.seq)
		s.sessions[sid] = &session{md: md, fields: r.URL.Query().Get("fields"), mediaType: r.Header.Get("X-Upload-Content-Type"), total: total}
		s.mu.Unlock()
		scheme := "http"
		if r.TLS != nil {
			scheme = "https"
		}
		w.Header().Set("Location", scheme+"://"+r.Host+"/upload/drive/v3/files?uploadType=resumable&upload_id="+sid)
		w.WriteHeader(http.StatusOK)
	default:
		invalid(w, "uploadType", "Invalid Value")
	}
}

// fieldsError answers a bad fields selection as Google does.
func fieldsError(w http.ResponseWriter, err error) {
	msg := err.Error()
	msg = strings.ToUpper(msg[:1]) + msg[1:]
	googleError(w, http.StatusBadRequest, "global", "invalidParameter", msg, "INVALID_ARGUMENT", "parameter", "fields")
}
