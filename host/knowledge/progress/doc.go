// Package progress says how far a paged document's indexing is: how many
// of its pages are searchable, extracted on demand or in the background,
// and read by OCR (Of).
package progress
