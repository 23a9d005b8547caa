package filemeta

import (
	"time"
)

// Version is one content a file has had: a blob reference, numbered from 1
// (the upload). Writing, appending, replacing text, accepting a proposal and
// restoring an older version each add one; none is ever changed.
type Version struct {
	FileID    string    `json:"fileId"`
	Version   int       `json:"version"`
	SHA256    string    `json:"sha256"`
	Size      int64     `json:"size"`
	CreatedBy string    `json:"createdBy"`
	CreatedAt time.Time `json:"createdAt"`
	// Note says what made it: "upload", "writeFile", "proposal <id>",
	// "restore of version 2"...
	Note string `json:"note,omitempty"`
}

// Content is a new content for a file, already stored as a blob.
type Content struct {
	SHA256 string
	Size   int64
	// BaseVersion is the version the change was made on; the store refuses
	// it (tenancy.ErrConflict) when the file has moved on since. 0 takes
	// the current version, whatever it is.
	BaseVersion int
	Note        string
}

// ProposalStatus is where a proposed edit stands.
type ProposalStatus string

// The proposal states.
const (
	ProposalPending  ProposalStatus = "pending"
	ProposalAccepted ProposalStatus = "accepted"
	ProposalRejected ProposalStatus = "rejected"
)

// Proposal is an edit an agent proposes to a file, for its user to accept
// or reject (the fileEditProposal event): the proposed content (a
// blob), the version it was made on and the unified diff between them.
type Proposal struct {
	ID          string `json:"id"`
	TenantID    string `json:"tenantId"`
	WorkspaceID string `json:"workspaceId"`
	FileID      string `json:"fileId"`
	// WorkflowID is the workflow whose agent proposed it ("" for none); its
	// stream gets the fileEditProposal and fileVersion events.
	WorkflowID  string         `json:"workflowId,omitempty"`
	CreatedBy   string         `json:"createdBy"`
	BaseVersion int            `json:"baseVersion"`
	SHA256      string         `json:"sha256"`
	Size        int64          `json:"size"`
	Diff        string         `json:"diff"`
	Description string         `json:"description,omitempty"`
	Status      ProposalStatus `json:"status"`
	DecidedBy   string         `json:"decidedBy,omitempty"`
	DecidedAt   *time.Time     `json:"decidedAt,omitempty"`
	// Version is the file version the accepted proposal became.
	Version   int       `json:"version,omitempty"`
	CreatedAt time.Time `json:"createdAt"`
}

// Decision is a user's answer to a proposal.
type Decision struct {
	Accept bool
	// Content, for an accepted proposal made on an older version, is the
	// proposal rebased onto the current version; nil takes the proposal's
	// own content, which must then still be on its base version.
	Content *Content
}
