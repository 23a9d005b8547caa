package google

import (
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"
)

// Resumable uploads as Google documents them in "Perform a resumable
// upload" (developers.google.com/drive/api/guides/manage-uploads#resumable):
//   - the session URI takes the bytes in one PUT or in chunks, each with
//     Content-Range "bytes {first}-{last}/{total}"; every chunk but the
//     last is a multiple of 256 KiB (262,144 bytes);
//   - a chunk that leaves the upload incomplete answers 308 Resume
//     Incomplete with a Range header "bytes=0-{last received}" (no Range
//     when nothing was received);
//   - after an interruption the client asks for the status with an empty
//     PUT and Content-Range "bytes */{total}": 308 with the Range again,
//     or 200/201 with the file when it is complete; it resumes at the byte
//     after the Range;
//   - files.update (PATCH /upload/drive/v3/files/{id}?uploadType=resumable)
//     opens a session that replaces the file's content.

// ChunkMultiple is the 256 KiB every chunk but the last is a multiple of.
const ChunkMultiple = 256 << 10

// FailChunk makes the n-th chunk PUT from now (1 for the next) end as a
// cut connection would: the session keeps a whole number of 256 KiB of
// it and the answer is a 500, one of the answers after which "Perform a
// resumable upload" has the client ask for the status and resume (a 503
// would be retried as it is by the host first, TestServerBusyRetried).
func (s *Server) FailChunk(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failChunk = s.chunks + n
}

// Chunks reports how many PUTs the resumable session URIs received
// (status queries included).
func (s *Server) Chunks() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.chunks
}

// updateFile is files.update with uploadType=resumable: a session whose
// bytes become the file's new content.
func (s *Server) updateFile(w http.ResponseWriter, r *http.Request) {
	if r.URL.Query().Get("uploadType") != "resumable" {
		invalid(w, "uploadType", "Invalid Value")
		return
	}
	id := r.PathValue("id")
	s.mu.Lock()
	f, ok := s.lookup(id)
	if !ok || f.MIMEType == FolderType {
		s.mu.Unlock()
		notFound(w, "File not found: "+id+".", "fileId")
		return
	}
	s.seq++
	sid := fmt.Sprintf("ABPtcPu%08d", s.seq)
	total := int64(-1)
	if v := r.Header.Get("X-Upload-Content-Length"); v != "" {
		total, _ = strconv.ParseInt(v, 10, 64)
	}
	s.sessions[sid] = &session{fields: r.URL.Query().Get("fields"), mediaType: r.Header.Get("X-Upload-Content-Type"), total: total, update: f.ID}
	s.mu.Unlock()
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	w.Header().Set("Location", scheme+"://"+r.Host+"/upload/drive/v3/files/"+f.ID+"?uploadType=resumable&upload_id="+sid)
	w.WriteHeader(http.StatusOK)
}

// resumeUpload takes a resumable session's bytes: the whole body, a chunk
// with Content-Range: bytes a-b/total (308 until complete), or a status
// query (bytes */total).
func (s *Server) resumeUpload(w http.ResponseWriter, r *http.Request) {
	sid := r.URL.Query().Get("upload_id")
	body, err := io.ReadAll(r.Body)
	if err != nil {
		invalid(w, "body", "unreadable body")
		return
	}
	if s.failPuts.Take() {
		googleError(w, http.StatusServiceUnavailable, "global", "backendError", "Backend Error", "UNAVAILABLE")
		return
	}
	s.mu.Lock()
	s.chunks++
	ss, ok := s.sessions[sid]
	if !ok || (ss.update != "" && r.PathValue("id") != ss.update) {
		s.mu.Unlock()
		notFound(w, "Upload session not found.", "upload_id")
		return
	}
	incomplete := func() {
		n := len(ss.data)
		s.mu.Unlock()
		if n > 0 {
			w.Header().Set("Range", fmt.Sprintf("bytes=0-%d", n-1))
		}
		w.WriteHeader(308)
	}
	start, total := int64(len(ss.data)), ss.total
	cr := r.Header.Get("Content-Range")
	var t int64
	if n, _ := fmt.Sscanf(cr, "bytes */%d", &t); cr != "" && n == 1 && len(body) == 0 {
		// A status query.
		if total < 0 || int64(len(ss.data)) < total {
			incomplete()
			return
		}
		s.mu.Unlock()
		invalid(w, "Content-Range", "The upload is complete")
		return
	}
	if cr != "" {
		var a, b int64
		if n, _ := fmt.Sscanf(cr, "bytes %d-%d/%d", &a, &b, &t); n != 3 || a != start || b-a+1 != int64(len(body)) || (total >= 0 && t != total) {
			s.mu.Unlock()
			invalid(w, "Content-Range", "Invalid Content-Range")
			return
		}
		if b+1 < t && len(body)%ChunkMultiple != 0 {
			s.mu.Unlock()
			invalid(w, "Content-Range", "Chunk size must be a multiple of 256 KiB")
			return
		}
		total = t
		ss.total = t
	} else if total < 0 {
		total = int64(len(body))
	}
	if s.failChunk > 0 && s.chunks == s.failChunk {
		s.failChunk = 0
		keep := len(body) / 2 / ChunkMultiple * ChunkMultiple
		ss.data = append(ss.data, body[:keep]...)
		s.mu.Unlock()
		googleError(w, http.StatusInternalServerError, "global", "backendError", "Backend Error", "INTERNAL")
		return
	}
	ss.data = append(ss.data, body...)
	if int64(len(ss.data)) > total && total >= 0 {
		delete(s.sessions, sid)
		s.mu.Unlock()
		invalid(w, "Content-Range", "More bytes than announced")
		return
	}
	if int64(len(ss.data)) < total {
		incomplete()
		return
	}
	delete(s.sessions, sid)
	if ss.update == "" {
		s.mu.Unlock()
		s.create(w, ss.fields, ss.md, ss.mediaType, ss.data)
		return
	}
	f, ok := s.lookup(ss.update)
	if !ok {
		s.mu.Unlock()
		notFound(w, "File not found: "+ss.update+".", "fileId")
		return
	}
	f.Content, f.Modified = ss.data, time.Now().UTC()
	s.uploads = append(s.uploads, *f)
	cp := *f
	s.mu.Unlock()
	fields := ss.fields
	if fields == "" {
		fields = defaultFileFields
	}
	sel, err := parseFields(fields)
	if err != nil {
		sel = nil
	}
	writeJSON(w, pick(resource(&cp), sel))
}
