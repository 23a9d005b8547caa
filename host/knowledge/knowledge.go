// Package knowledge is the knowledge store (seed 000 §4): files are
// extracted once, on upload and with no model, into content objects; their
// text is cut into chunks of about 512 tokens that keep where they came from;
// chunks are indexed lexically always and by vectors when an embedding model
// is configured; and searches return only chunks of files the caller may
// read, from the three layers (the workspace's files, the tenant's shared
// files, the workflow's memory).
package knowledge

import (
	"github.com/agenthost/agenthost/pdk/content"
)

// Status is where a file's content is in the pipeline.
type Status string

// The indexing states (seed 000 §4.4): pending → extracted → embedding →
// indexed, or failed with the reason.
const (
	StatusPending   Status = "pending"
	StatusExtracted Status = "extracted"
	StatusEmbedding Status = "embedding"
	StatusIndexed   Status = "indexed"
	StatusFailed    Status = "failed"
)

// Chunk is a searchable piece of a file's text with its origin.
type Chunk struct {
	ID string `json:"id"`
	// Seq orders a content's chunks.
	Seq         int          `json:"seq"`
	ObjectID    string       `json:"objectId"`
	ContentType content.Type `json:"contentType"`
	Text        string       `json:"text"`
	Ref         content.Ref  `json:"contextRef"`
	Tokens      int          `json:"tokens"`
}

// Layer selects the knowledge layers a search covers.
type Layer string

// The layers (seed 000 §4.2). The workflow layer (summaries, entities, tool
// results) is read through the workflow, not searched here.
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
}

// Hit is a chunk found by a search, with a file that carries it.
type Hit struct {
	Chunk
	FileID      string  `json:"fileId"`
	FileName    string  `json:"fileName"`
	WorkspaceID string  `json:"workspaceId"`
	Score       float64 `json:"score"`
}

// ContentState is a file's indexing state: where its content is in the
// pipeline, why it failed, and its index (structure and object summaries).
type ContentState struct {
	Status Status        `json:"status"`
	Error  string        `json:"error,omitempty"`
	Index  content.Index `json:"index"`
}
