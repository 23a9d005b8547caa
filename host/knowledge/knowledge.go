// Package knowledge is the knowledge store (docs/knowledge.md): files are
// extracted once, on upload and with no model, into content objects; their
// text is cut into chunks of about 512 tokens that keep where they came from;
// chunks are indexed lexically always and by vectors when an embedding model
// is configured; and searches return only chunks of files the caller may
// read, from the three layers (the workspace's files, the tenant's shared
// files, the workflow's memory).
package knowledge

// NoteRetryingAfterRestart starts the note of a content whose indexing is
// run again because the process indexing it died (kill -9, crash).
const NoteRetryingAfterRestart = "retrying after restart"
