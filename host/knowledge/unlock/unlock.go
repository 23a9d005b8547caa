package unlock

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/agenthost/agenthost/host/knowledge/kindex"
	"github.com/agenthost/agenthost/host/tenancy"
)

// Bounds on passwords tried: a few per file and hour, so the endpoint is
// no way to guess one (docs/knowledge.md#passwords).
const (
	PasswordAttempts = 5
	PasswordWindow   = time.Hour
	// MaxPasswordLen bounds a password given (PDF and RAR passwords are
	// at most 127 bytes; 7z's are longer but rarely).
	MaxPasswordLen = 1024
)

// ErrTooManyAttempts: the file's passwords were tried PasswordAttempts
// times within PasswordWindow.
var ErrTooManyAttempts = errors.New("too many passwords tried for this file")

// StateReader reads a file's content state for a principal who may read
// the file (tenancy.ErrNotFound otherwise): the store's ContentState.
type StateReader interface {
	ContentState(ctx context.Context, p tenancy.Principal, fileID string) (kindex.ContentState, error)
}

// Indexer indexes a file again with the password given for it
// (ingest.Pipeline).
type Indexer interface {
	IngestWithPassword(ctx context.Context, fileID, password string) error
}

// Service takes the passwords people give for their encrypted files: it
// checks that the principal may read the file and that the file waits for a
// password, bounds the attempts per file, and indexes the file with it.
// The password is held only for that call.
type Service struct {
	in     Indexer
	states StateReader
	now    func() time.Time

	mu    sync.Mutex
	tries map[string][]time.Time // file id → attempts within the window
}

// New returns an unlocker indexing with in.
func New(in Indexer, states StateReader) *Service {
	return &Service{in: in, states: states, now: time.Now, tries: map[string][]time.Time{}}
}

// Unlock indexes fileID with password for p and returns the file's state
// after it: indexed, or encrypted with ReasonWrongPassword (a wrong
// password loses nothing). ErrNotEncrypted (wrapped in tenancy.ErrConflict)
// when the file does not wait for a password; ErrTooManyAttempts past the
// bound.
func (u *Service) Unlock(ctx context.Context, p tenancy.Principal, fileID, password string) (kindex.ContentState, error) {
	if password == "" || len(password) > MaxPasswordLen {
		return kindex.ContentState{}, fmt.Errorf("%w: a password of 1 to %d bytes is needed", tenancy.ErrInvalid, MaxPasswordLen)
	}
	st, err := u.states.ContentState(ctx, p, fileID)
	if err != nil {
		return kindex.ContentState{}, err
	}
	if ShownStatus(st.Status, st.Error) != StatusEncrypted {
		return kindex.ContentState{}, fmt.Errorf("%w: %w (status %s)", tenancy.ErrConflict, ErrNotEncrypted, st.Status)
	}
	if !u.attempt(fileID) {
		return kindex.ContentState{}, fmt.Errorf("%w: at most %d per %s", ErrTooManyAttempts, PasswordAttempts, PasswordWindow)
	}
	if err := u.in.IngestWithPassword(ctx, fileID, password); err != nil {
		if errors.Is(err, ErrWrongPassword) {
			// Nothing is recorded on the content, which other files
			// read: the answer says so, as a wrong password's state.
			st.Error = kindex.ReasonWrongPassword + "the password given does not open " + st.Index.FileName + "; nothing was lost, give the right one"
			return st, nil
		}
		if errors.Is(err, ErrNotEncrypted) {
			err = fmt.Errorf("%w: %w", tenancy.ErrConflict, err)
		}
		return kindex.ContentState{}, err
	}
	return u.states.ContentState(ctx, p, fileID)
}

// attempt counts one attempt on fileID and reports whether it is within
// the bound.
func (u *Service) attempt(fileID string) bool {
	u.mu.Lock()
	defer u.mu.Unlock()
	now := u.now()
	kept := u.tries[fileID][:0]
	for _, t := range u.tries[fileID] {
		if now.Sub(t) < PasswordWindow {
			kept = append(kept, t)
		}
	}
	if len(kept) >= PasswordAttempts {
		u.tries[fileID] = kept
		return false
	}
	u.tries[fileID] = append(kept, now)
	// Files whose attempts have all aged out are forgotten.
	for id, ts := range u.tries {
		if len(ts) > 0 && now.Sub(ts[len(ts)-1]) >= PasswordWindow {
			delete(u.tries, id)
		}
	}
	return true
}

// settleWait and settlePoll bound how long UnlockWhenSettled waits for a
// new upload's first indexing, and how often it looks.
const (
	settleWait = 10 * time.Minute
	settlePoll = 200 * time.Millisecond
)

// UnlockWhenSettled serves a password given with the upload: it waits
// (within ctx, at most settleWait) until fileID's first indexing ends, then
// gives the password if the file turned out encrypted (Unlock) and returns
// the state either way. The password is held by this call only; a client
// that goes away ends it.
func (u *Service) UnlockWhenSettled(ctx context.Context, p tenancy.Principal, fileID, password string) (kindex.ContentState, error) {
	ctx, cancel := context.WithTimeout(ctx, settleWait)
	defer cancel()
	tick := time.NewTicker(settlePoll)
	defer tick.Stop()
	for {
		st, err := u.states.ContentState(ctx, p, fileID)
		if err != nil {
			return kindex.ContentState{}, err
		}
		switch ShownStatus(st.Status, st.Error) {
		case StatusEncrypted:
			return u.Unlock(ctx, p, fileID, password)
		case kindex.StatusIndexed, kindex.StatusEmbedding, kindex.StatusFailed:
			return st, nil
		}
		select {
		case <-ctx.Done():
			return kindex.ContentState{}, fmt.Errorf("knowledge: waiting for %s to be indexed before using its password: %w", fileID, ctx.Err())
		case <-tick.C:
		}
	}
}
