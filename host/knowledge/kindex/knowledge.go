package kindex

import (
	"fmt"
	"github.com/agenthost/agenthost/host/tenancy"
	"github.com/agenthost/agenthost/pdk/content"
	"github.com/agenthost/agenthost/pdk/knowledge/wire"
)

// Status is where a file's content is in the pipeline; the knowledge
// capability's answers carry it, so it is declared with them (pdk/knowledge/wire).
type Status = wire.Status

// The indexing states: pending → extracted → embedding →
// indexed, or failed with the reason.
const (
	StatusPending   = wire.StatusPending
	StatusExtracted = wire.StatusExtracted
	StatusEmbedding = wire.StatusEmbedding
	StatusIndexed   = wire.StatusIndexed
	StatusFailed    = wire.StatusFailed
)

// Chunk is a searchable piece of a file's text with its origin (declared
// with the capability's types: a search hit carries it).
type Chunk = wire.Chunk

// Layer selects the knowledge layers a search covers.
type Layer string

// The layers: the tenant's shared documents, a workspace's own, and the
// workflow's (docs/knowledge.md#design-decisions). The workflow layer
// (summaries, entities, tool results) is read through the workflow, not
// searched here.
const (
	// LayerAll: every file the caller can read.
	LayerAll Layer = ""
	// LayerInstance: the files of the query's workspace.
	LayerInstance Layer = "instance"
	// LayerShared: the tenant's shared files.
	LayerShared Layer = "shared"
)

// Query is a search.
type Query struct {
	Text        string
	Layer       Layer
	WorkspaceID string
	FileIDs     []string
	ContentType content.Type
	// Page (from 1) and Section filter by where chunks came from.
	Page    int
	Section string
	// Limit of hits: default 10, at most 100.
	Limit int
	// Hidden filters what documents hide (HiddenInclude, the default;
	// HiddenExclude; HiddenOnly).
	Hidden string
	// Languages the query is analysed as (ISO 639-1 codes): the
	// workspace's search languages; none: every analysed language.
	Languages []string
}

// Values of Query.Hidden.
const (
	HiddenInclude = "include"
	HiddenExclude = "exclude"
	HiddenOnly    = "only"
)

// CheckHidden refuses a Query.Hidden value that is none of those.
func CheckHidden(v string) error {
	switch v {
	case "", HiddenInclude, HiddenExclude, HiddenOnly:
		return nil
	}
	return fmt.Errorf("%w: hidden %q (include, exclude or only)", tenancy.ErrInvalid, v)
}

// Hit is a chunk found by a search, with a file that carries it (as
// knowledge.search answers it).
type Hit = wire.Hit

// NoteQueued is the note of a file whose indexing job waits for a worker.
const NoteQueued = "queued"

// ContentState is a file's indexing state: where its content is in the
// pipeline, why it failed, which extractor plugin it was given (and why),
// and its index (structure and object summaries).
type ContentState struct {
	Status Status `json:"status"`
	Error  string `json:"error,omitempty"`
	// Note says what is happening to a content on its way (pending,
	// extracted, embedding): NoteQueued, a retry after a restart, …; empty
	// once it is indexed or failed.
	Note string `json:"note,omitempty"`
	// Extractor is nil for a content indexed before extractors were
	// recorded, or by an Extractor that does not tell (not a Chooser).
	Extractor *ExtractorRecord `json:"extractor,omitempty"`
	Index     content.Index    `json:"index"`
}
