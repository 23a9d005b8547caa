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
// whose Origin is another site's. It runs before authentication, so a
// refused request learns nothing. The SDK's own check (loopback listener,
// non-loopback Host) stays on behind it.
func (s *Server) checkHosts(next http.Handler) http.Handler {
	allowed := map[string]bool{}
	for _, h := range s.d.Hosts {
		allowed[strings.ToLower(h)] = true
	}
	ok := func(hostport string) bool {
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
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !ok(r.Host) {
			http.Error(w, "Forbidden: the Host header names a host this server does not serve (DNS rebinding protection)", http.StatusForbidden)
			return
		}
		if o := r.Header.Get("Origin"); o != "" {
			u, err := url.Parse(o)
			if err != nil || (u.Scheme != "http" && u.Scheme != "https") || !ok(u.Host) {
				http.Error(w, "Forbidden: requests from other origins are refused", http.StatusForbidden)
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

func isLoopbackIP(s string) bool {
	ip := net.ParseIP(s)
	return ip != nil && ip.IsLoopback()
}
