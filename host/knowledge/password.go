package knowledge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/agenthost/agenthost/host/files/filemeta"
	"github.com/agenthost/agenthost/host/knowledge/kindex"
	"github.com/agenthost/agenthost/host/wasm"
)

// StatusEncrypted is how a content that cannot be read without its
// password is shown (docs/knowledge.md#passwords). It is stored as a
// failure whose reason starts with ReasonEncrypted or ReasonWrongPassword,
// so every part of the pipeline that treats a failure as final (retries,
// on-demand reads, OCR) treats it so too; ShownStatus turns it into this
// status wherever a content's state is shown.
const StatusEncrypted kindex.Status = "encrypted"

// Codes an extractor plugin answers with for a password-protected
// document (pdk.Errorf): the document needs a password, or the password in
// the call's arguments does not open it.
const (
	CodeEncrypted     = "encrypted"
	CodeWrongPassword = "wrong_password"
)

// ShownStatus is the status to show for a stored status and its reason: a
// failure for want of a password (or for a wrong one) is StatusEncrypted.
func ShownStatus(s kindex.Status, reason string) kindex.Status {
	if s == kindex.StatusFailed && (strings.HasPrefix(reason, kindex.ReasonEncrypted) || strings.HasPrefix(reason, kindex.ReasonWrongPassword)) {
		return StatusEncrypted
	}
	return s
}

// passwordKey carries a document's password in the context of the one
// ingestion it was given for.
type passwordKey struct{}

// WithPassword returns ctx carrying the password of the document indexed
// under it. The password goes to the document's extractor in that call's
// arguments only: it is not stored, logged, or put in any event.
func WithPassword(ctx context.Context, password string) context.Context {
	if password == "" {
		return ctx
	}
	return context.WithValue(ctx, passwordKey{}, password)
}

// passwordOf is the password WithPassword put in ctx, "" for none.
func passwordOf(ctx context.Context) string {
	pw, _ := ctx.Value(passwordKey{}).(string)
	return pw
}

// withPasswordArg adds ctx's password, if any, to the arguments of p's
// tool when the tool's input schema declares "password": a plugin that
// takes none (the office extractor, a third-party one) would refuse the
// call's arguments, and is given the document as without a password.
func withPasswordArg(ctx context.Context, p *wasm.Plugin, tool string, args map[string]string) map[string]string {
	if pw := passwordOf(ctx); pw != "" && takesPassword(p, tool) {
		args["password"] = pw
	}
	return args
}

// takesPassword reports whether p's tool declares a "password" argument.
func takesPassword(p *wasm.Plugin, tool string) bool {
	if p == nil || p.Manifest() == nil {
		return false
	}
	for _, t := range p.Manifest().Tools {
		if t.Name != tool {
			continue
		}
		var schema struct {
			Properties map[string]json.RawMessage `json:"properties"`
		}
		if json.Unmarshal(t.InputSchema, &schema) != nil {
			return false
		}
		_, ok := schema.Properties["password"]
		return ok
	}
	return false
}

// encryptedReason is the reason recorded for an extraction that failed for
// want of a password (or a wrong one), "" for any other failure. name
// names the document; the extractor's message is kept after it.
func encryptedReason(name string, err error) string {
	var we *wasm.Error
	if !errors.As(err, &we) {
		return ""
	}
	switch we.Code {
	case CodeEncrypted:
		return kindex.ReasonEncrypted + name + " needs its password (give it with POST /api/v1/files/{id}/password): " + we.Message
	case CodeWrongPassword:
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

// ErrNotEncrypted: the file does not wait for a password (it is indexed,
// being indexed, or failed for another reason).
var ErrNotEncrypted = errors.New("the file does not wait for a password")

// IngestWithPassword indexes fileID's content again with password, when it
// waits for one (ErrNotEncrypted otherwise). The password goes to the
// extractor in this call's arguments only (WithPassword); it ends as
// indexed, or encrypted again with ReasonWrongPassword. The file it is
// given for is unlocked (PasswordLocks); for a content read already with
// another file's password, the password is checked and the file unlocked
// (ErrWrongPassword when it does not open it).
func (in *Ingester) IngestWithPassword(ctx context.Context, fileID, password string) error {
	cl, ok := in.store.(EncryptedClaimer)
	if !ok {
		return fmt.Errorf("knowledge: %w: the store cannot claim encrypted contents", ErrNotEncrypted)
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
			return fmt.Errorf("knowledge: %s: %w", f.Name, ErrNotEncrypted)
		}
		return in.unlockRead(ctx, locks, f, password)
	}
	_, err = in.ingestClaimed(WithPassword(ctx, password), f, true)
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
func (in *Ingester) unlockRead(ctx context.Context, locks PasswordLocks, f filemeta.Item, password string) error {
	locked, err := locks.PasswordLocked(ctx, f.ID)
	if err != nil {
		return err
	}
	if !locked {
		return fmt.Errorf("knowledge: %s: %w", f.Name, ErrNotEncrypted)
	}
	ok, err := in.checkPassword(ctx, f, password)
	if err != nil {
		return err
	}
	if !ok {
		in.logger.Info("password refused for a read content", "file", f.ID, "name", f.Name)
		return fmt.Errorf("knowledge: %s: %w", f.Name, ErrWrongPassword)
	}
	if given, err := locks.GivePassword(ctx, f.ID); err != nil || !given {
		// The content failed meanwhile (indexed again without a
		// password): it waits for a password as a whole again.
		return errors.Join(err, fmt.Errorf("knowledge: %s: %w", f.Name, ErrNotEncrypted))
	}
	in.logger.Info("password given for a read content", "file", f.ID, "name", f.Name)
	return nil
}
