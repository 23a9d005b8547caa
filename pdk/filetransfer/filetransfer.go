// Package filetransfer reaches a user's FTP, FTPS or SFTP server through
// the host (capability "filetransfer"): a WebAssembly plugin cannot open
// sockets, so the host speaks the protocols, with the connection the
// plugin names. The password, key and server address never enter the
// plugin; every path is relative to the connection's base directory.
package filetransfer

import (
	"github.com/agenthost/agenthost/pdk"
	"github.com/agenthost/agenthost/pdk/filetransfer/wire"
)

type (
	// Entry is a file, folder or link.
	Entry = wire.Entry
	// Listing is a directory's entries.
	Listing = wire.Listing
	// File is a file read whole.
	File = wire.File
)

// List lists the directory at path (relative to the connection's base
// directory), at most limit entries (0: the host's bound).
func List(connection, path string, limit int) (Listing, error) {
	var out Listing
	err := pdk.Invoke(list, wire.ListRequest{PathRequest: wire.PathRequest{Connection: connection, Path: path}, Limit: limit}, &out)
	return out, err
}

// Stat describes path.
func Stat(connection, path string) (Entry, error) {
	var out Entry
	err := pdk.Invoke(stat, wire.PathRequest{Connection: connection, Path: path}, &out)
	return out, err
}

// Read reads the file at path whole; a file over maxBytes (or the plugin's
// limit) is refused with the code "too_large" before any byte is sent.
func Read(connection, path string, maxBytes int64) (File, error) {
	var out File
	err := pdk.Invoke(read, wire.ReadRequest{PathRequest: wire.PathRequest{Connection: connection, Path: path}, MaxBytes: maxBytes}, &out)
	return out, err
}

// Write stores data at path atomically (temporary name, then rename); an
// existing file is replaced only when overwrite is set ("exists"
// otherwise).
func Write(connection, path string, data []byte, overwrite bool) (Entry, error) {
	var out Entry
	err := pdk.Invoke(write, wire.WriteRequest{PathRequest: wire.PathRequest{Connection: connection, Path: path}, Data: data, Overwrite: overwrite}, &out)
	return out, err
}

// WriteUpload is Write of the file the running upload sends (a
// connector's Upload): the host streams it from the workspace.
func WriteUpload(connection, path string, overwrite bool) (Entry, error) {
	var out Entry
	err := pdk.Invoke(write, wire.WriteRequest{PathRequest: wire.PathRequest{Connection: connection, Path: path}, Upload: true, Overwrite: overwrite}, &out)
	return out, err
}

// Mkdir makes the directory path (its parent must exist).
func Mkdir(connection, path string) (Entry, error) {
	var out Entry
	err := pdk.Invoke(mkdir, wire.PathRequest{Connection: connection, Path: path}, &out)
	return out, err
}
