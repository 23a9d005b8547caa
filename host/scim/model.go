package scim

import (
	"context"
	"time"
)

// User is a SCIM user: one agenthost user of the tenant, linked to what
// the identity provider knows of them.
type User struct {
	ID          string
	TenantID    string
	UserName    string
	ExternalID  string
	GivenName   string
	FamilyName  string
	DisplayName string
	// Email is the address the user signs in with (users.email): the
	// primary e-mail the provider sent, else the userName.
	Email  string
	Active bool
	Groups []Ref
	// Created and Modified are the SCIM link's times.
	Created, Modified time.Time
}

// Group is a SCIM group of the tenant.
type Group struct {
	ID          string
	TenantID    string
	DisplayName string
	ExternalID  string
	Members     []Ref
	Created     time.Time
	Modified    time.Time
}

// Ref names a user (a group's member) or a group (a user's group).
type Ref struct {
	Value   string
	Display string
}

// Condition is one "attribute eq value" of a filter; a filter is their
// conjunction. Attributes are the lower-cased SCIM names ("username",
// "externalid", "id", "displayname", "emails.value").
type Condition struct {
	Attr, Value string
}

// Mapping says what a group gives its members: Role in WorkspaceID, or
// (WorkspaceID "") the tenant's admin when Role is "admin".
type Mapping struct {
	GroupName   string `json:"group"`
	WorkspaceID string `json:"workspaceId,omitempty"`
	Role        string `json:"role"`
}

// AdminRole is the role of a Mapping that makes its group's members
// tenant admins.
const AdminRole = "admin"

// Store keeps what provisioning changes (the store.DB). Every method is
// scoped by tenant: a SCIM token acts in its tenant only.
type Store interface {
	// SCIMToken returns the tenant and token id of a SCIM token secret;
	// a malformed, unknown or revoked one is tenancy.ErrUnauthenticated.
	SCIMToken(ctx context.Context, secret string) (tenantID, tokenID string, err error)

	// CreateSCIMUser makes the user (or adopts the tenant's user of the
	// same e-mail address that no SCIM link has yet) and links it; a
	// userName already linked is tenancy.ErrConflict.
	CreateSCIMUser(ctx context.Context, u User) (User, error)
	SCIMUser(ctx context.Context, tenantID, id string) (User, error)
	// SCIMUsers lists the linked users matching every condition, by
	// userName, from start (0-based), at most count, and how many match.
	SCIMUsers(ctx context.Context, tenantID string, filter []Condition, start, count int) ([]User, int, error)
	// UpdateSCIMUser replaces the user's attributes (not Active).
	UpdateSCIMUser(ctx context.Context, u User) (User, error)
	// UnlinkSCIMUser removes the user's link and group memberships (and
	// what they granted); the user itself stays, deactivated by the caller.
	UnlinkSCIMUser(ctx context.Context, tenantID, id string) error
	DeactivateUser(ctx context.Context, tenantID, userID string) error
	ReactivateUser(ctx context.Context, tenantID, userID string) error

	CreateSCIMGroup(ctx context.Context, g Group) (Group, error)
	SCIMGroup(ctx context.Context, tenantID, id string) (Group, error)
	SCIMGroups(ctx context.Context, tenantID string, filter []Condition, start, count int) ([]Group, int, error)
	// UpdateSCIMGroup sets the group's name and externalId and, when
	// members is not nil, replaces its members; add and remove then
	// apply. Members' workspace roles follow (the mappings).
	UpdateSCIMGroup(ctx context.Context, g Group, members, add, remove []string) (Group, error)
	DeleteSCIMGroup(ctx context.Context, tenantID, id string) error
}
