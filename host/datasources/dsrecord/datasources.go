package dsrecord

import (
	"time"
)

// SyncState is where a data source's sync is.
type SyncState string

// The sync states. Queued, running and retrying hold the source's one claim:
// nothing else syncs it meanwhile.
const (
	SyncIdle     SyncState = "idle"
	SyncQueued   SyncState = "queued"
	SyncRunning  SyncState = "running"
	SyncRetrying SyncState = "retrying"
	SyncFailed   SyncState = "failed"
)

// Busy reports whether the state holds the source's claim.
func (s SyncState) Busy() bool { return s == SyncQueued || s == SyncRunning || s == SyncRetrying }

// DataSource is a data source: a path of a service of the
// owner's connection, mirrored into a folder of a workspace.
type DataSource struct {
	ID           string `json:"id"`
	TenantID     string `json:"-"`
	UserID       string `json:"userId"`
	WorkspaceID  string `json:"workspaceId"`
	ConnectionID string `json:"connectionId"`
	Service      string `json:"service"`
	Path         string `json:"path"`
	Label        string `json:"label"`
	SourceType   string `json:"sourceType,omitempty"`
	AutoSync     bool   `json:"autoSync"`
	// Interval is the time between automatic syncs.
	Interval time.Duration `json:"-"`
	// FolderID is the workspace folder the files land in (made at the
	// first sync).
	FolderID string    `json:"folderId,omitempty"`
	State    SyncState `json:"syncState"`
	// Seq counts claims: a sync job carries the seq it was claimed with.
	Seq        int64      `json:"-"`
	StateAt    time.Time  `json:"stateAt"`
	QueueJobID int64      `json:"-"`
	LastSynced *time.Time `json:"lastSynced,omitempty"`
	LastError  string     `json:"lastError,omitempty"`
	// LastSummary says what the last sync did ("2 new, 1 changed, 5 unchanged").
	LastSummary string     `json:"lastSummary,omitempty"`
	NextSync    *time.Time `json:"nextSync,omitempty"`
	// Resume is where a sync that failed part-way stopped (the sync's own
	// JSON; "" when the last sync completed): the next one starts there.
	Resume string `json:"-"`
	// ConnectionRevoked is read from the connection: a revoked one cannot
	// sync until the owner connects again and makes a new data source.
	ConnectionRevoked bool      `json:"connectionRevoked"`
	Provider          string    `json:"provider"`
	CreatedAt         time.Time `json:"createdAt"`
	UpdatedAt         time.Time `json:"updatedAt"`
}

// DataSourceItem is one remote entry a sync stored, as the connector
// reported it.
type DataSourceItem struct {
	EntryID   string
	EntryPath string
	Name      string
	Size      int64
	Modified  time.Time
	FileID    string
	SyncedAt  time.Time
}

// MinSyncInterval bounds how often a source syncs by itself.
const MinSyncInterval = time.Minute

// DataSourceSync is a change of a claimed sync's state; nil fields (and an
// empty State) stay.
type DataSourceSync struct {
	State       SyncState
	QueueJobID  *int64
	FolderID    *string
	LastSynced  *time.Time
	LastError   *string
	LastSummary *string
	// NextSync, when set, is the next automatic sync (zero: none).
	NextSync *time.Time
	// Resume, when set, is where the next sync starts ("" from the top).
	Resume *string
}
