package ingest

// NoteRetryingAfterRestart starts the note of a content whose indexing is
// run again because the process indexing it died (kill -9, crash).
const NoteRetryingAfterRestart = "retrying after restart"
