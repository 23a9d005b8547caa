package ingest

import (
	"context"
	"errors"
	"fmt"

	"github.com/agenthost/agenthost/host/files/filemeta"
	"github.com/agenthost/agenthost/host/knowledge/kindex"
	"github.com/agenthost/agenthost/host/knowledge/unlock"
	"github.com/agenthost/agenthost/host/wasm"
)

// encryptedReason is the reason recorded for an extraction that failed for
// want of a password (or a wrong one), "" for any other failure. name
// names the document; the extractor's message is kept after it.
func encryptedReason(name string, err error) string {
	var we *wasm.Error
	if !errors.As(err, &we) {
		return ""
	}
	switch we.Code {
	case unlock.CodeEncrypted:
		return kindex.ReasonEncrypted + name + " needs its password (give it with POST /api/v1/files/{id}/password): " + we.Message
	case unlock.CodeWrongPassword:
		return kindex.ReasonWrongPassword + "the password given does not open " + name + "; nothing was lost, give the right one"
	}
	return ""
}

// encryptedError is an extraction refused for want of the right password:
// permanent (no retry opens it), its message the reason recorded, which
// ShownStatus reads.
type encryptedError string

func (e encryptedError) Error() string { return string(e) }

// Is makes it an ErrPermanent.
func (e encryptedError) Is(target error) bool { return target == ErrPermanent }

// EncryptedClaimer is what giving a password needs of the store: a claim
// that takes a content only while it waits for its password (stored
// failed with ReasonEncrypted or ReasonWrongPassword), so a password
// never races an indexing in progress or redoes an indexed one.
type EncryptedClaimer interface {
	ClaimEncryptedContent(ctx context.Context, tenantID, sha string) (bool, error)
}

// IngestWithPassword indexes fileID's content again with password, when it
// waits for one (ErrNotEncrypted otherwise). The password goes to the
// extractor in this call's arguments only (WithPassword); it ends as
// indexed, or encrypted again with ReasonWrongPassword. The file it is
// given for is unlocked (PasswordLocks); for a content read already with
// another file's password, the password is checked and the file unlocked
// (ErrWrongPassword when it does not open it).
func (in *Pipeline) IngestWithPassword(ctx context.Context, fileID, password string) error {
	cl, ok := in.store.(EncryptedClaimer)
	if !ok {
		return fmt.Errorf("knowledge: %w: the store cannot claim encrypted contents", unlock.ErrNotEncrypted)
	}
	f, err := in.store.FileForIndexing(ctx, fileID)
	if err != nil {
		return fmt.Errorf("knowledge: %w: %w", ErrPermanent, err)
	}
	locks, _ := in.store.(PasswordLocks)
	claimed, err := cl.ClaimEncryptedContent(ctx, f.TenantID, f.SHA256)
	if err != nil {
		return err
	}
	if !claimed {
		if locks == nil {
			return fmt.Errorf("knowledge: %s: %w", f.Name, unlock.ErrNotEncrypted)
		}
		return in.unlockRead(ctx, locks, f, password)
	}
	_, err = in.ingestClaimed(unlock.WithPassword(ctx, password), f, true)
	var enc encryptedError
	if errors.As(err, &enc) {
		// The outcome is recorded on the content (a wrong password);
		// the caller reads it there.
		return nil
	}
	if err != nil || locks == nil {
		return err
	}
	// The password opened the content (unless it is recorded failed, as
	// a container whose entries it did not open is): the file it was
	// given for reads it; every other file with its bytes stays locked.
	_, err = locks.GivePassword(ctx, f.ID)
	return err
}

// unlockRead serves a password given for a file whose content was read
// already with a password given for another file: the password is checked
// with the extractor (checkPassword) and, when it opens the document, the
// file is unlocked without extracting it again. ErrWrongPassword when it
// does not; ErrNotEncrypted when the file is not locked.
func (in *Pipeline) unlockRead(ctx context.Context, locks PasswordLocks, f filemeta.Item, password string) error {
	locked, err := locks.PasswordLocked(ctx, f.ID)
	if err != nil {
		return err
	}
	if !locked {
		return fmt.Errorf("knowledge: %s: %w", f.Name, unlock.ErrNotEncrypted)
	}
	ok, err := in.checkPassword(ctx, f, password)
	if err != nil {
		return err
	}
	if !ok {
		in.logger.Info("password refused for a read content", "file", f.ID, "name", f.Name)
		return fmt.Errorf("knowledge: %s: %w", f.Name, unlock.ErrWrongPassword)
	}
	if given, err := locks.GivePassword(ctx, f.ID); err != nil || !given {
		// The content failed meanwhile (indexed again without a
		// password): it waits for a password as a whole again.
		return errors.Join(err, fmt.Errorf("knowledge: %s: %w", f.Name, unlock.ErrNotEncrypted))
	}
	in.logger.Info("password given for a read content", "file", f.ID, "name", f.Name)
	return nil
}
