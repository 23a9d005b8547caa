package unlock

import (
	"context"
	"encoding/json"
	"errors"
	"strings"

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

// PasswordOf is the password WithPassword put in ctx, "" for none.
func PasswordOf(ctx context.Context) string {
	pw, _ := ctx.Value(passwordKey{}).(string)
	return pw
}

// WithPasswordArg adds ctx's password, if any, to the arguments of p's
// tool when the tool's input schema declares "password": a plugin that
// takes none (the office extractor, a third-party one) would refuse the
// call's arguments, and is given the document as without a password.
func WithPasswordArg(ctx context.Context, p *wasm.Plugin, tool string, args map[string]string) map[string]string {
	if pw := PasswordOf(ctx); pw != "" && takesPassword(p, tool) {
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

// ErrNotEncrypted: the file does not wait for a password (it is indexed,
// being indexed, or failed for another reason).
var ErrNotEncrypted = errors.New("the file does not wait for a password")

// ErrWrongPassword: the password given does not open the file's content,
// which was read already with another file's password; nothing changed.
var ErrWrongPassword = errors.New("the password given does not open the file")
