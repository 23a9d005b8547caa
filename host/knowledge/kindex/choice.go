package kindex

// ChosenBy says why a document's extractor was chosen.
type ChosenBy string

const (
	// ChosenOperator: the operator named the plugin for the MIME type.
	ChosenOperator ChosenBy = "operator"
	// ChosenBuiltin: a built-in plugin serves the document; built-ins win.
	ChosenBuiltin ChosenBy = "builtin"
	// ChosenSole: no built-in serves the document and exactly one
	// third-party plugin claims it.
	ChosenSole ChosenBy = "sole"
	// ChosenNone: no plugin was chosen (none claims the document, or
	// several third-party plugins do and the operator named none).
	ChosenNone ChosenBy = "none"
)

// ExtractorRecord is which extractor indexed a content and why, as the
// file's index record (GET /files/{id}/index) shows it; a content indexed
// before extractors were recorded has none.
type ExtractorRecord struct {
	// Name, Version and SHA256 (its first 12 hex digits) identify the
	// plugin; empty when none was chosen.
	Name    string `json:"name,omitempty"`
	Version string `json:"version,omitempty"`
	SHA256  string `json:"sha256,omitempty"`
	Builtin bool   `json:"builtin"`
	// ChosenBy: operator, builtin, sole or none.
	ChosenBy ChosenBy `json:"chosenBy"`
	// Match is the operator's key, or the MIME type, family or extension
	// that matched.
	Match string `json:"match,omitempty"`
	// Competitors are the other plugins that claimed the document (with
	// none chosen: every one that did).
	Competitors []string `json:"competitors,omitempty"`
	// Reason says why none was chosen.
	Reason string `json:"reason,omitempty"`
}
