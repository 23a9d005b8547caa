//go:build wasip1

package pdk

// HTTP imports are separate so a plugin that never calls HTTP does not import
// them (Go drops unreferenced imports), and the host does not ask it for the
// "http" capability.

//go:wasmimport extism:host/env http_request
func extismHTTPRequest(req, body uint64) uint64

//go:wasmimport extism:host/env http_status_code
func extismHTTPStatusCode() int32

//go:wasmimport extism:host/env http_headers
func extismHTTPHeaders() uint64
