package audit

import (
	"context"
	"encoding/base64"
	"fmt"
	"strings"
	"time"
)

// Query selects entries of one tenant, newest first. Empty fields do not
// filter.
type Query struct {
	TenantID string
	// Action is an exact action, or a prefix ending in "." or ".*"
	// ("plugin." and "plugin.*" select every plugin action).
	Action string
	// Actor is an actor's id (a user's, a SCIM token's).
	Actor string
	// Target is a target's id.
	Target string
	// Since (inclusive) and Until (exclusive) bound the time.
	Since, Until time.Time
	// Text is found, case-insensitively, in the action, target, actor,
	// IP and detail.
	Text string
	// Limit is the page size: 1..MaxPage, 0 means DefaultPage.
	Limit int
	// After is the cursor of the previous page (Page.Next).
	After string
}

// Page sizes.
const (
	DefaultPage = 100
	MaxPage     = 1000
)

// Page is one page of a search; Next is the cursor of the next page, ""
// at the end.
type Page struct {
	Entries []Entry `json:"entries"`
	Next    string  `json:"next,omitempty"`
}

// Cursor is the position after an entry (keyset paging: stable while
// entries are appended).
type Cursor struct {
	At time.Time
	ID string
}

// EncodeCursor makes an opaque cursor of the position after e.
func EncodeCursor(e Entry) string {
	return base64.RawURLEncoding.EncodeToString(fmt.Appendf(nil, "%d|%s", e.At.UnixMicro(), e.ID))
}

// DecodeCursor reads a cursor EncodeCursor made; "" is the start.
func DecodeCursor(s string) (Cursor, bool, error) {
	if s == "" {
		return Cursor{}, false, nil
	}
	raw, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return Cursor{}, false, fmt.Errorf("%w: malformed cursor", ErrInvalid)
	}
	at, id, ok := strings.Cut(string(raw), "|")
	var us int64
	if _, err := fmt.Sscanf(at, "%d", &us); !ok || err != nil || id == "" {
		return Cursor{}, false, fmt.Errorf("%w: malformed cursor", ErrInvalid)
	}
	return Cursor{At: time.UnixMicro(us).UTC(), ID: id}, true, nil
}

// Check validates q and applies its defaults.
func (q Query) Check() (Query, error) {
	if q.TenantID == "" {
		return q, fmt.Errorf("%w: a search needs a tenant", ErrInvalid)
	}
	switch {
	case q.Limit == 0:
		q.Limit = DefaultPage
	case q.Limit < 0 || q.Limit > MaxPage:
		return q, fmt.Errorf("%w: limit must be 1..%d", ErrInvalid, MaxPage)
	}
	if !q.Since.IsZero() && !q.Until.IsZero() && !q.Until.After(q.Since) {
		return q, fmt.Errorf("%w: until must be after since", ErrInvalid)
	}
	if len(q.Text) > 200 || len(q.Action) > 200 || len(q.Actor) > MaxField || len(q.Target) > MaxField {
		return q, fmt.Errorf("%w: a search term is too long", ErrInvalid)
	}
	if _, _, err := DecodeCursor(q.After); err != nil {
		return q, err
	}
	return q, nil
}

// Searcher finds entries (the store.DB).
type Searcher interface {
	SearchAudit(ctx context.Context, q Query) (Page, error)
}

// Each calls fn for every entry q selects, newest first, a page at a time
// (no transaction or connection is held between pages, so a slow reader
// of an export holds nothing). q.Limit is the page size.
func Each(ctx context.Context, s Searcher, q Query, fn func(Entry) error) error {
	if q.Limit == 0 {
		q.Limit = 500
	}
	for {
		p, err := s.SearchAudit(ctx, q)
		if err != nil {
			return err
		}
		for _, e := range p.Entries {
			if err := fn(e); err != nil {
				return err
			}
		}
		if p.Next == "" {
			return nil
		}
		q.After = p.Next
	}
}
