package connrecord

import (
	"time"
)

// ConnectionRecord is one user's connection to an external provider as the
// store keeps it. Secret is already sealed by the caller (package
// connections): the store never sees a credential in clear.
type ConnectionRecord struct {
	ID       string
	TenantID string
	UserID   string
	Provider string
	Label    string
	// Auth is "oauth2", "token" or "basic".
	Auth    string
	BaseURL string
	// Account names the remote account (an e-mail, a user name); not secret.
	Account string
	Scopes  []string
	Secret  []byte
	// ExpiresAt is when the current access token ends; zero when it does not.
	ExpiresAt time.Time
	// Version counts changes of the secret (optimistic locking of refreshes).
	Version   int64
	RevokedAt time.Time
	CreatedAt time.Time
	UpdatedAt time.Time
	// CheckedAt is when the connection was last tried against its
	// provider (zero: never), and LastError what went wrong then ("": it
	// answered).
	CheckedAt time.Time
	LastError string
	// Deployment is the provider's deployment the connection reaches
	// ("cloud", "datacenter"; "": as its base URL tells).
	Deployment string
}

// Revoked reports whether the connection was revoked.
func (r ConnectionRecord) Revoked() bool { return !r.RevokedAt.IsZero() }

// ConnectionAuthState is an OAuth authorisation in flight.
type ConnectionAuthState struct {
	State    string
	TenantID string
	UserID   string
	Provider string
	Label    string
	// Verifier is the sealed PKCE code verifier.
	Verifier  []byte
	ExpiresAt time.Time
}
