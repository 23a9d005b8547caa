package tenancy

import (
	"fmt"
	"slices"
)

// Level is how far an access reaches: one's own (MY), a workspace's
// (GROUP) or the tenant's (ALL).
type Level int

// The access levels, from none to the whole tenant.
const (
	// None: nothing.
	None Level = iota
	// My: rows the user created.
	My
	// Group: every row of the workspace.
	Group
	// All: every row of the tenant (tenant administrators).
	All
)

func (l Level) String() string {
	switch l {
	case My:
		return "MY"
	case Group:
		return "GROUP"
	case All:
		return "ALL"
	}
	return "NONE"
}

// Role is a named pair of access levels a user holds in one workspace.
type Role string

// The built-in roles. Read and write levels per role:
//
//	role      read   write
//	viewer    GROUP  NONE
//	member    GROUP  MY
//	manager   GROUP  GROUP
//	personal  MY     MY
//
// A tenant administrator has ALL for both, in every workspace.
const (
	RoleViewer   Role = "viewer"
	RoleMember   Role = "member"
	RoleManager  Role = "manager"
	RolePersonal Role = "personal"
)

var roleLevels = map[Role][2]Level{
	RoleViewer:   {Group, None},
	RoleMember:   {Group, My},
	RoleManager:  {Group, Group},
	RolePersonal: {My, My},
}

// Levels returns the role's read and write levels; an unknown role has none.
func (r Role) Levels() (read, write Level) {
	l := roleLevels[r]
	return l[0], l[1]
}

// Valid reports whether r is a known role.
func (r Role) Valid() bool { _, ok := roleLevels[r]; return ok }

// Validate returns ErrInvalid naming the role when it is unknown.
func (r Role) Validate() error {
	if !r.Valid() {
		return fmt.Errorf("%w: unknown role %q (want one of %v)", ErrInvalid, r, Roles())
	}
	return nil
}

// Roles lists the built-in roles in a stable order.
func Roles() []Role {
	rs := make([]Role, 0, len(roleLevels))
	for r := range roleLevels {
		rs = append(rs, r)
	}
	slices.Sort(rs)
	return rs
}

// RolesWith lists the roles whose read (write=false) or write level is
// exactly l, for building scope clauses.
func RolesWith(write bool, l Level) []Role {
	var out []Role
	for _, r := range Roles() {
		read, w := r.Levels()
		if (!write && read == l) || (write && w == l) {
			out = append(out, r)
		}
	}
	return out
}
