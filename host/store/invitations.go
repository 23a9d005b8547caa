package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/agenthost/agenthost/host/tenancy"
)

// Invitations: a tenant admin invites a person by e-mail address. The
// invitation's link carries a secret (returned once, by CreateInvitation;
// the store keeps its SHA-256); whoever accepts it within its time, once,
// becomes (or, already being one, stays) a user of the tenant with the
// admin flag and workspace roles the invitation names. How the person
// proves who they are (an OpenID provider, a passkey) is the caller's
// business; the store makes the acceptance atomic.

// invitationPrefix marks invitation secrets, so one pasted as an API token
// or a session (or the reverse) is recognised as the wrong kind.
const invitationPrefix = "ahi_"

// MaxInvitationTTL bounds how long an invitation link can be valid.
const MaxInvitationTTL = 30 * 24 * time.Hour

// Grant is one workspace role an invitation gives.
type Grant struct {
	WorkspaceID string       `json:"workspaceId"`
	Role        tenancy.Role `json:"role"`
}

// Invitation is an invitation as its tenant's admins see it; the secret is
// never kept, so never listed.
type Invitation struct {
	ID         string     `json:"id"`
	TenantID   string     `json:"tenantId"`
	Email      string     `json:"email"`
	Admin      bool       `json:"admin"`
	Workspaces []Grant    `json:"workspaces"`
	CreatedBy  string     `json:"createdBy,omitempty"`
	CreatedAt  time.Time  `json:"createdAt"`
	ExpiresAt  time.Time  `json:"expiresAt"`
	AcceptedAt *time.Time `json:"acceptedAt,omitempty"`
	AcceptedBy string     `json:"acceptedBy,omitempty"`
	RevokedAt  *time.Time `json:"revokedAt,omitempty"`
}

// Pending reports whether the invitation can still be accepted at t.
func (i Invitation) Pending(t time.Time) bool {
	return i.AcceptedAt == nil && i.RevokedAt == nil && t.Before(i.ExpiresAt)
}

// NewInvitation is what an admin asks for.
type NewInvitation struct {
	Email      string
	Admin      bool
	Workspaces []Grant
	// TTL is how long the link is valid (at most MaxInvitationTTL).
	TTL time.Duration
}

func invitationHash(secret string) []byte { return sessionHash(secret) }

// normalEmail is the form e-mail addresses are compared in.
func normalEmail(s string) string { return strings.ToLower(strings.TrimSpace(s)) }

// CreateInvitation makes an invitation to the principal's tenant, which
// the principal must administer; every workspace must be the tenant's and
// every role valid. It returns the invitation and its secret (the link's),
// which cannot be shown again.
func (db *DB) CreateInvitation(ctx context.Context, p tenancy.Principal, n NewInvitation) (Invitation, string, error) {
	if !p.Admin {
		return Invitation{}, "", fmt.Errorf("%w: only a tenant admin invites", tenancy.ErrForbidden)
	}
	email := normalEmail(n.Email)
	if at := strings.LastIndexByte(email, '@'); at <= 0 || at == len(email)-1 || strings.ContainsAny(email, " \t\r\n<>,;") {
		return Invitation{}, "", fmt.Errorf("%w: %q is not an e-mail address", tenancy.ErrInvalid, n.Email)
	}
	if n.TTL <= 0 || n.TTL > MaxInvitationTTL {
		return Invitation{}, "", fmt.Errorf("%w: an invitation is valid for more than 0 and at most %s", tenancy.ErrInvalid, MaxInvitationTTL)
	}
	seen := map[string]bool{}
	for _, g := range n.Workspaces {
		if err := g.Role.Validate(); err != nil {
			return Invitation{}, "", err
		}
		if seen[g.WorkspaceID] {
			return Invitation{}, "", fmt.Errorf("%w: workspace %q named twice", tenancy.ErrInvalid, g.WorkspaceID)
		}
		seen[g.WorkspaceID] = true
	}
	created := now()
	inv := Invitation{ID: newID(), TenantID: p.TenantID, Email: email, Admin: n.Admin, Workspaces: append([]Grant{}, n.Workspaces...),
		CreatedBy: p.UserID, CreatedAt: created, ExpiresAt: created.Add(n.TTL)}
	secret := newSecret(invitationPrefix)
	err := db.tx(ctx, func(c conn) error {
		_, err := c.exec(ctx, `INSERT INTO invitations (id, tenant_id, email, admin, hash, created_by, created_at, expires_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?)`, inv.ID, inv.TenantID, inv.Email, inv.Admin, invitationHash(secret), p.UserID,
			micros(inv.CreatedAt), micros(inv.ExpiresAt))
		if isForeignKey(err) {
			return fmt.Errorf("%w: tenant %q or user %q", tenancy.ErrNotFound, p.TenantID, p.UserID)
		}
		if err != nil {
			return fmt.Errorf("store: create invitation: %w", err)
		}
		for _, g := range inv.Workspaces {
			// The workspace must be the inviting tenant's: an invitation is
			// never a bridge between tenants.
			res, err := c.exec(ctx, `INSERT INTO invitation_workspaces (invitation_id, workspace_id, role)
				SELECT ?, id, ? FROM workspaces WHERE id = ? AND tenant_id = ?`, inv.ID, string(g.Role), g.WorkspaceID, p.TenantID)
			if err != nil {
				return fmt.Errorf("store: create invitation: %w", err)
			}
			if n, _ := res.RowsAffected(); n == 0 {
				return fmt.Errorf("%w: workspace %q", tenancy.ErrNotFound, g.WorkspaceID)
			}
		}
		return nil
	})
	if err != nil {
		return Invitation{}, "", err
	}
	return inv, secret, nil
}

const invitationColumns = `id, tenant_id, email, admin, created_by, created_at, expires_at, accepted_at, accepted_by, revoked_at`

func scanInvitation(row interface{ Scan(...any) error }) (Invitation, error) {
	var i Invitation
	var createdBy, acceptedBy sql.NullString
	var created, expires int64
	var accepted, revoked sql.NullInt64
	if err := row.Scan(&i.ID, &i.TenantID, &i.Email, &i.Admin, &createdBy, &created, &expires, &accepted, &acceptedBy, &revoked); err != nil {
		return Invitation{}, err
	}
	i.CreatedBy, i.AcceptedBy = createdBy.String, acceptedBy.String
	i.CreatedAt, i.ExpiresAt = fromMicros(created), fromMicros(expires)
	i.AcceptedAt, i.RevokedAt = fromNullMicros(accepted), fromNullMicros(revoked)
	i.Workspaces = []Grant{}
	return i, nil
}

func invitationGrants(ctx context.Context, c conn, invs []Invitation) error {
	for k := range invs {
		rows, err := c.query(ctx, `SELECT workspace_id, role FROM invitation_workspaces WHERE invitation_id = ? ORDER BY workspace_id`, invs[k].ID)
		if err != nil {
			return fmt.Errorf("store: invitation workspaces: %w", err)
		}
		for rows.Next() {
			var g Grant
			if err := rows.Scan(&g.WorkspaceID, &g.Role); err != nil {
				rows.Close()
				return fmt.Errorf("store: invitation workspaces: %w", err)
			}
			invs[k].Workspaces = append(invs[k].Workspaces, g)
		}
		err = rows.Err()
		rows.Close()
		if err != nil {
			return fmt.Errorf("store: invitation workspaces: %w", err)
		}
	}
	return nil
}

// ListInvitations lists the invitations of the principal's tenant, which
// the principal must administer, newest first: pending, accepted, expired
// and revoked ones alike (with their times).
func (db *DB) ListInvitations(ctx context.Context, p tenancy.Principal) ([]Invitation, error) {
	if !p.Admin {
		return nil, fmt.Errorf("%w: only a tenant admin sees invitations", tenancy.ErrForbidden)
	}
	c := db.conn()
	rows, err := c.query(ctx, `SELECT `+invitationColumns+` FROM invitations WHERE tenant_id = ? ORDER BY created_at DESC, id DESC`, p.TenantID)
	if err != nil {
		return nil, fmt.Errorf("store: list invitations: %w", err)
	}
	out := []Invitation{}
	for rows.Next() {
		i, err := scanInvitation(rows)
		if err != nil {
			rows.Close()
			return nil, fmt.Errorf("store: list invitations: %w", err)
		}
		out = append(out, i)
	}
	err = rows.Err()
	rows.Close()
	if err != nil {
		return nil, fmt.Errorf("store: list invitations: %w", err)
	}
	return out, invitationGrants(ctx, c, out)
}

// RevokeInvitation ends a pending invitation of the principal's tenant,
// which the principal must administer. An unknown, accepted or already
// revoked invitation is ErrNotFound.
func (db *DB) RevokeInvitation(ctx context.Context, p tenancy.Principal, id string) (Invitation, error) {
	if !p.Admin {
		return Invitation{}, fmt.Errorf("%w: only a tenant admin revokes invitations", tenancy.ErrForbidden)
	}
	var out Invitation
	err := db.tx(ctx, func(c conn) error {
		res, err := c.exec(ctx, `UPDATE invitations SET revoked_at = ? WHERE id = ? AND tenant_id = ? AND revoked_at IS NULL AND accepted_at IS NULL`,
			micros(now()), id, p.TenantID)
		if err != nil {
			return fmt.Errorf("store: revoke invitation: %w", err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return fmt.Errorf("%w: invitation %q (unknown, accepted or revoked)", tenancy.ErrNotFound, id)
		}
		i, err := scanInvitation(c.queryRow(ctx, `SELECT `+invitationColumns+` FROM invitations WHERE id = ?`, id))
		if err != nil {
			return fmt.Errorf("store: revoke invitation: %w", err)
		}
		out = i
		list := []Invitation{out}
		err = invitationGrants(ctx, c, list)
		out = list[0]
		return err
	})
	return out, err
}

// InvitationBySecret returns the pending invitation a link's secret stands
// for. A malformed or unknown secret, or an invitation that was accepted,
// revoked or has expired, is ErrUnauthenticated, with the reason.
func (db *DB) InvitationBySecret(ctx context.Context, secret string) (Invitation, error) {
	return invitationBySecret(ctx, db.conn(), secret)
}

func invitationBySecret(ctx context.Context, c conn, secret string) (Invitation, error) {
	if len(secret) != len(invitationPrefix)+43 || !strings.HasPrefix(secret, invitationPrefix) {
		return Invitation{}, fmt.Errorf("%w: not an invitation link", tenancy.ErrUnauthenticated)
	}
	i, err := scanInvitation(c.queryRow(ctx, `SELECT `+invitationColumns+` FROM invitations WHERE hash = ?`, invitationHash(secret)))
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return Invitation{}, fmt.Errorf("%w: unknown invitation", tenancy.ErrUnauthenticated)
	case err != nil:
		return Invitation{}, fmt.Errorf("store: invitation: %w", err)
	case i.RevokedAt != nil:
		return Invitation{}, fmt.Errorf("%w: the invitation was revoked", tenancy.ErrUnauthenticated)
	case i.AcceptedAt != nil:
		return Invitation{}, fmt.Errorf("%w: the invitation was used already", tenancy.ErrUnauthenticated)
	case !now().Before(i.ExpiresAt):
		return Invitation{}, fmt.Errorf("%w: the invitation expired", tenancy.ErrUnauthenticated)
	}
	list := []Invitation{i}
	if err := invitationGrants(ctx, c, list); err != nil {
		return Invitation{}, err
	}
	return list[0], nil
}

// AcceptInvitation uses an invitation, once: in one transaction it marks
// it accepted and makes user a user of the invitation's tenant with its
// admin flag and workspace roles. A user with an empty ID is created (its
// e-mail address and name default to the invitation's); a user with an ID
// must already be the tenant's. The user's e-mail address must be the
// invited one (case does not matter). A secret that is not a pending
// invitation's is ErrUnauthenticated (two acceptances racing: one wins).
// Nothing is half-made: on any error the store is as it was.
func (db *DB) AcceptInvitation(ctx context.Context, secret string, user tenancy.User) (tenancy.User, error) {
	var out tenancy.User
	err := db.tx(ctx, func(c conn) error {
		var err error
		out, _, err = acceptInvitation(ctx, c, secret, user)
		return err
	})
	return out, err
}

func acceptInvitation(ctx context.Context, c conn, secret string, user tenancy.User) (tenancy.User, Invitation, error) {
	inv, err := invitationBySecret(ctx, c, secret)
	if err != nil {
		return tenancy.User{}, Invitation{}, err
	}
	if user.Email == "" {
		user.Email = inv.Email
	}
	if normalEmail(user.Email) != inv.Email {
		return tenancy.User{}, Invitation{}, fmt.Errorf("%w: the invitation is for %s, not %s", tenancy.ErrForbidden, inv.Email, user.Email)
	}
	if user.ID == "" {
		if strings.TrimSpace(user.Name) == "" {
			user.Name = inv.Email
		}
		user.TenantID, user.Admin = inv.TenantID, inv.Admin
		if user, err = createUser(ctx, c, user); err != nil {
			return tenancy.User{}, Invitation{}, err
		}
	} else {
		var created int64
		err := c.queryRow(ctx, `SELECT tenant_id, email, name, admin, created_at FROM users WHERE id = ? AND tenant_id = ?`, user.ID, inv.TenantID).
			Scan(&user.TenantID, &user.Email, &user.Name, &user.Admin, &created)
		if errors.Is(err, sql.ErrNoRows) {
			return tenancy.User{}, Invitation{}, fmt.Errorf("%w: user %q of the invitation's tenant", tenancy.ErrNotFound, user.ID)
		}
		if err != nil {
			return tenancy.User{}, Invitation{}, fmt.Errorf("store: accept invitation: %w", err)
		}
		user.CreatedAt = fromMicros(created)
		if inv.Admin && !user.Admin {
			if _, err := c.exec(ctx, `UPDATE users SET admin = ? WHERE id = ?`, true, user.ID); err != nil {
				return tenancy.User{}, Invitation{}, fmt.Errorf("store: accept invitation: %w", err)
			}
			user.Admin = true
		}
	}
	// The UPDATE is the once-only guard: of two acceptances racing, the
	// second matches no row (SQLite's write lock and PostgreSQL's row lock
	// order them).
	res, err := c.exec(ctx, `UPDATE invitations SET accepted_at = ?, accepted_by = ? WHERE id = ? AND accepted_at IS NULL AND revoked_at IS NULL`,
		micros(now()), user.ID, inv.ID)
	if err != nil {
		return tenancy.User{}, Invitation{}, fmt.Errorf("store: accept invitation: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return tenancy.User{}, Invitation{}, fmt.Errorf("%w: the invitation was used already", tenancy.ErrUnauthenticated)
	}
	for _, g := range inv.Workspaces {
		if err := setMembership(ctx, c, tenancy.Membership{WorkspaceID: g.WorkspaceID, UserID: user.ID, Role: g.Role}); err != nil {
			return tenancy.User{}, Invitation{}, err
		}
	}
	return user, inv, nil
}
