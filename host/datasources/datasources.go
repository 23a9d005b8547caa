// Package datasources is data sources (docs/connectors.md): a folder, project or
// drive path of a user's connection that the host mirrors into a workspace
// folder named after it, on demand ("sync now") or on a schedule. A sync
// is a job of the persistent queue (package syncjob binds it): it browses
// the source through the ConnectorResolver (bounded in depth and count,
// cycle-safe by entry id), downloads what is new or changed since the last
// sync (by the entry's id, size and modification time as the connector
// reports them) and stores it through the file service, so each file is
// deduplicated and indexed like an upload. A data source is its owner's
// alone, like the connection it reads through.
package datasources

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"time"

	"github.com/agenthost/agenthost/host/connections"
	"github.com/agenthost/agenthost/host/datasources/dsrecord"
	"github.com/agenthost/agenthost/host/files"
	"github.com/agenthost/agenthost/host/files/filemeta"
	"github.com/agenthost/agenthost/host/notifications"
	"github.com/agenthost/agenthost/host/tenancy"
	"github.com/agenthost/agenthost/pdk/connector/wire"
)

// DataSource is a data source with its sync status (store.DataSource).
type DataSource = dsrecord.DataSource

// Store keeps data sources and what their syncs stored (*store.DB).
// Reads and writes with a principal are the owner's only; the others are
// the sync job's and the scheduler's, which act for the owner the row names.
type Store interface {
	CreateDataSource(ctx context.Context, p tenancy.Principal, d dsrecord.DataSource) (dsrecord.DataSource, error)
	DataSource(ctx context.Context, p tenancy.Principal, id string) (dsrecord.DataSource, error)
	DataSources(ctx context.Context, p tenancy.Principal, workspaceID string) ([]dsrecord.DataSource, error)
	DeleteDataSource(ctx context.Context, p tenancy.Principal, id string) error
	DataSourceByID(ctx context.Context, id string) (dsrecord.DataSource, error)
	DueDataSources(ctx context.Context, at time.Time, stale time.Duration, limit int) ([]dsrecord.DataSource, error)
	ClaimDataSourceSync(ctx context.Context, id string, at time.Time, stale time.Duration, onlyIfDue bool) (int64, bool, error)
	UpdateDataSourceSync(ctx context.Context, id string, seq int64, at time.Time, u dsrecord.DataSourceSync) (bool, error)
	DataSourceItems(ctx context.Context, id string) (map[string]dsrecord.DataSourceItem, error)
	PutDataSourceItem(ctx context.Context, id string, seq int64, it dsrecord.DataSourceItem) (bool, error)
	User(ctx context.Context, p tenancy.Principal) (tenancy.User, error)
}

// Remote reaches the source through its connector (*connections.Resolver).
type Remote interface {
	Browse(ctx context.Context, p tenancy.Principal, req wire.BrowseRequest) (wire.Listing, error)
	Download(ctx context.Context, p tenancy.Principal, req wire.DownloadRequest) (wire.File, error)
	// Services lists the services the loaded connectors offer for a provider.
	Services(provider string) []string
}

// Files stores synced files (*files.Service): new ones as uploads (indexed
// by the service's indexer), changed ones as a new version (re-indexed).
type Files interface {
	Upload(ctx context.Context, p tenancy.Principal, u files.Upload) (filemeta.Item, bool, error)
	Get(ctx context.Context, p tenancy.Principal, id string) (filemeta.Item, error)
	SetContent(ctx context.Context, p tenancy.Principal, id string, r io.Reader, base int, note string) (filemeta.Item, filemeta.Version, error)
	Folders(ctx context.Context, p tenancy.Principal, workspaceID string) ([]filemeta.Folder, error)
	CreateFolder(ctx context.Context, p tenancy.Principal, f filemeta.Folder) (filemeta.Folder, error)
}

// Queue runs a claimed sync as a job (package syncjob binds the job
// queue): Service.Sync with the data source's id and the claim's seq.
type Queue interface {
	EnqueueSync(ctx context.Context, dataSourceID string, seq int64) (queueJobID int64, err error)
}

// Config bounds syncs; zero values take the defaults in brackets.
type Config struct {
	// MaxDepth bounds how deep under the source's path a sync browses [8].
	MaxDepth int
	// MaxEntries bounds the entries one sync looks at [5000].
	MaxEntries int
	// MaxFileBytes bounds one downloaded file [connections.DefaultMaxDownload].
	MaxFileBytes int64
	// StaleAfter is when a claim whose host went silent may be taken again
	// [1h]; it must exceed the longest sync (job timeout and retries).
	StaleAfter time.Duration
	// Now is the clock [time.Now]; tests inject theirs.
	Now func() time.Time
}

// The defaults of Config.
const (
	DefaultMaxDepth   = 8
	DefaultMaxEntries = 5000
	DefaultStaleAfter = time.Hour
)

// ErrPermanent marks a sync failure retrying cannot fix (a revoked
// connection, a source path the provider does not know); the job ends.
var ErrPermanent = errors.New("permanent")

// ErrBusy: the data source is being synced already.
var ErrBusy = errors.New("a sync of this data source is already queued or running")

// Service makes, lists and syncs data sources.
type Service struct {
	store  Store
	remote Remote
	files  Files
	queue  Queue
	cfg    Config
	log    *slog.Logger
	// notify tells a data source's person that a sync ended; nil tells
	// no one.
	notify Notifier
}

// Notifier tells a person of a sync that ended (notifications.Service).
type Notifier interface {
	Notify(ctx context.Context, n notifications.Notification)
}

// WithNotifier makes the service tell each data source's person when a
// sync of it ends (completed, or failed for good; not a retry).
func (s *Service) WithNotifier(n Notifier) *Service {
	s.notify = n
	return s
}

// New returns the service; logger may be nil.
func New(st Store, remote Remote, fs Files, q Queue, cfg Config, logger *slog.Logger) *Service {
	if cfg.MaxDepth <= 0 {
		cfg.MaxDepth = DefaultMaxDepth
	}
	if cfg.MaxEntries <= 0 {
		cfg.MaxEntries = DefaultMaxEntries
	}
	if cfg.MaxFileBytes <= 0 {
		cfg.MaxFileBytes = connections.DefaultMaxDownload
	}
	if cfg.StaleAfter <= 0 {
		cfg.StaleAfter = DefaultStaleAfter
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &Service{store: st, remote: remote, files: fs, queue: q, cfg: cfg, log: logger}
}

func (s *Service) now() time.Time { return s.cfg.Now().UTC() }

// NewDataSource is what a user asks for.
type NewDataSource struct {
	WorkspaceID  string `json:"workspaceId"`
	ConnectionID string `json:"connectionId"`
	Service      string `json:"service"`
	Path         string `json:"path"`
	Label        string `json:"label"`
	SourceType   string `json:"sourceType"`
	AutoSync     bool   `json:"autoSync"`
	// IntervalSeconds is the time between automatic syncs (at least 60).
	IntervalSeconds int64 `json:"intervalSeconds"`
}

// Create stores a data source of p over p's own connection, after checking
// that a loaded connector serves its provider's service.
func (s *Service) Create(ctx context.Context, p tenancy.Principal, n NewDataSource) (DataSource, error) {
	if n.IntervalSeconds < 0 || n.IntervalSeconds > int64(365*24*time.Hour/time.Second) {
		return DataSource{}, fmt.Errorf("%w: intervalSeconds out of range", tenancy.ErrInvalid)
	}
	if strings.Contains(n.Path, "\x00") || len(n.Path) > 2048 {
		return DataSource{}, fmt.Errorf("%w: path is not a valid remote path", tenancy.ErrInvalid)
	}
	// The label names the workspace folder the files land in.
	if err := files.ValidateName("data source label (its folder's)", strings.TrimSpace(n.Label)); err != nil {
		return DataSource{}, err
	}
	d, err := s.store.CreateDataSource(ctx, p, dsrecord.DataSource{WorkspaceID: n.WorkspaceID, ConnectionID: n.ConnectionID,
		Service: strings.TrimSpace(n.Service), Path: n.Path, Label: n.Label, SourceType: n.SourceType, AutoSync: n.AutoSync,
		Interval: time.Duration(n.IntervalSeconds) * time.Second, NextSync: s.dueNow(n.AutoSync)})
	if err != nil {
		return DataSource{}, err
	}
	if !contains(s.remote.Services(d.Provider), d.Service) {
		// Checked after the store proved the connection is p's, so the
		// error says nothing about another's connection.
		_ = s.store.DeleteDataSource(ctx, p, d.ID)
		return DataSource{}, fmt.Errorf("%w: %w: provider %s has no service %q here (offered: %s)", tenancy.ErrInvalid, connections.ErrNoConnector,
			d.Provider, d.Service, strings.Join(s.remote.Services(d.Provider), ", "))
	}
	return d, nil
}

// dueNow is the first sync of a new auto-syncing source: now, on the
// service's clock.
func (s *Service) dueNow(auto bool) *time.Time {
	if !auto {
		return nil
	}
	t := s.now()
	return &t
}

func contains(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}

// Get returns p's data source.
func (s *Service) Get(ctx context.Context, p tenancy.Principal, id string) (DataSource, error) {
	return s.store.DataSource(ctx, p, id)
}

// List lists p's data sources (of one workspace when workspaceID is set).
func (s *Service) List(ctx context.Context, p tenancy.Principal, workspaceID string) ([]DataSource, error) {
	return s.store.DataSources(ctx, p, workspaceID)
}

// Delete deletes p's data source; the files it stored stay. A sync in
// flight finds its claim gone and stores nothing more.
func (s *Service) Delete(ctx context.Context, p tenancy.Principal, id string) error {
	return s.store.DeleteDataSource(ctx, p, id)
}

// SyncNow claims p's data source and enqueues its sync. A revoked
// connection is refused with connections.ErrRevoked, a source already
// syncing with ErrBusy (both tenancy.ErrConflict).
func (s *Service) SyncNow(ctx context.Context, p tenancy.Principal, id string) (DataSource, error) {
	d, err := s.store.DataSource(ctx, p, id)
	if err != nil {
		return DataSource{}, err
	}
	if d.ConnectionRevoked {
		return d, fmt.Errorf("%w: %w: data source %q reads through connection %s, which was revoked; connect again and add the data source anew",
			tenancy.ErrConflict, connections.ErrRevoked, d.Label, d.ConnectionID)
	}
	ok, err := s.enqueue(ctx, d, false)
	if err != nil {
		return d, err
	}
	if !ok {
		return d, fmt.Errorf("%w: %w", tenancy.ErrConflict, ErrBusy)
	}
	return s.store.DataSource(ctx, p, id)
}

// enqueue claims d and enqueues its sync; ok is false when another sync
// holds the claim. Should the enqueue fail, the claim is released.
func (s *Service) enqueue(ctx context.Context, d DataSource, onlyIfDue bool) (bool, error) {
	at := s.now()
	seq, ok, err := s.store.ClaimDataSourceSync(ctx, d.ID, at, s.cfg.StaleAfter, onlyIfDue)
	if err != nil || !ok {
		return false, err
	}
	jobID, err := s.queue.EnqueueSync(ctx, d.ID, seq)
	if err != nil {
		msg := "could not queue the sync: " + err.Error()
		_, _ = s.store.UpdateDataSourceSync(ctx, d.ID, seq, at, dsrecord.DataSourceSync{State: dsrecord.SyncFailed, LastError: &msg})
		return false, fmt.Errorf("datasources: enqueue sync of %s: %w", d.ID, err)
	}
	// The claim made the source queued; the worker may have taken the job
	// (running) or even finished it (idle) by now, so only the job's id is
	// recorded, never the state set back.
	_, err = s.store.UpdateDataSourceSync(ctx, d.ID, seq, at, dsrecord.DataSourceSync{QueueJobID: &jobID})
	return true, err
}

// Tick is the scheduler's one pass: it claims and enqueues every
// auto-syncing data source due now (its next sync reached, its connection
// not revoked, no sync of it in flight). Several hosts may tick at once:
// the claim is one conditional update, so a due source is enqueued once.
// It returns how many it enqueued.
func (s *Service) Tick(ctx context.Context) (int, error) {
	due, err := s.store.DueDataSources(ctx, s.now(), s.cfg.StaleAfter, 100)
	if err != nil {
		return 0, err
	}
	n := 0
	var errs []error
	for _, d := range due {
		ok, err := s.enqueue(ctx, d, true)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if ok {
			n++
		}
	}
	return n, errors.Join(errs...)
}

// Schedule ticks every interval until ctx ends (serve runs it). State is
// in the database, so a restarted host picks up where the last left off.
func (s *Service) Schedule(ctx context.Context, every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		if n, err := s.Tick(ctx); err != nil && ctx.Err() == nil {
			s.log.Error("data sources: scheduling syncs", "err", err)
		} else if n > 0 {
			s.log.Info("data sources: syncs queued", "count", n)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
