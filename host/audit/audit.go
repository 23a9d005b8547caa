// Package audit keeps each tenant's audit log: an append-only record of who
// did what, when, from where and to what (sign-ins, tokens, memberships and
// roles, plugins, grants, MCP servers, connections, spending limits, SCIM
// provisioning, tool calls with external side effects).
//
// Code that changes something calls a Recorder with an Entry naming the
// action (a stable dotted name, see the constants) and its target; who
// acted and from where come from the context (WithActor, WithRequest: the
// API's middleware puts them there), so callers do not pass IP addresses
// around. The Log fills them in, bounds what is stored, and appends the
// entry to the store. The store has no way to change an entry (on both
// databases a trigger refuses updates); entries leave only when they are
// older than the retention (Sweep, a periodic job) or with their tenant.
//
// A failed Record is an error for the caller to log: the change it
// describes has happened by then, and undoing a user's change because its
// record could not be written would lose more than it protects.
package audit

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"
)

// ActorKind says what kind of identity acted.
type ActorKind string

// The kinds of actor.
const (
	// ActorUser is a person (or a program with a person's API token).
	ActorUser ActorKind = "user"
	// ActorSCIM is an identity provider pushing users and groups with a
	// tenant's SCIM token; ActorID is the token's id.
	ActorSCIM ActorKind = "scim"
	// ActorSystem is the host itself or its operator's command line.
	ActorSystem ActorKind = "system"
)

// Ways a user acts (Actor.Via).
const (
	ViaToken   = "token"
	ViaSession = "session"
	ViaCLI     = "cli"
)

// Actor is who acted.
type Actor struct {
	Kind ActorKind `json:"kind"`
	// ID is the user's id (ActorUser), the SCIM token's (ActorSCIM), or
	// empty.
	ID string `json:"id,omitempty"`
	// Via is how a user acted: ViaToken, ViaSession, ViaCLI.
	Via string `json:"via,omitempty"`
}

// Request is where a request came from.
type Request struct {
	IP        string
	UserAgent string
}

// Entry is one record of the log.
type Entry struct {
	// ID and At are the store's.
	ID       string    `json:"id"`
	TenantID string    `json:"tenantId"`
	At       time.Time `json:"at"`
	Actor    Actor     `json:"actor"`
	// IP and UserAgent are where the request came from (empty for the
	// host's own work).
	IP        string `json:"ip,omitempty"`
	UserAgent string `json:"userAgent,omitempty"`
	// Action is a stable dotted name (the constants below).
	Action string `json:"action"`
	// TargetType and TargetID name what was acted on (a "token", a
	// "user", a "plugin" by name…).
	TargetType string `json:"targetType,omitempty"`
	TargetID   string `json:"targetId,omitempty"`
	// WorkspaceID is the workspace concerned, when one is.
	WorkspaceID string `json:"workspaceId,omitempty"`
	// Detail says what changed: a JSON object, at most MaxDetail bytes
	// (a larger one is replaced by a note of its size).
	Detail json.RawMessage `json:"detail"`
}

// Recorder appends entries to the audit log; the Log is one. Code that
// records declares it as a dependency, nil-safe through Record.
type Recorder interface {
	Record(ctx context.Context, e Entry) error
}

// Limits of what one entry keeps.
const (
	// MaxDetail bounds an entry's detail (bytes of JSON).
	MaxDetail = 16 << 10
	// MaxField bounds the short text fields (target, user agent…).
	MaxField = 512
)

// actionName is the shape of an action: lower-case dotted words.
var actionName = regexp.MustCompile(`^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)+$`)

// ErrInvalid is an entry the log refuses (no tenant, a malformed action,
// a detail that is not a JSON object).
var ErrInvalid = errors.New("audit: invalid entry")

// Normalize fills in what ctx knows (actor, request), checks e and bounds
// its fields; it is what Log.Record stores.
func Normalize(ctx context.Context, e Entry) (Entry, error) {
	if e.TenantID == "" {
		return e, fmt.Errorf("%w: %s has no tenant", ErrInvalid, e.Action)
	}
	if !actionName.MatchString(e.Action) {
		return e, fmt.Errorf("%w: action %q is not a dotted lower-case name", ErrInvalid, e.Action)
	}
	if e.Actor.Kind == "" {
		if a, ok := ActorFrom(ctx); ok {
			e.Actor = a
		} else {
			e.Actor = Actor{Kind: ActorSystem}
		}
	}
	switch e.Actor.Kind {
	case ActorUser, ActorSCIM, ActorSystem:
	default:
		return e, fmt.Errorf("%w: actor kind %q", ErrInvalid, e.Actor.Kind)
	}
	if e.IP == "" && e.UserAgent == "" {
		if r, ok := RequestFrom(ctx); ok {
			e.IP, e.UserAgent = r.IP, r.UserAgent
		}
	}
	e.IP, e.UserAgent = Clip(e.IP, 64), Clip(e.UserAgent, MaxField)
	e.TargetType, e.TargetID, e.WorkspaceID = Clip(e.TargetType, 64), Clip(e.TargetID, MaxField), Clip(e.WorkspaceID, 64)
	e.Actor.ID, e.Actor.Via = Clip(e.Actor.ID, MaxField), Clip(e.Actor.Via, 32)
	if len(e.Detail) == 0 {
		e.Detail = json.RawMessage(`{}`)
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(e.Detail, &obj); err != nil || obj == nil {
		return e, fmt.Errorf("%w: %s: the detail is not a JSON object", ErrInvalid, e.Action)
	}
	if len(e.Detail) > MaxDetail {
		e.Detail = json.RawMessage(fmt.Sprintf(`{"truncated":true,"bytes":%d}`, len(e.Detail)))
	}
	return e, nil
}

// Detail marshals v (a struct or map) into an entry's detail; a value that
// does not marshal becomes a note saying so, never a lost entry.
func Detail(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		b, _ = json.Marshal(map[string]string{"detailError": err.Error()})
	}
	return b
}

// Clip shortens s to at most n bytes on a rune boundary, marking the cut.
func Clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n - len("…")
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// Store is where the log keeps its entries (the store.DB).
type Store interface {
	AppendAudit(ctx context.Context, e Entry) (Entry, error)
}

// Log is the Recorder of the running host.
type Log struct {
	store  Store
	logger *slog.Logger
}

// NewLog returns a log that appends to s; logger (nil: discard) receives
// a line for every entry that could not be stored.
func NewLog(s Store, logger *slog.Logger) *Log {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &Log{store: s, logger: logger}
}

// Record appends e (see Normalize). It is not cancelled with ctx: a
// change that happened is recorded even when its request was abandoned.
// Failures are logged and returned.
func (l *Log) Record(ctx context.Context, e Entry) error {
	if l == nil {
		return nil
	}
	n, err := Normalize(ctx, e)
	if err == nil {
		_, err = l.store.AppendAudit(context.WithoutCancel(ctx), n)
	}
	if err != nil {
		l.logger.Error("audit entry not recorded", "action", e.Action, "tenant", e.TenantID, "target", e.TargetID, "err", err)
		return fmt.Errorf("audit: record %s: %w", e.Action, err)
	}
	return nil
}

// Record calls r.Record, or does nothing when r is nil (a host or a test
// without an audit log). Its error is logged by the Log; callers that have
// nothing else to do with it may ignore it.
func Record(ctx context.Context, r Recorder, e Entry) error {
	if r == nil {
		return nil
	}
	return r.Record(ctx, e)
}

type actorKey struct{}
type requestKey struct{}

// WithActor returns ctx carrying who acts.
func WithActor(ctx context.Context, a Actor) context.Context {
	return context.WithValue(ctx, actorKey{}, a)
}

// ActorFrom returns the actor ctx carries.
func ActorFrom(ctx context.Context) (Actor, bool) {
	a, ok := ctx.Value(actorKey{}).(Actor)
	return a, ok
}

// WithRequest returns ctx carrying where the request came from.
func WithRequest(ctx context.Context, r Request) context.Context {
	return context.WithValue(ctx, requestKey{}, r)
}

// RequestFrom returns the request metadata ctx carries.
func RequestFrom(ctx context.Context) (Request, bool) {
	r, ok := ctx.Value(requestKey{}).(Request)
	return r, ok
}

// Summarize returns a bounded, secret-free summary of a tool call's
// arguments: the top-level keys with their values' types and, for short
// strings, numbers and booleans, the values; keys that look like secrets
// are named but never shown, and contents (data, body, text…) only by
// their size. It is what tool.called entries keep.
func Summarize(args json.RawMessage) map[string]any {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(args, &obj); err != nil {
		return map[string]any{"bytes": len(args)}
	}
	out := make(map[string]any, len(obj))
	n := 0
	for k, raw := range obj {
		if n == 32 {
			out["…"] = fmt.Sprintf("%d more", len(obj)-n)
			break
		}
		n++
		key := Clip(k, 64)
		if secretKey(k) {
			out[key] = "[redacted]"
			continue
		}
		if contentKey(k) {
			// A file's bytes or a message's body: its size, not its text.
			out[key] = fmt.Sprintf("(%d bytes)", len(raw))
			continue
		}
		var v any
		_ = json.Unmarshal(raw, &v)
		switch x := v.(type) {
		case string:
			out[key] = Clip(x, 120)
		case float64, bool, nil:
			out[key] = x
		case []any:
			out[key] = fmt.Sprintf("[%d items]", len(x))
		default:
			out[key] = fmt.Sprintf("{%d bytes}", len(raw))
		}
	}
	return out
}

func contentKey(k string) bool {
	switch strings.ToLower(k) {
	case "data", "content", "body", "html", "text", "bytes":
		return true
	}
	return false
}

func secretKey(k string) bool {
	k = strings.ToLower(k)
	for _, s := range []string{"password", "secret", "token", "key", "auth", "credential", "cookie"} {
		if strings.Contains(k, s) {
			return true
		}
	}
	return false
}
