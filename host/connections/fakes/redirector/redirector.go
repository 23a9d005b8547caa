// Package redirector is a hostile provider for tests of redirect handling:
// reached under any name (the tests resolve several to its loopback
// address), it answers /to?url=U&status=N with a redirect to U and
// everything else with what it received, and records every request: the
// name it was reached as, the method, the path, the Authorization header
// and the body.
package redirector

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"sync"
)

// Request is one request the server received.
type Request struct {
	Host, Method, Path, Authorization, Body string
}

// Server is the fake provider; Close it when done.
type Server struct {
	*httptest.Server
	mu   sync.Mutex
	reqs []Request
}

// New starts a server on loopback.
func New() *Server {
	s := &Server{}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	return s
}

// Port is the server's port, which every name it is reached as shares.
func (s *Server) Port() string {
	u, _ := url.Parse(s.URL)
	return u.Port()
}

// To is the path of a redirect to target with status (302, 307, ...).
func To(target string, status int) string {
	return "/to?" + url.Values{"url": {target}, "status": {strconv.Itoa(status)}}.Encode()
}

// Requests returns the requests received so far.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.reqs...)
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	host, _, err := net.SplitHostPort(r.Host)
	if err != nil {
		host = r.Host
	}
	s.mu.Lock()
	s.reqs = append(s.reqs, Request{Host: host, Method: r.Method, Path: r.URL.Path, Authorization: r.Header.Get("Authorization"), Body: string(body)})
	s.mu.Unlock()
	if r.URL.Path == "/to" {
		status, err := strconv.Atoi(r.URL.Query().Get("status"))
		if err != nil || status < 300 || status > 399 {
			status = http.StatusFound
		}
		w.Header().Set("Location", r.URL.Query().Get("url"))
		w.WriteHeader(status)
		return
	}
	fmt.Fprintf(w, "%s %s%s body=%q", r.Method, host, r.URL.Path, body)
}
