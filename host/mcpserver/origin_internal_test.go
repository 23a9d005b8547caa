package mcpserver

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

// TestCheckHostsOrigin: an origin is scheme, host and port; an Origin passes
// when it is the request's own or an allowed host with the port the operator
// wrote (the scheme's default when none).
func TestCheckHostsOrigin(t *testing.T) {
	s := &Server{d: Deps{Hosts: []string{"agents.example.com", "ui.example.com:8443"}}}
	h := s.checkHosts(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	for _, c := range []struct {
		host, origin string
		want         int
	}{
		{"127.0.0.1:8081", "", 200},
		{"127.0.0.1:8081", "http://127.0.0.1:8081", 200},
		{"127.0.0.1:8081", "http://127.0.0.1:8082", 403},
		{"127.0.0.1:8081", "http://localhost:8081", 403}, // another name is another origin
		{"localhost:8081", "http://localhost:8081", 200},
		{"localhost:8081", "http://localhost", 403},
		{"localhost", "http://localhost:80", 200},
		{"agents.example.com", "https://agents.example.com", 200},
		{"agents.example.com", "https://agents.example.com:443", 200},
		{"agents.example.com", "https://agents.example.com:8443", 403},
		{"agents.example.com", "https://ui.example.com:8443", 200},
		{"agents.example.com", "https://ui.example.com", 403},
		{"agents.example.com", "https://evil.example", 403},
		{"agents.example.com", "https://user@agents.example.com", 403},
		{"agents.example.com", "null", 403},
		{"agents.example.com", "file:///etc/passwd", 403},
		{"[::1]:8081", "http://[::1]:8081", 200},
		{"[::1]:8081", "http://[::1]:9000", 403},
		{"evil.example", "http://evil.example", 403}, // the Host itself is refused
	} {
		r := httptest.NewRequest("POST", "/mcp", nil)
		r.Host = c.host
		if c.origin != "" {
			r.Header.Set("Origin", c.origin)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != c.want {
			t.Errorf("Host %s, Origin %q: %d, want %d", c.host, c.origin, w.Code, c.want)
		}
	}
}
