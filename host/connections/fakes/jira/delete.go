package jira

import "net/http"

// deleteAttachment is DELETE /rest/api/3/attachment/{id}: 204 No Content,
// or 404 when there is no such attachment (Jira Cloud REST v3, "Delete
// attachment").
func (s *Server) deleteAttachment(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, is := range s.issues {
		for i, a := range is.Attachments {
			if a.ID == id {
				is.Attachments = append(is.Attachments[:i:i], is.Attachments[i+1:]...)
				w.WriteHeader(http.StatusNoContent)
				return
			}
		}
	}
	jiraError(w, http.StatusNotFound, "The attachment with id '"+id+"' does not exist")
}
