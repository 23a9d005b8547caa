package mcpserver

import (
	"net/http"
	"strings"
)

// corsHeaders are the request headers a browser-based MCP client may send
// (the protocol's own, the bearer token, content negotiation and stream
// resumption); a preflight asking for others is answered without them, so
// the browser refuses the request.
var corsHeaders = map[string]bool{
	"authorization": true, "content-type": true, "accept": true,
	"mcp-session-id": true, "mcp-protocol-version": true, "last-event-id": true,
}

// cors lets the browser-based clients of the origins the operator listed
// (Deps.Origins) use the endpoint and its metadata: a preflight (OPTIONS
// with Access-Control-Request-Method) is answered before authentication,
// which it never carries, and responses name the origin and expose the
// session, protocol version and WWW-Authenticate headers the client must
// read. Credentials are bearer tokens, never cookies, so no
// Access-Control-Allow-Credentials. Other origins get no CORS headers (and
// are refused by checkHosts).
func (s *Server) cors(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		origin := r.Header.Get("Origin")
		if origin == "" || !s.origins[strings.ToLower(origin)] {
			next.ServeHTTP(w, r)
			return
		}
		h := w.Header()
		h.Add("Vary", "Origin")
		h.Set("Access-Control-Allow-Origin", origin)
		h.Set("Access-Control-Expose-Headers", "Mcp-Session-Id, Mcp-Protocol-Version, WWW-Authenticate")
		if r.Method != http.MethodOptions || r.Header.Get("Access-Control-Request-Method") == "" {
			next.ServeHTTP(w, r)
			return
		}
		var allowed []string
		for _, v := range r.Header.Values("Access-Control-Request-Headers") {
			for _, name := range strings.Split(v, ",") {
				if name = strings.TrimSpace(name); corsHeaders[strings.ToLower(name)] {
					allowed = append(allowed, name)
				}
			}
		}
		h.Add("Vary", "Access-Control-Request-Method, Access-Control-Request-Headers")
		h.Set("Access-Control-Allow-Methods", "GET, POST, DELETE")
		if len(allowed) > 0 {
			h.Set("Access-Control-Allow-Headers", strings.Join(allowed, ", "))
		}
		h.Set("Access-Control-Max-Age", "600")
		w.WriteHeader(http.StatusNoContent)
	})
}
