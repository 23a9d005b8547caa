// Package wire declares the documents of the host capability "connection",
// shared by the host (package connections) and the guest (pdk/connection).
package wire

// Request is one HTTP request a connector sends with a connection's
// credentials. The plugin names the connection; the host attaches the
// credential, which the plugin never sees.
type Request struct {
	// Connection is the id of the caller's connection to use.
	Connection string `json:"connection"`
	Method     string `json:"method,omitempty"`
	URL        string `json:"url"`
	// Headers are sent as given, except credentials (Authorization,
	// Cookie, Proxy-Authorization), which only the host sets.
	Headers map[string]string `json:"headers,omitempty"`
	Body    []byte            `json:"body,omitempty"`
	// Parts, when set, is the body in place of Body: literal bytes and
	// ranges of the file the running upload sends, which the host reads
	// from the workspace and streams itself, so a file never passes
	// through the plugin (a multipart body is its head, the file, its
	// tail; a chunk is one range). Only inside an upload.
	Parts []Part `json:"parts,omitempty"`
	// NoCredential sends the request without the connection's
	// credentials, to a pre-authenticated URL the provider answered (Graph's
	// upload session uploadUrl, which refuses a token): only to the
	// provider's download hosts, and a redirect carries none either.
	NoCredential bool `json:"noCredential,omitempty"`
}

// Part is one piece of a request body: Data, or Upload, a range of the
// file being uploaded.
type Part struct {
	Data   []byte `json:"data,omitempty"`
	Upload *Range `json:"upload,omitempty"`
}

// Range is Length bytes from Offset.
type Range struct {
	Offset int64 `json:"offset"`
	Length int64 `json:"length"`
}

// Response is the provider's answer (after the host's one refresh on a 401
// and its wait on a short Retry-After).
type Response struct {
	Status  int               `json:"status"`
	Headers map[string]string `json:"headers,omitempty"`
	Body    []byte            `json:"body,omitempty"`
}

// Connection is a connection as a connector sees it: no secret.
type Connection struct {
	ID       string `json:"id"`
	Provider string `json:"provider"`
	Label    string `json:"label"`
	Auth     string `json:"auth"`
	BaseURL  string `json:"baseUrl,omitempty"`
	// Deployment is "cloud", "datacenter" or "" (the base URL tells).
	Deployment string   `json:"deployment,omitempty"`
	Account    string   `json:"account,omitempty"`
	Scopes     []string `json:"scopes,omitempty"`
}

// InfoRequest names the connection to describe.
type InfoRequest struct {
	Connection string `json:"connection"`
}
