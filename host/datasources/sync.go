package datasources

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/agenthost/agenthost/host/connections"
	"github.com/agenthost/agenthost/host/datasources/dsrecord"
	"github.com/agenthost/agenthost/host/files"
	"github.com/agenthost/agenthost/host/files/filemeta"
	"github.com/agenthost/agenthost/host/notifications"
	"github.com/agenthost/agenthost/host/tenancy"
	"github.com/agenthost/agenthost/pdk/connector/wire"
)

// browsePage is how many entries one browse asks for.
const browsePage = 200

// Result is what one sync did.
type Result struct {
	New, Changed, Unchanged, Skipped, Failed int
	// Truncated says the walk stopped at Config.MaxEntries or MaxDepth.
	Truncated bool
	// Problems name the skipped and failed entries (the first few).
	Problems []string
}

// Summary is the result in a line.
func (r Result) Summary() string {
	s := fmt.Sprintf("%d new, %d changed, %d unchanged, %d skipped, %d failed", r.New, r.Changed, r.Unchanged, r.Skipped, r.Failed)
	if r.Truncated {
		s += "; stopped at the depth or entry limit"
	}
	if len(r.Problems) > 0 {
		s += " (" + strings.Join(r.Problems, "; ") + ")"
	}
	return s
}

func (r *Result) problem(name string, err error) {
	if len(r.Problems) < 5 {
		r.Problems = append(r.Problems, fmt.Sprintf("%s: %v", name, err))
	}
}

// Sync runs the sync claimed with seq (the queue's job calls it; attempt
// counts from 1). A deleted data source or a superseded claim ends it
// without doing anything. Files are stored one by one, each whole or not at
// all, and recorded only once stored, so a failed download leaves no file
// and the retry fetches just what is missing. The error wraps ErrPermanent
// when retrying cannot help.
func (s *Service) Sync(ctx context.Context, id string, seq int64, attempt, maxAttempts int) (Result, error) {
	d, err := s.store.DataSourceByID(ctx, id)
	if errors.Is(err, tenancy.ErrNotFound) {
		return Result{}, nil
	}
	if err != nil {
		return Result{}, err
	}
	if d.Seq != seq {
		return Result{}, nil
	}
	if d.ConnectionRevoked {
		return Result{}, s.finish(ctx, d, seq, Result{}, fmt.Errorf("%w: %w: connection %s was revoked; connect again and add the data source anew",
			ErrPermanent, connections.ErrRevoked, d.ConnectionID), attempt, maxAttempts)
	}
	if ok, err := s.store.UpdateDataSourceSync(ctx, id, seq, s.now(), dsrecord.DataSourceSync{State: dsrecord.SyncRunning}); err != nil || !ok {
		return Result{}, err
	}
	owner := tenancy.Principal{TenantID: d.TenantID, UserID: d.UserID}
	u, err := s.store.User(ctx, owner)
	if err != nil {
		return Result{}, s.finish(ctx, d, seq, Result{}, fmt.Errorf("%w: the data source's owner: %w", ErrPermanent, err), attempt, maxAttempts)
	}
	owner.Admin = u.Admin
	r := &run{s: s, d: d, seq: seq, p: owner}
	res, err := r.do(ctx)
	var resume *string
	if err == nil || !r.left.empty() {
		// Whole: no checkpoint. Part-way: this one's. A sync that ended
		// before (the database gone, a revoked token) keeps the last.
		resume = r.resume()
	}
	return res, s.finishResume(ctx, d, seq, res, err, attempt, maxAttempts, resume)
}

// finish records the sync's outcome and returns err for the queue: nil,
// a retryable error, or one wrapping ErrPermanent.
func (s *Service) finish(ctx context.Context, d DataSource, seq int64, res Result, err error, attempt, maxAttempts int) error {
	return s.finishResume(ctx, d, seq, res, err, attempt, maxAttempts, nil)
}

// finishResume is finish keeping resume as where the next sync starts
// (nil: unchanged).
func (s *Service) finishResume(ctx context.Context, d DataSource, seq int64, res Result, err error, attempt, maxAttempts int, resume *string) error {
	at := s.now()
	u := dsrecord.DataSourceSync{State: dsrecord.SyncIdle, Resume: resume}
	summary := res.Summary()
	u.LastSummary = &summary
	var next *time.Time
	if d.AutoSync && d.Interval > 0 {
		t := at.Add(d.Interval)
		next = &t
	}
	switch {
	case err == nil:
		u.LastSynced = &at
		empty := ""
		u.LastError, u.NextSync = &empty, next
	case errors.Is(err, ErrPermanent) || attempt >= maxAttempts:
		msg := err.Error()
		u.State, u.LastError, u.NextSync = dsrecord.SyncFailed, &msg, next
	default:
		// The queue tries again; the claim stays, so nothing else syncs
		// the source meanwhile.
		msg := fmt.Sprintf("attempt %d of %d: %v", attempt, maxAttempts, err)
		u.State, u.LastError = dsrecord.SyncRetrying, &msg
	}
	// A context that ended still records the outcome.
	if _, uerr := s.store.UpdateDataSourceSync(context.WithoutCancel(ctx), d.ID, seq, at, u); uerr != nil {
		return errors.Join(err, uerr)
	}
	if err != nil {
		s.log.Warn("data sources: sync failed", "dataSource", d.ID, "attempt", attempt, "err", err)
	}
	if s.notify != nil && u.State != dsrecord.SyncRetrying {
		st, detail := "completed", summary
		if u.State == dsrecord.SyncFailed {
			st, detail = "failed", *u.LastError
		}
		name := d.Label
		if name == "" {
			name = d.Path
		}
		// One claim (seq) is one sync: its end is told once.
		s.notify.Notify(ctx, notifications.Notification{TenantID: d.TenantID, UserID: d.UserID, WorkspaceID: d.WorkspaceID,
			Kind: notifications.Sync, SubjectID: fmt.Sprintf("%s#%d", d.ID, seq), Status: st, Name: name, Detail: detail})
	}
	return err
}

// run is one sync of one data source.
type run struct {
	s       *Service
	d       DataSource
	seq     int64
	p       tenancy.Principal
	items   map[string]dsrecord.DataSourceItem
	folders map[string]string // parent id + "/" + name → folder id
	root    string
	// left is what this sync could not do (listings that failed, with the
	// page they reached, and files not stored): the next sync starts
	// there, so what was stored is neither listed nor fetched again.
	left checkpoint
}

// checkpoint is where a sync that failed part-way stopped, kept in the
// data source (store.DataSource.Resume) as JSON.
type checkpoint struct {
	// Nodes are folders whose listing failed: listed again from Cursor
	// (the page reached; "" from the first).
	Nodes []node `json:"nodes,omitempty"`
	// Files were found but not stored.
	Files []file `json:"files,omitempty"`
}

func (c checkpoint) empty() bool { return len(c.Nodes) == 0 && len(c.Files) == 0 }

// maxCheckpoint bounds what a checkpoint keeps of each kind: beyond it
// the next sync lists from the top, as if there were none.
const maxCheckpoint = 1000

// node is a remote folder to browse and where its files go.
type node struct {
	Path   string   `json:"path"`
	Depth  int      `json:"depth,omitempty"`
	Dirs   []string `json:"dirs,omitempty"` // the workspace sub-folders under the source's folder
	Cursor string   `json:"cursor,omitempty"`
}

// file is a remote file to sync.
type file struct {
	E    wire.Entry `json:"entry"`
	Dirs []string   `json:"dirs,omitempty"`
}

func entryKey(e wire.Entry) string {
	if e.ID != "" {
		return "id:" + e.ID
	}
	return "path:" + e.Path
}

// start is where this sync begins: the last one's checkpoint when it left
// one that reads, else the source's path.
func (r *run) start() ([]node, []file) {
	if r.d.Resume != "" {
		var c checkpoint
		if err := json.Unmarshal([]byte(r.d.Resume), &c); err == nil && !c.empty() {
			r.s.log.Info("data sources: sync resumes where the last stopped", "dataSource", r.d.ID, "folders", len(c.Nodes), "files", len(c.Files))
			return c.Nodes, c.Files
		}
	}
	return []node{{Path: r.d.Path}}, nil
}

// resume is the checkpoint to keep: nil when the sync was whole ("" then
// clears the last one's).
func (r *run) resume() *string {
	s := ""
	if !r.left.empty() && len(r.left.Nodes) <= maxCheckpoint && len(r.left.Files) <= maxCheckpoint {
		b, err := json.Marshal(r.left)
		if err == nil {
			s = string(b)
		}
	}
	return &s
}

func (r *run) do(ctx context.Context) (Result, error) {
	var res Result
	var err error
	if r.items, err = r.s.store.DataSourceItems(ctx, r.d.ID); err != nil {
		return res, err
	}
	queue, pending := r.start()
	found, truncated, err := r.walk(ctx, queue, &res)
	res.Truncated = truncated
	if err != nil {
		return res, err
	}
	for _, f := range append(pending, found...) {
		if err := ctx.Err(); err != nil {
			return res, err
		}
		if err := r.syncFile(ctx, f, &res); err != nil {
			return res, err
		}
	}
	if res.Failed > 0 {
		return res, fmt.Errorf("%d entries could not be synced: %s", res.Failed, strings.Join(res.Problems, "; "))
	}
	return res, nil
}

// walk lists the source breadth first from queue, at most MaxDepth
// folders deep and MaxEntries entries in all; an entry seen before (by
// id, else path) is not followed again, so a folder cycle ends. The
// source's own path must list; a sub-folder that does not, or a later
// page of any folder, counts in res and is kept in the checkpoint with
// the page it reached, and the walk goes on with what it has.
func (r *run) walk(ctx context.Context, queue []node, res *Result) ([]file, bool, error) {
	cfg := r.s.cfg
	seen := map[string]bool{}
	browsed := map[string]bool{}
	var out []file
	entries, truncated := 0, false
	for len(queue) > 0 {
		n := queue[0]
		queue = queue[1:]
		if browsed[n.Path] {
			continue
		}
		browsed[n.Path] = true
		cursors := map[string]bool{}
		cursor := n.Cursor
		for page := 1; ; page++ {
			l, err := r.s.remote.Browse(ctx, r.p, wire.BrowseRequest{Connection: r.d.ConnectionID, Service: r.d.Service, Path: n.Path, Cursor: cursor, Limit: browsePage})
			if err != nil {
				where := fmt.Sprintf("browsing %q", n.Path)
				if cursor != "" {
					where += fmt.Sprintf(" (page %d of this sync, after a cursor)", page)
				}
				err = fmt.Errorf("%s: %w", where, err)
				if (n.Depth == 0 && cursor == "") || fatal(err) || ctx.Err() != nil {
					return nil, truncated, classify(err)
				}
				if !skippable(err) {
					// The pages before were taken; the next sync asks
					// for this one again.
					left := n
					left.Cursor = cursor
					r.left.Nodes = append(r.left.Nodes, left)
				}
				if err := r.entryError(where, err, res); err != nil {
					return nil, truncated, err
				}
				break
			}
			for _, e := range l.Entries {
				if entries++; entries > cfg.MaxEntries {
					return out, true, nil
				}
				k := entryKey(e)
				if seen[k] || (e.ID == "" && e.Path == "") {
					continue
				}
				seen[k] = true
				if e.Folder {
					if n.Depth+1 > cfg.MaxDepth || e.Path == "" {
						truncated = true
						continue
					}
					queue = append(queue, node{Path: e.Path, Depth: n.Depth + 1, Dirs: append(append([]string(nil), n.Dirs...), safeName(e.Name, e.ID))})
					continue
				}
				out = append(out, file{E: e, Dirs: n.Dirs})
			}
			// A connector handing back a cursor it gave before would page forever.
			if l.Next == "" || cursors[l.Next] {
				break
			}
			cursors[l.Next] = true
			cursor = l.Next
			if entries++; entries > cfg.MaxEntries {
				return out, true, nil
			}
		}
	}
	return out, truncated, nil
}

// syncFile stores one file if it is new or changed. A per-file problem is
// counted in res; the error returned ends the whole sync.
func (r *run) syncFile(ctx context.Context, f file, res *Result) error {
	key := entryKey(f.E)
	prev, had := r.items[key]
	var cur filemeta.Item
	exists := false
	if had {
		item, err := r.s.files.Get(ctx, r.p, prev.FileID)
		switch {
		case err == nil:
			cur, exists = item, true
		case !errors.Is(err, tenancy.ErrNotFound):
			return err
		}
	}
	if exists && prev.Size == f.E.Size && prev.Modified.Equal(f.E.Modified.UTC().Truncate(time.Microsecond)) {
		res.Unchanged++
		return nil
	}
	req := wire.DownloadRequest{Connection: r.d.ConnectionID, Service: r.d.Service, Path: f.E.Path, MaxBytes: r.s.cfg.MaxFileBytes}
	if req.Path == "" {
		req.ID = f.E.ID
	}
	dl, err := r.s.remote.Download(ctx, r.p, req)
	if err != nil {
		return r.fileError(f, f.E.Name, err, res)
	}
	name := safeName(dl.Name, f.E.ID)
	if dl.Name == "" {
		name = safeName(f.E.Name, f.E.ID)
	}
	var stored filemeta.Item
	if exists {
		stored, _, err = r.s.files.SetContent(ctx, r.p, cur.ID, bytes.NewReader(dl.Data), cur.Version, "synced from data source "+r.d.Label)
		if err != nil {
			return r.fileError(f, name, err, res)
		}
		res.Changed++
	} else {
		folder, err := r.folder(ctx, f.Dirs)
		if err != nil {
			return classify(err)
		}
		stored, _, err = r.s.files.Upload(ctx, r.p, files.Upload{WorkspaceID: r.d.WorkspaceID, Name: name, MIMEType: dl.MIMEType,
			FolderID: folder, Description: "synced from data source " + r.d.Label, Content: bytes.NewReader(dl.Data)})
		if err != nil {
			return r.fileError(f, name, err, res)
		}
		res.New++
	}
	ok, err := r.s.store.PutDataSourceItem(ctx, r.d.ID, r.seq, dsrecord.DataSourceItem{EntryID: key, EntryPath: f.E.Path, Name: name,
		Size: f.E.Size, Modified: f.E.Modified, FileID: stored.ID})
	if err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("%w: the data source was deleted or synced anew meanwhile", ErrPermanent)
	}
	r.items[key] = dsrecord.DataSourceItem{EntryID: key, Size: f.E.Size, Modified: f.E.Modified.UTC().Truncate(time.Microsecond), FileID: stored.ID}
	return nil
}

// fileError is entryError for a file, which the checkpoint keeps when
// the next sync may store it.
func (r *run) fileError(f file, name string, err error, res *Result) error {
	if !fatal(err) && !skippable(err) {
		r.left.Files = append(r.left.Files, f)
	}
	return r.entryError(name, err, res)
}

// entryError sorts a file's failure: the connection's failures end the
// sync (permanently); a file the host will never take (too large, a bad
// name, gone) is skipped; anything else fails the file, and the sync is
// retried for it.
func (r *run) entryError(name string, err error, res *Result) error {
	if fatal(err) {
		return classify(err)
	}
	if skippable(err) {
		res.Skipped++
	} else {
		res.Failed++
	}
	res.problem(name, err)
	return nil
}

// fatal: the connection cannot serve this sync at all.
func fatal(err error) bool {
	if errors.Is(err, connections.ErrRevoked) || errors.Is(err, connections.ErrExpired) || errors.Is(err, connections.ErrRejected) ||
		errors.Is(err, connections.ErrWrongProvider) || errors.Is(err, connections.ErrNoConnector) ||
		// The owner lost the workspace (or the right to write to it).
		errors.Is(err, tenancy.ErrNotFound) || errors.Is(err, tenancy.ErrForbidden) {
		return true
	}
	var ce *connections.ConnectorError
	if errors.As(err, &ce) {
		switch ce.Code {
		case "connection_revoked", "connection_expired", "connection_rejected", "wrong_provider", "wrong_auth", "host_refused", "no_connector", "forbidden":
			return true
		}
	}
	return false
}

// classify marks the errors retrying cannot fix as permanent.
func classify(err error) error {
	var ce *connections.ConnectorError
	if fatal(err) || (errors.As(err, &ce) && (ce.Code == "not_found" || ce.Code == "invalid_path" || ce.Code == "unsupported")) {
		return fmt.Errorf("%w: %w", ErrPermanent, err)
	}
	return err
}

func skippable(err error) bool {
	if errors.Is(err, tenancy.ErrInvalid) {
		return true
	}
	var ce *connections.ConnectorError
	if errors.As(err, &ce) {
		switch ce.Code {
		case "too_large", "not_found", "invalid_path", "unsupported", "invalid_request":
			return true
		}
	}
	return false
}

// folder returns the workspace folder for dirs under the source's own
// folder (named after its label), making what is missing.
func (r *run) folder(ctx context.Context, dirs []string) (string, error) {
	if r.folders == nil {
		if err := r.loadFolders(ctx); err != nil {
			return "", err
		}
	}
	if r.root == "" {
		if r.d.FolderID != "" && r.known(r.d.FolderID) {
			r.root = r.d.FolderID
		} else {
			id, err := r.child(ctx, "", r.d.Label)
			if err != nil {
				return "", err
			}
			r.root = id
			if _, err := r.s.store.UpdateDataSourceSync(ctx, r.d.ID, r.seq, r.s.now(), dsrecord.DataSourceSync{State: dsrecord.SyncRunning, FolderID: &id}); err != nil {
				return "", err
			}
		}
	}
	at := r.root
	for _, name := range dirs {
		id, err := r.child(ctx, at, name)
		if err != nil {
			return "", err
		}
		at = id
	}
	return at, nil
}

func (r *run) loadFolders(ctx context.Context) error {
	fs, err := r.s.files.Folders(ctx, r.p, r.d.WorkspaceID)
	if err != nil {
		return err
	}
	r.folders = map[string]string{}
	for _, f := range fs {
		r.folders[f.ParentID+"/"+f.Name] = f.ID
	}
	return nil
}

func (r *run) known(id string) bool {
	for _, v := range r.folders {
		if v == id {
			return true
		}
	}
	return false
}

// child returns the folder name under parent, making it if needed (one
// made meanwhile by someone else is used).
func (r *run) child(ctx context.Context, parent, name string) (string, error) {
	if id, ok := r.folders[parent+"/"+name]; ok {
		return id, nil
	}
	f, err := r.s.files.CreateFolder(ctx, r.p, filemeta.Folder{WorkspaceID: r.d.WorkspaceID, ParentID: parent, Name: name})
	if errors.Is(err, tenancy.ErrConflict) {
		if err := r.loadFolders(ctx); err != nil {
			return "", err
		}
		if id, ok := r.folders[parent+"/"+name]; ok {
			return id, nil
		}
	}
	if err != nil {
		return "", fmt.Errorf("datasources: folder %q: %w", name, err)
	}
	r.folders[parent+"/"+name] = f.ID
	return f.ID, nil
}

// safeName makes a provider's name a workspace name: separators and
// control characters replaced, trimmed; an unusable one becomes the
// entry's id.
func safeName(name, id string) string {
	name = strings.Map(func(c rune) rune {
		if c == '/' || c == '\\' || c < 0x20 || c == 0x7f {
			return '_'
		}
		return c
	}, name)
	name = strings.TrimSpace(name)
	for len(name) > 200 {
		_, size := utf8.DecodeLastRuneInString(name)
		name = name[:len(name)-size]
	}
	if name == "" || name == "." || name == ".." {
		name = "entry-" + safeID(id)
	}
	return name
}

func safeID(id string) string {
	return strings.Map(func(c rune) rune {
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' {
			return c
		}
		return '_'
	}, id)
}
