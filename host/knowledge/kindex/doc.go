// Package kindex holds the records of the knowledge index: content states
// and their extractor records, chunks, queries and hits, container entries,
// workflows' memory entries, the structure keys of on-demand pages and OCR,
// query terms and the vector encoding. They are plain values and pure
// functions, so the SQL store (host/store) keeps and searches them without
// importing the knowledge service above it (host/knowledge: extraction
// through plugins, ingestion, the agent's context), which declares the
// stores it needs.
package kindex
