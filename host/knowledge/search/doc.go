// Package search is the knowledge store's hybrid search
// (docs/knowledge.md): lexical always, by vectors when an embedding model
// is configured, the two fused by rank (Fuse), over only the chunks of
// files the caller may read.
package search
