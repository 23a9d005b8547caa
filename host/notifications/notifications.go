// Package notifications keeps what a person is told about work that ended
// or waits for them while they look elsewhere (docs/ui.md#notifications):
// a background job that ended, a data source's sync that ended, a tool call
// that waits for their approval. The packages that know of these events
// record a Notification through a Service; the person reads their own,
// newest first with the number unread, marks them read, and follows them
// live (Watch wakes the streams of this host at once; other hosts' are
// read again at an interval).
//
// A notification is the person's alone and names its workspace: it is
// shown only while they are still a member there.
package notifications

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/agenthost/agenthost/host/tenancy"
)

// Kind is what a notification is about.
type Kind string

// The kinds of notification.
const (
	// BackgroundJob: a background job ended; Status is its end (completed,
	// failed, cancelled), Name its description, Detail its summary or error.
	BackgroundJob Kind = "backgroundJob"
	// Sync: a data source's sync ended; Status is completed or failed,
	// Name the data source, Detail the sync's summary or error.
	Sync Kind = "sync"
	// Approval: a tool call waits for the person's decision; Name is the
	// tool, Detail why the model wants it, WorkflowID the conversation.
	Approval Kind = "approval"
)

// Valid reports whether k is a known kind.
func (k Kind) Valid() bool { return k == BackgroundJob || k == Sync || k == Approval }

// Bounds of the texts a notification keeps (longer ones are cut at a
// character boundary with an ellipsis: a notification points to the
// thing, it does not hold it).
const (
	MaxName   = 200
	MaxDetail = 500
)

// Notification is one thing a person is told.
type Notification struct {
	ID          string `json:"id"`
	TenantID    string `json:"-"`
	UserID      string `json:"-"`
	WorkspaceID string `json:"workspaceId,omitempty"`
	Kind        Kind   `json:"kind"`
	// SubjectID names the event: the job, approval or data source sync
	// (data source id and claim). A person is told of one subject once.
	SubjectID  string     `json:"subjectId"`
	Status     string     `json:"status,omitempty"`
	Name       string     `json:"name"`
	Detail     string     `json:"detail,omitempty"`
	WorkflowID string     `json:"workflowId,omitempty"`
	CreatedAt  time.Time  `json:"createdAt"`
	ReadAt     *time.Time `json:"readAt,omitempty"`
}

// Page is the newest of a person's notifications and how many of all of
// theirs are unread.
type Page struct {
	Items  []Notification `json:"items"`
	Unread int            `json:"unread"`
}

// Store keeps notifications.
type Store interface {
	// AddNotification records n for its user, if that user is in n's
	// tenant (tenancy.ErrNotFound otherwise); a subject already recorded
	// for the user is kept as it was (added false).
	AddNotification(ctx context.Context, n Notification) (added bool, err error)
	// Notifications returns p's own notifications, newest first, at most
	// limit, of workspaces p is still a member of, and how many of those
	// are unread.
	Notifications(ctx context.Context, p tenancy.Principal, limit int) (Page, error)
	// MarkNotificationsRead marks p's listed notifications read (all of
	// p's when ids is empty) and returns how many changed; ids of anyone
	// else's are ignored.
	MarkNotificationsRead(ctx context.Context, p tenancy.Principal, ids []string) (int, error)
}

// Service records notifications and wakes the streams that follow them.
type Service struct {
	store Store
	log   *slog.Logger

	mu       sync.Mutex
	watchers map[string]map[chan struct{}]struct{} // by user id
}

// New returns the service; logger may be nil.
func New(st Store, logger *slog.Logger) *Service {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &Service{store: st, log: logger, watchers: map[string]map[chan struct{}]struct{}{}}
}

// DefaultLimit is how many notifications a page holds unless asked.
const DefaultLimit = 30

// MaxLimit bounds a page.
const MaxLimit = 100

// Notify records n and wakes its person's streams on this host. It never
// fails the work it reports on: a notification that cannot be recorded is
// logged (the work's own state, in its list, still says how it ended).
func (s *Service) Notify(ctx context.Context, n Notification) {
	if s == nil {
		return
	}
	if err := n.check(); err != nil {
		s.log.Warn("notifications: not recorded", "kind", n.Kind, "subject", n.SubjectID, "err", err)
		return
	}
	n.Name = clip(n.Name, MaxName)
	n.Detail = clip(n.Detail, MaxDetail)
	// The work may have ended with its request's context; its
	// notification is still recorded.
	added, err := s.store.AddNotification(context.WithoutCancel(ctx), n)
	if err != nil {
		s.log.Warn("notifications: recording", "kind", n.Kind, "subject", n.SubjectID, "user", n.UserID, "err", err)
		return
	}
	if added {
		s.wake(n.UserID)
	}
}

func (n Notification) check() error {
	switch {
	case n.TenantID == "" || n.UserID == "":
		return fmt.Errorf("%w: a notification names its tenant and person", tenancy.ErrInvalid)
	case !n.Kind.Valid():
		return fmt.Errorf("%w: unknown notification kind %q", tenancy.ErrInvalid, n.Kind)
	case n.SubjectID == "":
		return fmt.Errorf("%w: a notification names its subject", tenancy.ErrInvalid)
	}
	return nil
}

// clip cuts s to at most n bytes of valid UTF-8, with an ellipsis when cut.
func clip(s string, n int) string {
	s = strings.ToValidUTF8(strings.TrimSpace(s), "\uFFFD")
	if len(s) <= n {
		return s
	}
	cut := n - len("…")
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// List returns p's newest notifications (limit ≤ 0: DefaultLimit; at most
// MaxLimit) and how many are unread.
func (s *Service) List(ctx context.Context, p tenancy.Principal, limit int) (Page, error) {
	if limit <= 0 {
		limit = DefaultLimit
	}
	pg, err := s.store.Notifications(ctx, p, min(limit, MaxLimit))
	if pg.Items == nil {
		pg.Items = []Notification{}
	}
	return pg, err
}

// MarkRead marks p's listed notifications read (all when ids is empty)
// and wakes p's streams, so every tab shows the new count.
func (s *Service) MarkRead(ctx context.Context, p tenancy.Principal, ids []string) (int, error) {
	if len(ids) > MaxLimit {
		return 0, fmt.Errorf("%w: at most %d ids at once", tenancy.ErrInvalid, MaxLimit)
	}
	n, err := s.store.MarkNotificationsRead(ctx, p, ids)
	if err == nil && n > 0 {
		s.wake(p.UserID)
	}
	return n, err
}

// Watch returns a channel that receives (without blocking the sender;
// wake-ups coalesce) whenever a notification of userID is recorded or
// marked read on this host, and a function that ends the watch.
func (s *Service) Watch(userID string) (<-chan struct{}, func()) {
	ch := make(chan struct{}, 1)
	s.mu.Lock()
	if s.watchers[userID] == nil {
		s.watchers[userID] = map[chan struct{}]struct{}{}
	}
	s.watchers[userID][ch] = struct{}{}
	s.mu.Unlock()
	return ch, func() {
		s.mu.Lock()
		delete(s.watchers[userID], ch)
		if len(s.watchers[userID]) == 0 {
			delete(s.watchers, userID)
		}
		s.mu.Unlock()
	}
}

func (s *Service) wake(userID string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for ch := range s.watchers[userID] {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
}
