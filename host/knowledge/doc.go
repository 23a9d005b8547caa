// Package knowledge is the knowledge store's capability for plugins
// (docs/knowledge.md): the host functions of module "agenthost:knowledge"
// (search, index, read_objects, read_section, folder, extract_item), each
// acting for the tool call's caller over the files that caller can read.
//
// The knowledge store itself is in the packages below this one, one concern
// each: files are extracted once, on upload and with no model, into content
// objects (extract: which plugin extracts what, containers, the OCR and
// on-demand tools); their text is cut into chunks of about 512 tokens that
// keep where they came from (chunk); ingest runs that pipeline, with
// passwords, containers' entries and the vectors backfill; chunks are
// indexed lexically always and by vectors when an embedding model is
// configured, and searches return only chunks of files the caller may read
// (search); large PDFs' pages are read when first asked for (ondemand),
// image-only pages by OCR (ocr), and how far a document is searchable is
// told by progress; unlock takes the passwords people give for their
// encrypted files; memory is the workflows' memory; kindex holds the records
// the store keeps and agentcontext builds an agent's context from them.
package knowledge
