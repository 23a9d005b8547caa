package ingest

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"

	"github.com/agenthost/agenthost/host/files/filemeta"
	"github.com/agenthost/agenthost/host/knowledge/kindex"
	"github.com/agenthost/agenthost/host/knowledge/unlock"
	"github.com/agenthost/agenthost/host/wasm"
)

// PasswordLocks is what a file whose content was read with a password
// given for another file needs of the store (docs/knowledge.md#passwords):
// the content is shared by every file with its bytes, each file opens it
// only once a password that opens it is given for that file.
type PasswordLocks interface {
	// PasswordLocked: the file's content was read with a password and
	// none was given for this file.
	PasswordLocked(ctx context.Context, fileID string) (bool, error)
	// GivePassword unlocks the file, when its content was read (not
	// failed), and reports whether it did.
	GivePassword(ctx context.Context, fileID string) (bool, error)
}

// checkPassword runs f's extractor with password, as indexing with it
// would, and reports whether the extractor opened the document with it;
// the text it extracts is dropped (the content is indexed already). A
// container has one of its stored entries resolved alone, and the password
// opens it when the bytes come out as stored.
func (in *Pipeline) checkPassword(ctx context.Context, f filemeta.Item, password string) (bool, error) {
	ctx = unlock.WithPassword(wasm.WithTenant(ctx, f.TenantID), password)
	r, err := in.blobs.Open(ctx, f.SHA256)
	if err != nil {
		return false, fmt.Errorf("knowledge: content of %s: %w", f.Name, err)
	}
	defer r.Close()
	if in.isContainer(f) {
		return in.checkContainerPassword(ctx, f, r)
	}
	_, _, err = in.extractor.Extract(ctx, f.Name, f.MIMEType, r)
	if err != nil {
		if encryptedReason(f.Name, err) != "" {
			return false, nil
		}
		return false, fmt.Errorf("knowledge: checking the password of %s: %w", f.Name, err)
	}
	return true, nil
}

// checkContainerPassword resolves the first stored entry of container f
// alone with ctx's password and compares its bytes with the stored ones.
func (in *Pipeline) checkContainerPassword(ctx context.Context, f filemeta.Item, r wasm.Input) (bool, error) {
	cp := in.containers
	entries, err := cp.store.ContainerEntriesForIndexing(ctx, f.TenantID, f.SHA256)
	if err != nil {
		return false, err
	}
	var want *kindex.ContainerEntry
	for i := range entries {
		if entries[i].SHA256 != "" && !entries[i].Container && entries[i].Error == "" {
			want = &entries[i]
			break
		}
	}
	if want == nil {
		// Nothing of it was read: nothing to open, nothing to compare.
		return false, nil
	}
	sink := &hashSink{}
	root := newEntrySink(nil, f.Name).root
	_, callErr := cp.resolver.Resolve(ctx, f.Name, f.MIMEType, root+"/"+want.Path, r, sink)
	if sink.got == want.SHA256 {
		return true, nil
	}
	var we *wasm.Error
	if callErr != nil && !(errors.As(callErr, &we) && (we.Code == unlock.CodeEncrypted || we.Code == unlock.CodeWrongPassword)) {
		return false, fmt.Errorf("knowledge: checking the password of %s: %w", f.Name, callErr)
	}
	return false, nil
}

// hashSink is the wasm.OutputSink of a password check: it keeps the sha256
// of the last file committed, and none of its bytes.
type hashSink struct{ got string }

func (s *hashSink) Begin(context.Context, wasm.OutputFile) (wasm.OutputWriter, error) {
	return &hashWriter{s: s, h: sha256.New()}, nil
}

func (s *hashSink) Fail(context.Context, string, string, string) error { return nil }

type hashWriter struct {
	s *hashSink
	h hash.Hash
}

func (w *hashWriter) Write(p []byte) (int, error) { return w.h.Write(p) }
func (w *hashWriter) Commit(context.Context) (string, error) {
	w.s.got = hex.EncodeToString(w.h.Sum(nil))
	return w.s.got, nil
}
func (w *hashWriter) Abort(error) {}
