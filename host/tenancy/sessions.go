package tenancy

import (
	"time"
)

// Session is a browser session of the workspace UI, as its owner sees it.
// The secret (the cookie's value) is returned once, by the store's OpenSession;
// the store keeps its SHA-256 only.
type Session struct {
	ID        string
	Principal Principal
	// CSRF is the synchronizer token the UI sends back in a header on every
	// unsafe request; it is not a cookie, so another site cannot send it.
	CSRF      string
	CreatedAt time.Time
	ExpiresAt time.Time
	// Origin is where a session opened without an API token came from
	// (OpenUserSession); zero for a token's session.
	Origin SessionOrigin
	// SecondFactorPending: the tenant requires a passkey as second factor
	// and this session's person has not proved one yet; the session may
	// only complete or cancel that step (CompleteSecondFactor).
	SecondFactorPending bool
}

// Sign-in methods a session reports (Session.Method).
const (
	MethodToken   = "token"
	MethodPasskey = "passkey"
)

// Method is how the session was opened: MethodToken for an API token's,
// else its origin's provider (MethodPasskey, "oidc:NAME").
func (s Session) Method() string {
	if s.Origin.Provider == "" {
		return MethodToken
	}
	return s.Origin.Provider
}

// SessionOrigin names where a session opened without an API token came
// from, so that the provider's logout can end it.
type SessionOrigin struct {
	// Provider is the sign-in method's name, e.g. "oidc:entra" or "passkey".
	Provider string
	// Subject is the person's identifier at the provider (the sub claim).
	Subject string
	// SID is the provider's session id (the sid claim), when it gives one.
	SID string
	// IDToken is the ID token the session was opened with: the hint
	// RP-initiated logout sends back to the provider.
	IDToken string
}
