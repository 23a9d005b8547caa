// Package ocr reads the text of image-only pages (docs/knowledge.md#ocr). A
// page whose text layer is empty or negligible while it paints images is
// marked image only in the page map (textStatus "imageOnly", by the PDF
// extractor), as is every image file (structure textStatus, by ingestion:
// MarkImageFile). After indexing, a background job (Runner) reads those
// pages one at a time with the PDF plugin's OCR tools (the images taken out
// of the PDF inside the sandbox, read by the OCR model through the model
// capability, billed to the file's uploader), and stores each page's text
// as an object "ocr-<page>" on its page as soon as it is read, so the
// document is searchable as pages arrive. The pages read are listed in
// structure["ocrPages"], so a run stopped by a restart goes on where it
// stopped; structure["ocr"] says how far it is (kindex.OCRState).
package ocr
