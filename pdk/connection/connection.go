// Package connection sends a connector's HTTP requests with a user's
// connection (capability "connection"; declare it in plugin.json with the
// connector section's hosts). The plugin names the connection; the host
// adds its credentials, refreshes them, and sends the request only to the
// connector's hosts. The credentials never enter the plugin.
package connection

import (
	"github.com/agenthost/agenthost/pdk"
	"github.com/agenthost/agenthost/pdk/connection/wire"
)

type (
	// Request is one request through a connection.
	Request = wire.Request
	// Response is the provider's answer.
	Response = wire.Response
	// Connection describes a connection (no secret).
	Connection = wire.Connection
	// Part is a piece of a request body: bytes, or a range of the upload.
	Part = wire.Part
	// Range is a range of the file being uploaded.
	Range = wire.Range
)

// Upload is a body part of length bytes of the running upload's file
// from offset, read and sent by the host.
func Upload(offset, length int64) Part { return Part{Upload: &Range{Offset: offset, Length: length}} }

// Bytes is a body part of literal bytes.
func Bytes(b []byte) Part { return Part{Data: b} }

// Do sends r with its connection's credentials.
func Do(r Request) (Response, error) {
	var resp Response
	err := pdk.Invoke(request, r, &resp)
	return resp, err
}

// Info describes the caller's connection id: its provider, base URL and
// account (never its secret).
func Info(id string) (Connection, error) {
	var c Connection
	err := pdk.Invoke(info, wire.InfoRequest{Connection: id}, &c)
	return c, err
}
