package files

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"path"
	"slices"
	"strings"

	"github.com/agenthost/agenthost/host/blob"
	"github.com/agenthost/agenthost/host/files/filemeta"
	"github.com/agenthost/agenthost/host/tenancy"
)

// Store is what the file service needs from the database. Every method that
// takes a principal applies its access scope.
type Store interface {
	Levels(ctx context.Context, p tenancy.Principal, workspaceID string) (read, write tenancy.Level, err error)
	// InsertFile records a file whose blob is stored. With dedupe it first
	// looks, within the principal's read scope and the file's workspace, for a
	// file with the same bytes and name and returns that one instead
	// (existing=true).
	InsertFile(ctx context.Context, p tenancy.Principal, f filemeta.Item, dedupe bool) (_ filemeta.Item, existing bool, _ error)
	File(ctx context.Context, p tenancy.Principal, id string) (filemeta.Item, error)
	Files(ctx context.Context, p tenancy.Principal, f filemeta.Filter) (filemeta.Page, error)
	UpdateFile(ctx context.Context, p tenancy.Principal, id string, u filemeta.Update) (filemeta.Item, error)
	DeleteFile(ctx context.Context, p tenancy.Principal, id string) error
	InsertFolder(ctx context.Context, p tenancy.Principal, f filemeta.Folder) (filemeta.Folder, error)
	Folder(ctx context.Context, p tenancy.Principal, id string) (filemeta.Folder, error)
	Folders(ctx context.Context, p tenancy.Principal, workspaceID string) ([]filemeta.Folder, error)
	UpdateFolder(ctx context.Context, p tenancy.Principal, id string, u filemeta.FolderUpdate) (filemeta.Folder, error)
	DeleteFolder(ctx context.Context, p tenancy.Principal, id string) error
	// SetContent makes c the file's content as its next version, refusing
	// with tenancy.ErrConflict when the file is no longer on c.BaseVersion.
	SetContent(ctx context.Context, p tenancy.Principal, id string, c filemeta.Content) (filemeta.Item, filemeta.Version, error)
	FileVersions(ctx context.Context, p tenancy.Principal, id string) ([]filemeta.Version, error)
	FileVersion(ctx context.Context, p tenancy.Principal, id string, version int) (filemeta.Version, error)
	// InsertProposal records a pending proposal; p must be able to change
	// the file, which must still be on the proposal's base version.
	InsertProposal(ctx context.Context, p tenancy.Principal, pr filemeta.Proposal) (filemeta.Proposal, error)
	Proposal(ctx context.Context, p tenancy.Principal, id string) (filemeta.Proposal, error)
	Proposals(ctx context.Context, p tenancy.Principal, fileID string) ([]filemeta.Proposal, error)
	// DecideProposal accepts (a new version, in the same transaction) or
	// rejects a pending proposal.
	DecideProposal(ctx context.Context, p tenancy.Principal, id string, d filemeta.Decision) (filemeta.Proposal, filemeta.Item, error)
}

// Blobs is the content-addressed storage file content lives in.
type Blobs interface {
	Put(ctx context.Context, r io.Reader, max int64) (sha string, size int64, err error)
	Open(ctx context.Context, sha string) (blob.Reader, error)
}

// Indexer is told of every newly stored file, so it can be indexed in the
// background (the knowledge store's ingestion queue).
type Indexer interface {
	Index(ctx context.Context, f filemeta.Item) error
}

// Service is the file management API the HTTP layer, tools and ingestion use.
type Service struct {
	store   Store
	blobs   Blobs
	maxSize int64
	indexer Indexer
	logger  *slog.Logger
}

// WithIndexer makes every new file go to ix after it is stored; a failure
// to hand it over is logged, never the upload's failure (the file is stored).
func (s *Service) WithIndexer(ix Indexer, logger *slog.Logger) *Service {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	s.indexer, s.logger = ix, logger
	return s
}

// DefaultMaxUpload is the upload limit when none is configured: 1 GiB.
const DefaultMaxUpload int64 = 1 << 30

// NewService returns a file service; maxUpload ≤ 0 means DefaultMaxUpload.
func NewService(store Store, blobs Blobs, maxUpload int64) *Service {
	if maxUpload <= 0 {
		maxUpload = DefaultMaxUpload
	}
	return &Service{store: store, blobs: blobs, maxSize: maxUpload}
}

// ErrTooLarge wraps blob.ErrTooLarge for uploads over the configured limit.
var ErrTooLarge = blob.ErrTooLarge

// Upload is one file to store.
type Upload struct {
	WorkspaceID string
	Name        string
	// MIMEType; empty detects it from the name's extension, then the content.
	MIMEType    string
	FolderID    string
	Tags        []string
	Description string
	// Content is read to its end.
	Content io.Reader
	// NoDedupe stores a new file even when the same name and bytes exist.
	NoDedupe bool
}

// Upload stores a file. Content is streamed into the blob store and hashed;
// the file becomes visible in one transaction only after every byte is
// stored, so a failed or interrupted upload leaves nothing visible. When the
// same bytes under the same name already exist in the workspace and are
// readable by p, that file is returned with existing=true.
func (s *Service) Upload(ctx context.Context, p tenancy.Principal, u Upload) (_ filemeta.Item, existing bool, _ error) {
	if err := ValidateName("file", u.Name); err != nil {
		return filemeta.Item{}, false, err
	}
	tags, err := normalizeTags(u.Tags)
	if err != nil {
		return filemeta.Item{}, false, err
	}
	if u.Content == nil {
		return filemeta.Item{}, false, fmt.Errorf("%w: upload has no content", tenancy.ErrInvalid)
	}
	if _, write, err := s.store.Levels(ctx, p, u.WorkspaceID); err != nil {
		return filemeta.Item{}, false, err
	} else if write == tenancy.None {
		return filemeta.Item{}, false, fmt.Errorf("%w: no write access to workspace %q", tenancy.ErrForbidden, u.WorkspaceID)
	}
	var folders []filemeta.Folder
	if u.FolderID != "" {
		// The store checks it again in the insert's transaction; asking first
		// refuses an unknown folder before a byte is stored.
		if f, err := s.store.Folder(ctx, p, u.FolderID); err != nil {
			return filemeta.Item{}, false, err
		} else if f.WorkspaceID != u.WorkspaceID {
			return filemeta.Item{}, false, fmt.Errorf("%w: folder %q", tenancy.ErrNotFound, u.FolderID)
		}
	} else if folders, err = s.store.Folders(ctx, p, u.WorkspaceID); err != nil {
		return filemeta.Item{}, false, err
	} else if folders, err = s.ruleFolders(ctx, p, folders); err != nil {
		return filemeta.Item{}, false, err
	}

	content := bufio.NewReaderSize(u.Content, 512)
	mimeType := u.MIMEType
	if mimeType == "" {
		mimeType = detectMIME(u.Name, content)
	}
	sha, size, err := s.blobs.Put(ctx, content, s.maxSize)
	if err != nil {
		if errors.Is(err, blob.ErrTooLarge) {
			return filemeta.Item{}, false, fmt.Errorf("%w: upload %q exceeds the limit of %d bytes: %w", tenancy.ErrInvalid, u.Name, s.maxSize, err)
		}
		return filemeta.Item{}, false, fmt.Errorf("files: store content of %q: %w", u.Name, err)
	}
	item := filemeta.Item{
		WorkspaceID: u.WorkspaceID, Name: u.Name, MIMEType: mimeType, SHA256: sha, Size: size,
		FolderID: u.FolderID, Tags: tags, Description: u.Description, Status: filemeta.StatusActive,
	}
	if item.FolderID == "" {
		item.FolderID = autoFolder(folders, item)
	}
	stored, existing, err := s.store.InsertFile(ctx, p, item, !u.NoDedupe)
	if err == nil && existing {
		// The same bytes again, perhaps with tags the first upload lacked:
		// they are merged when the uploader may change the file (a member
		// re-uploading another's file leaves it as its owner tagged it).
		var added []string
		for _, t := range tags {
			if !slices.Contains(stored.Tags, t) {
				added = append(added, t)
			}
		}
		if len(added) > 0 {
			switch merged, uerr := s.Update(ctx, p, stored.ID, filemeta.Update{AddTags: added}); {
			case uerr == nil:
				stored = merged
			case !errors.Is(uerr, tenancy.ErrForbidden):
				return filemeta.Item{}, false, fmt.Errorf("files: merging the tags of a re-upload: %w", uerr)
			}
		}
	}
	if err == nil && !existing && s.indexer != nil {
		if ierr := s.indexer.Index(ctx, stored); ierr != nil {
			s.logger.Error("files: handing a new file to the indexer", "file", stored.ID, "err", ierr)
		}
	}
	return stored, existing, err
}

// detectMIME guesses a type from the extension, then from the first bytes:
// the document and archive formats net/http does not know first (RTF would
// otherwise be text/plain, a Word 97-2003 file octet-stream), then
// net/http's sniffing.
func detectMIME(name string, r *bufio.Reader) string {
	if t := mime.TypeByExtension(strings.ToLower(path.Ext(name))); t != "" {
		return t
	}
	head, _ := r.Peek(512)
	for _, m := range magics {
		if bytes.HasPrefix(head, []byte(m.prefix)) {
			return m.mime
		}
	}
	return http.DetectContentType(head)
}

// magics are the leading bytes of formats net/http's sniffing misses.
var magics = []struct{ prefix, mime string }{
	{`{\rtf`, "application/rtf"},
	{"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1", "application/x-ole-storage"}, // Word, Excel 97-2003 (the extractor tells which)
	{"7z\xbc\xaf\x27\x1c", "application/x-7z-compressed"},
	{"Rar!\x1a\x07", "application/vnd.rar"},
	{"\xfd7zXZ\x00", "application/x-xz"},
	{"BZh", "application/x-bzip2"},
}

// ruleFolders keeps the folders whose auto-rules may file p's files: a
// rule acts for the folder's creator, so it applies to files the creator
// may change — their own, or everyone's when their write level in the
// workspace is GROUP or more (a manager's). A member's rule thus sorts the
// member's own uploads and never captures a colleague's. The creator is
// taken as a plain member of the tenant (a tenant administrator's rules
// apply through their workspace role).
func (s *Service) ruleFolders(ctx context.Context, p tenancy.Principal, folders []filemeta.Folder) ([]filemeta.Folder, error) {
	var out []filemeta.Folder
	writes := map[string]tenancy.Level{}
	for _, fo := range folders {
		if fo.AutoRule == "" {
			continue
		}
		if fo.CreatedBy != p.UserID {
			w, ok := writes[fo.CreatedBy]
			if !ok {
				_, lw, err := s.store.Levels(ctx, tenancy.Principal{TenantID: fo.TenantID, UserID: fo.CreatedBy}, fo.WorkspaceID)
				switch {
				case errors.Is(err, tenancy.ErrNotFound):
					lw = tenancy.None // no longer a member: the rule files nothing of others
				case err != nil:
					return nil, err
				}
				w, writes[fo.CreatedBy] = lw, lw
			}
			if w < tenancy.Group {
				continue
			}
		}
		out = append(out, fo)
	}
	return out, nil
}

// autoFolder returns the first folder (by name) whose auto-rule the file
// matches, or "".
func autoFolder(folders []filemeta.Folder, f filemeta.Item) string {
	for _, fo := range folders {
		if fo.AutoRule == "" {
			continue
		}
		if r, err := parseRule(fo.AutoRule); err == nil && r.matches(f) {
			return fo.ID
		}
	}
	return ""
}

// Get returns a file's metadata.
func (s *Service) Get(ctx context.Context, p tenancy.Principal, id string) (filemeta.Item, error) {
	return s.store.File(ctx, p, id)
}

// Open returns a file's metadata and a reader of its content; the caller
// closes the reader.
func (s *Service) Open(ctx context.Context, p tenancy.Principal, id string) (filemeta.Item, blob.Reader, error) {
	f, err := s.store.File(ctx, p, id)
	if err != nil {
		return filemeta.Item{}, nil, err
	}
	r, err := s.blobs.Open(ctx, f.SHA256)
	if err != nil {
		return filemeta.Item{}, nil, fmt.Errorf("files: content of %s: %w", id, err)
	}
	return f, r, nil
}

// List returns one page of the files p can read that match the filter.
func (s *Service) List(ctx context.Context, p tenancy.Principal, f filemeta.Filter) (filemeta.Page, error) {
	if f.Status != "" && !f.Status.Valid() {
		return filemeta.Page{}, fmt.Errorf("%w: unknown status %q", tenancy.ErrInvalid, f.Status)
	}
	if f.Order != "" && f.Order != filemeta.OrderNewest && f.Order != filemeta.OrderName {
		return filemeta.Page{}, fmt.Errorf("%w: unknown order %q (newest, name)", tenancy.ErrInvalid, f.Order)
	}
	if f.Limit < 0 || f.Limit > 1000 {
		return filemeta.Page{}, fmt.Errorf("%w: limit %d out of 1..1000", tenancy.ErrInvalid, f.Limit)
	}
	return s.store.Files(ctx, p, f)
}

// Update changes a file's metadata.
func (s *Service) Update(ctx context.Context, p tenancy.Principal, id string, u filemeta.Update) (filemeta.Item, error) {
	if u.Name != nil {
		if err := ValidateName("file", *u.Name); err != nil {
			return filemeta.Item{}, err
		}
	}
	if u.Status != nil && !u.Status.Valid() {
		return filemeta.Item{}, fmt.Errorf("%w: unknown status %q", tenancy.ErrInvalid, *u.Status)
	}
	var err error
	if u.AddTags, err = normalizeTags(u.AddTags); err != nil {
		return filemeta.Item{}, err
	}
	if u.RemoveTags, err = normalizeTags(u.RemoveTags); err != nil {
		return filemeta.Item{}, err
	}
	f, err := s.store.UpdateFile(ctx, p, id, u)
	if err != nil || f.FolderID != "" || len(u.AddTags) == 0 {
		return f, err
	}
	// A retagged file in no folder may now fall under a folder's auto-rule.
	folders, err := s.store.Folders(ctx, p, f.WorkspaceID)
	if err != nil {
		return f, err
	}
	if folders, err = s.ruleFolders(ctx, p, folders); err != nil {
		return f, err
	}
	if to := autoFolder(folders, f); to != "" {
		return s.store.UpdateFile(ctx, p, id, filemeta.Update{Folder: &to})
	}
	return f, nil
}

// Delete removes a file. Its blob stays while other files use it.
func (s *Service) Delete(ctx context.Context, p tenancy.Principal, id string) error {
	return s.store.DeleteFile(ctx, p, id)
}

// CreateFolder makes a folder.
func (s *Service) CreateFolder(ctx context.Context, p tenancy.Principal, f filemeta.Folder) (filemeta.Folder, error) {
	if err := ValidateName("folder", f.Name); err != nil {
		return filemeta.Folder{}, err
	}
	if f.AutoRule != "" {
		if _, err := parseRule(f.AutoRule); err != nil {
			return filemeta.Folder{}, err
		}
	}
	if _, write, err := s.store.Levels(ctx, p, f.WorkspaceID); err != nil {
		return filemeta.Folder{}, err
	} else if write == tenancy.None {
		return filemeta.Folder{}, fmt.Errorf("%w: no write access to workspace %q", tenancy.ErrForbidden, f.WorkspaceID)
	}
	return s.store.InsertFolder(ctx, p, f)
}

// Folders lists a workspace's folders.
func (s *Service) Folders(ctx context.Context, p tenancy.Principal, workspaceID string) ([]filemeta.Folder, error) {
	return s.store.Folders(ctx, p, workspaceID)
}

// UpdateFolder renames or moves a folder; a move into itself or one of its
// descendants is refused.
func (s *Service) UpdateFolder(ctx context.Context, p tenancy.Principal, id string, u filemeta.FolderUpdate) (filemeta.Folder, error) {
	if u.Name != nil {
		if err := ValidateName("folder", *u.Name); err != nil {
			return filemeta.Folder{}, err
		}
	}
	if u.AutoRule != nil && *u.AutoRule != "" {
		if _, err := parseRule(*u.AutoRule); err != nil {
			return filemeta.Folder{}, err
		}
	}
	return s.store.UpdateFolder(ctx, p, id, u)
}

// DeleteFolder removes a folder and its subfolders; their files stay, in no
// folder.
func (s *Service) DeleteFolder(ctx context.Context, p tenancy.Principal, id string) error {
	return s.store.DeleteFolder(ctx, p, id)
}
