// Package ingest indexes uploaded files (docs/knowledge.md): each content
// is extracted once by its extractor plugin (a large PDF's pre-scan only),
// cut into chunks, written to the lexical index and, with an embedding
// model, embedded (Pipeline). It resolves containers' entries and
// documents' attachments, reads files with the password given for them,
// and backfills the vectors of contents indexed without theirs.
package ingest
