// Package ondemand reads a file's content objects back from the knowledge
// store, and extracts the pages of large PDFs when they are first read.
//
// Smart PDFs: a large PDF is not extracted whole at upload, since most
// questions need a few of its pages (docs/knowledge.md#large-pdfs).
// Ingestion runs the PDF plugin's pre-scan only (outline, headings, page map,
// sections: about a millisecond a page), stores that structure as the file's
// index with status "indexed" and the marker structure["onDemand"] = true,
// and pages are extracted when someone reads them: the pages' objects go
// into the knowledge store as chunks (so later searches find them) and the
// pages are listed in structure["extractedPages"], so a second read
// extracts nothing. Pages nobody reads are extracted in the background
// (Reader.ExtractRest).
package ondemand
