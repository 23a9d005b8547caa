// Package tenancy is agenthost's model of who owns what: tenants (customer
// organisations), their users, workspaces and the roles users
// hold in workspaces. Every read and write of tenant data names the acting
// [Principal]; the store turns the principal's roles into the WHERE clause of
// the query, so there is no unscoped read path outside administrative code.
package tenancy

import (
	"errors"
	"time"
)

// Errors every store and service of tenant data reports, checked with errors.Is.
var (
	// ErrNotFound: the thing does not exist or the principal may not see it.
	// The two are deliberately indistinguishable, so probing reveals nothing.
	ErrNotFound = errors.New("not found")
	// ErrForbidden: the principal may see the thing but not do this to it.
	ErrForbidden = errors.New("forbidden")
	// ErrUnauthenticated: no valid credentials.
	ErrUnauthenticated = errors.New("unauthenticated")
	// ErrConflict: the change collides with existing data (a taken name).
	ErrConflict = errors.New("conflict")
	// ErrInvalid: the request itself is malformed.
	ErrInvalid = errors.New("invalid")
)

// Tenant is one organisation; nothing is shared across tenants.
type Tenant struct {
	ID        string    `json:"id"`
	Name      string    `json:"name"`
	CreatedAt time.Time `json:"createdAt"`
}

// User belongs to exactly one tenant. An admin user has access level ALL on
// every workspace of the tenant.
type User struct {
	ID        string    `json:"id"`
	TenantID  string    `json:"tenantId"`
	Email     string    `json:"email"`
	Name      string    `json:"name"`
	Admin     bool      `json:"admin"`
	CreatedAt time.Time `json:"createdAt"`
	// DeactivatedAt is set while the user is deactivated: they can neither
	// sign in nor use their API tokens, and their data stays.
	DeactivatedAt *time.Time `json:"deactivatedAt,omitempty"`
	// LastSignInAt is when the user last opened a browser session.
	LastSignInAt *time.Time `json:"lastSignInAt,omitempty"`
}

// Workspace is one feature instance of a tenant (a chatbot, a trustee desk…)
// with its own members, files and tool set. Kind names the feature.
type Workspace struct {
	ID        string    `json:"id"`
	TenantID  string    `json:"tenantId"`
	Name      string    `json:"name"`
	Kind      string    `json:"kind"`
	CreatedAt time.Time `json:"createdAt"`
}

// Membership gives a user a role in a workspace.
type Membership struct {
	WorkspaceID string `json:"workspaceId"`
	UserID      string `json:"userId"`
	Role        Role   `json:"role"`
}

// Principal is the acting identity of a request: a user in a tenant. It is
// made by authentication (an API token) or by administrative code; its
// workspace roles are read from the store at query time, so a revoked
// membership takes effect on the next query.
type Principal struct {
	TenantID string
	UserID   string
	// Admin is the tenant administrator: level ALL in every workspace.
	Admin bool
}
