// Package extract chooses the extractor plugin of each document among the
// loaded plugins (built-ins win unless the operator chose otherwise:
// OperatorChoice, Choose) and runs its tools sandboxed: the extraction
// itself, a large PDF's pre-scan and pages, OCR of a page or an image, a
// container's entries and a document's attachments (Containers), and a
// page copied as a PDF of its own for the preview (PagePDF).
package extract
