// Package files is agenthost's file management: files (FileItem) with tags,
// folder, description and status; folders (FileFolder) with a parent and an
// optional auto-rule; content kept as content-addressed blobs.
//
// Every operation names the acting principal and goes through the store's
// access scope, including the duplicate check, so a duplicate found is always
// a file the caller can read (a "ghost duplicate", docs/files.md, cannot
// happen):
// identical bytes uploaded in two workspaces are two files over one blob.
package files
