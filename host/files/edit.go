package files

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/aymanbagabas/go-udiff"

	"github.com/agenthost/agenthost/host/blob"
	"github.com/agenthost/agenthost/host/files/filemeta"
	"github.com/agenthost/agenthost/host/tenancy"
)

// MaxEditBytes bounds the text files the editing operations (append,
// replace, propose, rebase) hold in memory: 8 MiB.
const MaxEditBytes = 8 << 20

// IsText reports whether data may be edited as text: valid UTF-8 without
// NUL bytes.
func IsText(data []byte) bool {
	return utf8.Valid(data) && bytes.IndexByte(data, 0) < 0
}

// SetContent stores r as the file's next version (created from version
// base; 0 means whatever is current). The content is stored before the
// version is recorded, in one transaction, so a failed write leaves the file
// as it was; content over the upload limit is refused.
func (s *Service) SetContent(ctx context.Context, p tenancy.Principal, id string, r io.Reader, base int, note string) (filemeta.Item, filemeta.Version, error) {
	sha, size, err := s.blobs.Put(ctx, r, s.maxSize)
	if err != nil {
		if errors.Is(err, blob.ErrTooLarge) {
			return filemeta.Item{}, filemeta.Version{}, fmt.Errorf("%w: the new content of file %q exceeds the limit of %d bytes: %w", tenancy.ErrInvalid, id, s.maxSize, err)
		}
		return filemeta.Item{}, filemeta.Version{}, fmt.Errorf("files: store new content of %s: %w", id, err)
	}
	item, v, err := s.store.SetContent(ctx, p, id, filemeta.Content{SHA256: sha, Size: size, BaseVersion: base, Note: note})
	if err == nil {
		s.reindex(ctx, item)
	}
	return item, v, err
}

// Append adds data at the end of a text file as its next version.
func (s *Service) Append(ctx context.Context, p tenancy.Principal, id string, data []byte, base int, note string) (filemeta.Item, filemeta.Version, error) {
	item, cur, err := s.Text(ctx, p, id, 0)
	if err != nil {
		return filemeta.Item{}, filemeta.Version{}, err
	}
	if base != 0 && base != item.Version {
		return filemeta.Item{}, filemeta.Version{}, fmt.Errorf("%w: file %q is at version %d, and the change was made on version %d: read it again and redo the change",
			tenancy.ErrConflict, item.Name, item.Version, base)
	}
	if !IsText(data) {
		return filemeta.Item{}, filemeta.Version{}, fmt.Errorf("%w: the text to append is not UTF-8 text", tenancy.ErrInvalid)
	}
	return s.SetContent(ctx, p, id, io.MultiReader(strings.NewReader(cur), bytes.NewReader(data)), item.Version, note)
}

// Text returns a text file's content at a version (0: the current one).
// A binary file, or one larger than MaxEditBytes, is refused.
func (s *Service) Text(ctx context.Context, p tenancy.Principal, id string, version int) (filemeta.Item, string, error) {
	item, err := s.store.File(ctx, p, id)
	if err != nil {
		return filemeta.Item{}, "", err
	}
	sha, size := item.SHA256, item.Size
	if version != 0 && version != item.Version {
		v, err := s.store.FileVersion(ctx, p, id, version)
		if err != nil {
			return filemeta.Item{}, "", err
		}
		sha, size = v.SHA256, v.Size
	}
	if size > MaxEditBytes {
		return filemeta.Item{}, "", fmt.Errorf("%w: file %q has %d bytes; text edits handle at most %d", tenancy.ErrInvalid, item.Name, size, MaxEditBytes)
	}
	r, err := s.blobs.Open(ctx, sha)
	if err != nil {
		return filemeta.Item{}, "", fmt.Errorf("files: content of %s: %w", id, err)
	}
	defer r.Close()
	data, err := io.ReadAll(io.LimitReader(r, MaxEditBytes+1))
	if err != nil {
		return filemeta.Item{}, "", fmt.Errorf("files: content of %s: %w", id, err)
	}
	if !IsText(data) {
		return filemeta.Item{}, "", fmt.Errorf("%w: file %q (%s) is not text, so it cannot be edited as text", tenancy.ErrInvalid, item.Name, item.MIMEType)
	}
	return item, string(data), nil
}

// LooksText reports whether a file's current content is text, judged by
// its first 8 KiB (a rune cut at the end does not count).
func (s *Service) LooksText(ctx context.Context, p tenancy.Principal, id string) (bool, error) {
	_, r, err := s.Open(ctx, p, id)
	if err != nil {
		return false, err
	}
	defer r.Close()
	head, err := io.ReadAll(io.LimitReader(r, 8<<10))
	if err != nil {
		return false, fmt.Errorf("files: content of %s: %w", id, err)
	}
	if len(head) == 8<<10 {
		for i := 1; i <= utf8.UTFMax && i <= len(head); i++ {
			if utf8.RuneStart(head[len(head)-i]) {
				if !utf8.FullRune(head[len(head)-i:]) {
					head = head[:len(head)-i]
				}
				break
			}
		}
	}
	return IsText(head), nil
}

// Versions lists a file's versions, newest first.
func (s *Service) Versions(ctx context.Context, p tenancy.Principal, id string) ([]filemeta.Version, error) {
	return s.store.FileVersions(ctx, p, id)
}

// Version returns one version of a file.
func (s *Service) Version(ctx context.Context, p tenancy.Principal, id string, version int) (filemeta.Version, error) {
	return s.store.FileVersion(ctx, p, id, version)
}

// OpenVersion opens a version's content; the caller closes the reader.
func (s *Service) OpenVersion(ctx context.Context, p tenancy.Principal, id string, version int) (filemeta.Version, blob.Reader, error) {
	v, err := s.store.FileVersion(ctx, p, id, version)
	if err != nil {
		return filemeta.Version{}, nil, err
	}
	r, err := s.blobs.Open(ctx, v.SHA256)
	if err != nil {
		return filemeta.Version{}, nil, fmt.Errorf("files: content of %s version %d: %w", id, version, err)
	}
	return v, r, nil
}

// Restore makes an older version's content the file's next version (the
// versions in between are kept).
func (s *Service) Restore(ctx context.Context, p tenancy.Principal, id string, version int) (filemeta.Item, filemeta.Version, error) {
	old, err := s.store.FileVersion(ctx, p, id, version)
	if err != nil {
		return filemeta.Item{}, filemeta.Version{}, err
	}
	item, err := s.store.File(ctx, p, id)
	if err != nil {
		return filemeta.Item{}, filemeta.Version{}, err
	}
	if old.Version == item.Version {
		return filemeta.Item{}, filemeta.Version{}, fmt.Errorf("%w: version %d is the current version of file %q", tenancy.ErrInvalid, version, item.Name)
	}
	item, v, err := s.store.SetContent(ctx, p, id, filemeta.Content{SHA256: old.SHA256, Size: old.Size, BaseVersion: item.Version,
		Note: fmt.Sprintf("restore of version %d", version)})
	if err == nil {
		s.reindex(ctx, item)
	}
	return item, v, err
}

// ProposeRequest is an edit proposed to a text file.
type ProposeRequest struct {
	FileID     string
	WorkflowID string
	// BaseVersion is the version the edit was made on (0: the current one).
	BaseVersion int
	// Content is the whole proposed text.
	Content     string
	Description string
}

// Propose records a proposed edit with its unified diff, computed here from
// the base version and the proposed text (never taken from the proposer).
// It needs the right to change the file; an edit that changes nothing, or
// one made on a version the file has left, is refused.
func (s *Service) Propose(ctx context.Context, p tenancy.Principal, r ProposeRequest) (filemeta.Proposal, error) {
	if !IsText([]byte(r.Content)) {
		return filemeta.Proposal{}, fmt.Errorf("%w: the proposed content is not UTF-8 text", tenancy.ErrInvalid)
	}
	if len(r.Content) > MaxEditBytes || int64(len(r.Content)) > s.maxSize {
		return filemeta.Proposal{}, fmt.Errorf("%w: the proposed content has %d bytes, more than the limit of %d", tenancy.ErrInvalid, len(r.Content), min(MaxEditBytes, s.maxSize))
	}
	if utf8.RuneCountInString(r.Description) > 2000 {
		return filemeta.Proposal{}, fmt.Errorf("%w: the description is longer than 2000 characters", tenancy.ErrInvalid)
	}
	item, base, err := s.Text(ctx, p, r.FileID, r.BaseVersion)
	if err != nil {
		return filemeta.Proposal{}, err
	}
	if r.BaseVersion == 0 {
		r.BaseVersion = item.Version
	}
	if base == r.Content {
		return filemeta.Proposal{}, fmt.Errorf("%w: the proposed content is the same as version %d of %q", tenancy.ErrInvalid, r.BaseVersion, item.Name)
	}
	diff := udiff.Unified("a/"+item.Name, "b/"+item.Name, base, r.Content)
	sha, size, err := s.blobs.Put(ctx, strings.NewReader(r.Content), s.maxSize)
	if err != nil {
		return filemeta.Proposal{}, fmt.Errorf("files: store proposed content: %w", err)
	}
	return s.store.InsertProposal(ctx, p, filemeta.Proposal{FileID: item.ID, WorkflowID: r.WorkflowID, BaseVersion: r.BaseVersion,
		SHA256: sha, Size: size, Diff: diff, Description: r.Description})
}

// Proposal returns a proposal whose file p can read.
func (s *Service) Proposal(ctx context.Context, p tenancy.Principal, id string) (filemeta.Proposal, error) {
	return s.store.Proposal(ctx, p, id)
}

// Proposals lists a file's proposals, newest first.
func (s *Service) Proposals(ctx context.Context, p tenancy.Principal, fileID string) ([]filemeta.Proposal, error) {
	return s.store.Proposals(ctx, p, fileID)
}

// Decided is the outcome of a decision on a proposal.
type Decided struct {
	Proposal filemeta.Proposal `json:"proposal"`
	File     filemeta.Item     `json:"file"`
	// Rebased is true when the proposal was made on an older version and
	// was merged onto the current one.
	Rebased bool `json:"rebased"`
}

// Reject rejects a pending proposal; the file stays as it is.
func (s *Service) Reject(ctx context.Context, p tenancy.Principal, id string) (Decided, error) {
	x, item, err := s.store.DecideProposal(ctx, p, id, filemeta.Decision{})
	return Decided{Proposal: x, File: item}, err
}

// Accept makes a pending proposal the file's next version. A proposal made
// on a version the file has since left is rebased when its changes and the
// file's touch different lines; when they overlap it is refused
// (tenancy.ErrConflict, saying which versions), and nothing changes.
func (s *Service) Accept(ctx context.Context, p tenancy.Principal, id string) (Decided, error) {
	x, err := s.store.Proposal(ctx, p, id)
	if err != nil {
		return Decided{}, err
	}
	if x.Status != filemeta.ProposalPending {
		return Decided{}, fmt.Errorf("%w: proposal %q is already %s", tenancy.ErrConflict, id, x.Status)
	}
	item, err := s.store.File(ctx, p, x.FileID)
	if err != nil {
		return Decided{}, err
	}
	var d filemeta.Decision
	rebased := false
	if item.Version != x.BaseVersion {
		ct, err := s.rebase(ctx, p, x, item)
		if err != nil {
			return Decided{}, err
		}
		d.Content, rebased = &ct, true
	}
	d.Accept = true
	x, item, err = s.store.DecideProposal(ctx, p, id, d)
	if err != nil {
		return Decided{}, err
	}
	s.reindex(ctx, item)
	return Decided{Proposal: x, File: item, Rebased: rebased}, nil
}

// rebase merges the proposal's changes (base → proposed) with the file's
// since (base → current) and stores the result.
func (s *Service) rebase(ctx context.Context, p tenancy.Principal, x filemeta.Proposal, cur filemeta.Item) (filemeta.Content, error) {
	conflict := func(why string) error {
		return fmt.Errorf("%w: proposal %s was made on version %d of %q, which is now at version %d, and %s: ask for a new proposal on version %d",
			tenancy.ErrConflict, x.ID, x.BaseVersion, cur.Name, cur.Version, why, cur.Version)
	}
	_, base, err := s.Text(ctx, p, x.FileID, x.BaseVersion)
	if err != nil {
		return filemeta.Content{}, err
	}
	_, now, err := s.Text(ctx, p, x.FileID, cur.Version)
	if err != nil {
		return filemeta.Content{}, conflict("its current content cannot be merged as text")
	}
	r, err := s.blobs.Open(ctx, x.SHA256)
	if err != nil {
		return filemeta.Content{}, fmt.Errorf("files: proposed content: %w", err)
	}
	defer r.Close()
	proposed, err := io.ReadAll(io.LimitReader(r, MaxEditBytes+1))
	if err != nil {
		return filemeta.Content{}, fmt.Errorf("files: proposed content: %w", err)
	}
	merged, ok := udiff.Merge(udiff.Lines(base, string(proposed)), udiff.Lines(base, now))
	if !ok {
		return filemeta.Content{}, conflict("both changed the same lines")
	}
	text, err := udiff.Apply(base, merged)
	if err != nil {
		return filemeta.Content{}, conflict("the changes do not merge: " + err.Error())
	}
	sha, size, err := s.blobs.Put(ctx, strings.NewReader(text), s.maxSize)
	if err != nil {
		return filemeta.Content{}, fmt.Errorf("files: store rebased content: %w", err)
	}
	return filemeta.Content{SHA256: sha, Size: size, BaseVersion: cur.Version}, nil
}

// reindex hands a file with new content to the indexer.
func (s *Service) reindex(ctx context.Context, item filemeta.Item) {
	if s.indexer == nil {
		return
	}
	if err := s.indexer.Index(ctx, item); err != nil {
		s.logger.Error("files: handing a changed file to the indexer", "file", item.ID, "err", err)
	}
}
