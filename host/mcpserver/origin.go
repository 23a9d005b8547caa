package mcpserver

import (
	"net"
	"net/http"
	"net/url"
	"strings"
)

// checkHosts refuses requests whose Host header names a host the operator
// did not allow (a DNS-rebinding attack: a page of evil.example whose name
// now resolves to 127.0.0.1 sends Host: evil.example), and browser requests
// from another origin. It runs before authentication, so a refused request
// learns nothing. The SDK's own check (loopback listener, non-loopback Host)
// stays on behind it.
//
// An origin is scheme, host and port: a page served by another program on
// the same machine (http://localhost:3000) is another origin than this
// server (http://localhost:8081), as browsers see it. So an Origin passes
// only when it is the request's own (its host and port those of the Host
// header) or names an allowed host with the port the operator wrote (a host
// allowed without a port: that scheme's default port), or is one of the
// origins listed for CORS.
func (s *Server) checkHosts(next http.Handler) http.Handler {
	allowed := map[string]bool{}
	for _, h := range s.d.Hosts {
		allowed[strings.ToLower(h)] = true
	}
	hostOK := func(hostport string) bool {
		hostport = strings.ToLower(hostport)
		if allowed[hostport] {
			return true
		}
		host := hostport
		if h, _, err := net.SplitHostPort(hostport); err == nil {
			host = h
		}
		host = strings.Trim(host, "[]")
		return allowed[host] || host == "localhost" || isLoopbackIP(host)
	}
	originOK := func(origin, requestHost string) bool {
		u, err := url.Parse(origin)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil || (u.Path != "" && u.Path != "/") {
			return false
		}
		o := withPort(u.Host, u.Scheme)
		if o == withPort(requestHost, u.Scheme) {
			return true // same origin (the scheme cannot be told behind a proxy: the port can)
		}
		for h := range allowed {
			if o == withPort(h, u.Scheme) {
				return true
			}
		}
		return false
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !hostOK(r.Host) {
			http.Error(w, "Forbidden: the Host header names a host this server does not serve (DNS rebinding protection)", http.StatusForbidden)
			return
		}
		if o := r.Header.Get("Origin"); o != "" && !s.origins[strings.ToLower(o)] && !originOK(o, r.Host) {
			http.Error(w, "Forbidden: requests from other origins are refused", http.StatusForbidden)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// withPort is hostport in lower case with its port, the scheme's default
// when it names none, so that "example.com" and "example.com:443" compare
// equal for https.
func withPort(hostport, scheme string) string {
	hostport = strings.ToLower(hostport)
	if _, _, err := net.SplitHostPort(hostport); err == nil {
		return hostport
	}
	port := "80"
	if scheme == "https" {
		port = "443"
	}
	return net.JoinHostPort(strings.Trim(hostport, "[]"), port)
}

func isLoopbackIP(s string) bool {
	ip := net.ParseIP(s)
	return ip != nil && ip.IsLoopback()
}
