package store

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"database/sql"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"

	"github.com/agenthost/agenthost/host/scim"
	"github.com/agenthost/agenthost/host/tenancy"
)

// SCIM provisioning's store (host/scim, docs/scim.md): every function is
// scoped by tenant; the SCIM layer has authenticated the tenant's token.

// SCIMTokenPrefix starts every SCIM token.
const SCIMTokenPrefix = "ahscim_"

func hashSCIMToken(secret string) ([]byte, error) {
	raw, ok := strings.CutPrefix(secret, SCIMTokenPrefix)
	if !ok || len(raw) != 43 {
		return nil, fmt.Errorf("%w: malformed SCIM token", tenancy.ErrUnauthenticated)
	}
	h := sha256.Sum256([]byte(secret))
	return h[:], nil
}

// SCIMTokenRecord is a SCIM token as listed (never its secret).
type SCIMTokenRecord struct {
	ID        string `json:"id"`
	TenantID  string `json:"tenantId"`
	Name      string `json:"name"`
	CreatedAt string `json:"createdAt"`
	Revoked   bool   `json:"revoked"`
}

// CreateSCIMToken issues a SCIM token of the tenant and returns its id and
// the secret, which is not kept.
func (db *DB) CreateSCIMToken(ctx context.Context, tenantID, name string) (string, string, error) {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", "", fmt.Errorf("store: scim token: %w", err)
	}
	secret := SCIMTokenPrefix + base64.RawURLEncoding.EncodeToString(b[:])
	hash, err := hashSCIMToken(secret)
	if err != nil {
		return "", "", err
	}
	id := newID()
	_, err = db.conn().exec(ctx, `INSERT INTO scim_tokens (id, tenant_id, name, hash, created_at) VALUES (?, ?, ?, ?, ?)`,
		id, tenantID, name, hash, micros(now()))
	switch {
	case isForeignKey(err):
		return "", "", fmt.Errorf("%w: tenant %q", tenancy.ErrNotFound, tenantID)
	case err != nil:
		return "", "", fmt.Errorf("store: create scim token: %w", err)
	}
	return id, secret, nil
}

// RevokeSCIMToken ends a SCIM token of the tenant.
func (db *DB) RevokeSCIMToken(ctx context.Context, tenantID, id string) error {
	n, err := execCount(ctx, db.conn(), `UPDATE scim_tokens SET revoked_at = ? WHERE id = ? AND tenant_id = ? AND revoked_at IS NULL`,
		micros(now()), id, tenantID)
	if err != nil {
		return fmt.Errorf("store: revoke scim token: %w", err)
	}
	if n == 0 {
		return fmt.Errorf("%w: SCIM token %q (unknown or already revoked)", tenancy.ErrNotFound, id)
	}
	return nil
}

// SCIMToken implements scim.Store.
func (db *DB) SCIMToken(ctx context.Context, secret string) (string, string, error) {
	hash, err := hashSCIMToken(secret)
	if err != nil {
		return "", "", err
	}
	var tenant, id string
	var revoked sql.NullInt64
	err = db.conn().queryRow(ctx, `SELECT tenant_id, id, revoked_at FROM scim_tokens WHERE hash = ?`, hash).Scan(&tenant, &id, &revoked)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return "", "", fmt.Errorf("%w: unknown SCIM token", tenancy.ErrUnauthenticated)
	case err != nil:
		return "", "", fmt.Errorf("store: scim token: %w", err)
	case revoked.Valid:
		return "", "", fmt.Errorf("%w: SCIM token revoked", tenancy.ErrUnauthenticated)
	}
	return tenant, id, nil
}

// SetSCIMMapping makes a group (by its displayName) give a role in a
// workspace of the tenant (or, WorkspaceID "" and role "admin", the
// tenant's admin); role "" removes the mapping. The group's members'
// roles follow at once.
func (db *DB) SetSCIMMapping(ctx context.Context, tenantID string, m scim.Mapping) error {
	if strings.TrimSpace(m.GroupName) == "" {
		return fmt.Errorf("%w: a mapping needs a group name", tenancy.ErrInvalid)
	}
	switch {
	case m.Role == "":
	case m.WorkspaceID == "" && m.Role != scim.AdminRole:
		return fmt.Errorf("%w: without a workspace the only role is %q (tenant admin)", tenancy.ErrInvalid, scim.AdminRole)
	case m.WorkspaceID != "":
		if err := tenancy.Role(m.Role).Validate(); err != nil {
			return err
		}
	}
	return db.tx(ctx, func(c conn) error {
		if m.WorkspaceID != "" {
			var one int
			err := c.queryRow(ctx, `SELECT 1 FROM workspaces WHERE id = ? AND tenant_id = ?`, m.WorkspaceID, tenantID).Scan(&one)
			if errors.Is(err, sql.ErrNoRows) {
				return fmt.Errorf("%w: workspace %q", tenancy.ErrNotFound, m.WorkspaceID)
			}
			if err != nil {
				return fmt.Errorf("store: scim mapping: %w", err)
			}
		}
		var err error
		if m.Role == "" {
			_, err = c.exec(ctx, `DELETE FROM scim_mappings WHERE tenant_id = ? AND group_name = ? AND workspace_id = ?`, tenantID, m.GroupName, m.WorkspaceID)
		} else {
			_, err = c.exec(ctx, `INSERT INTO scim_mappings (tenant_id, group_name, workspace_id, role) VALUES (?, ?, ?, ?)
				ON CONFLICT (tenant_id, group_name, workspace_id) DO UPDATE SET role = excluded.role`, tenantID, m.GroupName, m.WorkspaceID, m.Role)
		}
		if err != nil {
			return fmt.Errorf("store: scim mapping: %w", err)
		}
		users, err := queryAll(ctx, c, "scim mapping", scanString, `SELECT gm.user_id FROM scim_group_members gm
			JOIN scim_groups g ON g.id = gm.group_id WHERE g.tenant_id = ? AND g.display_name = ?`, tenantID, m.GroupName)
		if err != nil {
			return err
		}
		return reconcileSCIM(ctx, c, tenantID, users)
	})
}

// SCIMMappings lists the tenant's group mappings.
func (db *DB) SCIMMappings(ctx context.Context, tenantID string) ([]scim.Mapping, error) {
	return queryAll(ctx, db.conn(), "scim mappings", func(row interface{ Scan(...any) error }) (scim.Mapping, error) {
		var m scim.Mapping
		return m, row.Scan(&m.GroupName, &m.WorkspaceID, &m.Role)
	}, `SELECT group_name, workspace_id, role FROM scim_mappings WHERE tenant_id = ? ORDER BY group_name, workspace_id`, tenantID)
}

func scanString(row interface{ Scan(...any) error }) (string, error) {
	var s string
	return s, row.Scan(&s)
}

const scimUserSelect = `SELECT s.user_id, s.tenant_id, s.user_name, s.external_id, s.given_name, s.family_name, s.display_name,
	u.email, u.deactivated_at, s.created_at, s.updated_at FROM scim_users s JOIN users u ON u.id = s.user_id`

func scanSCIMUser(row interface{ Scan(...any) error }) (scim.User, error) {
	var u scim.User
	var deact sql.NullInt64
	var created, modified int64
	err := row.Scan(&u.ID, &u.TenantID, &u.UserName, &u.ExternalID, &u.GivenName, &u.FamilyName, &u.DisplayName, &u.Email, &deact, &created, &modified)
	u.Active, u.Created, u.Modified = !deact.Valid, fromMicros(created), fromMicros(modified)
	return u, err
}

// scimName is the user's name in agenthost: the display name, else the
// name parts, else the userName.
func scimName(u scim.User) string {
	if n := strings.TrimSpace(u.DisplayName); n != "" {
		return n
	}
	if n := strings.TrimSpace(u.GivenName + " " + u.FamilyName); n != "" {
		return n
	}
	return u.UserName
}

// CreateSCIMUser implements scim.Store.
func (db *DB) CreateSCIMUser(ctx context.Context, u scim.User) (scim.User, error) {
	if strings.TrimSpace(u.UserName) == "" {
		return scim.User{}, fmt.Errorf("%w: userName is required", tenancy.ErrInvalid)
	}
	if u.Email == "" {
		u.Email = u.UserName
	}
	err := db.tx(ctx, func(c conn) error {
		var linked int
		if err := c.queryRow(ctx, `SELECT COUNT(*) FROM scim_users WHERE tenant_id = ? AND user_name_lc = ?`, u.TenantID, strings.ToLower(u.UserName)).Scan(&linked); err != nil {
			return fmt.Errorf("store: scim user: %w", err)
		}
		if linked > 0 {
			return fmt.Errorf("%w: userName %q is provisioned already", tenancy.ErrConflict, u.UserName)
		}
		// A person invited or made before provisioning started is
		// adopted, not duplicated.
		var existing string
		var isLinked int
		err := c.queryRow(ctx, `SELECT u.id, (SELECT COUNT(*) FROM scim_users s WHERE s.user_id = u.id) FROM users u
			WHERE u.tenant_id = ? AND LOWER(u.email) = LOWER(?)`, u.TenantID, u.Email).Scan(&existing, &isLinked)
		switch {
		case errors.Is(err, sql.ErrNoRows):
			nu, err := createUser(ctx, c, tenancy.User{TenantID: u.TenantID, Email: u.Email, Name: scimName(u)})
			if err != nil {
				return err
			}
			u.ID = nu.ID
		case err != nil:
			return fmt.Errorf("store: scim user: %w", err)
		case isLinked > 0:
			return fmt.Errorf("%w: e-mail %q belongs to another provisioned user", tenancy.ErrConflict, u.Email)
		default:
			u.ID = existing
			if _, err := c.exec(ctx, `UPDATE users SET name = ? WHERE id = ?`, scimName(u), u.ID); err != nil {
				return fmt.Errorf("store: scim user: %w", err)
			}
		}
		t := micros(now())
		_, err = c.exec(ctx, `INSERT INTO scim_users (user_id, tenant_id, user_name, user_name_lc, external_id, given_name, family_name, display_name, created_at, updated_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, u.ID, u.TenantID, u.UserName, strings.ToLower(u.UserName), u.ExternalID, u.GivenName, u.FamilyName, u.DisplayName, t, t)
		if isUnique(err) {
			return fmt.Errorf("%w: userName %q is provisioned already", tenancy.ErrConflict, u.UserName)
		}
		if err != nil {
			return fmt.Errorf("store: scim user: %w", err)
		}
		return nil
	})
	if err != nil {
		return scim.User{}, err
	}
	return db.SCIMUser(ctx, u.TenantID, u.ID)
}

// SCIMUser implements scim.Store.
func (db *DB) SCIMUser(ctx context.Context, tenantID, id string) (scim.User, error) {
	list, err := queryAll(ctx, db.conn(), "scim user", scanSCIMUser, scimUserSelect+` WHERE s.tenant_id = ? AND s.user_id = ?`, tenantID, id)
	if err != nil {
		return scim.User{}, err
	}
	if len(list) == 0 {
		return scim.User{}, fmt.Errorf("%w: user %q", tenancy.ErrNotFound, id)
	}
	u := list[0]
	u.Groups, err = queryAll(ctx, db.conn(), "scim user groups", scanRef, `SELECT g.id, g.display_name FROM scim_group_members gm
		JOIN scim_groups g ON g.id = gm.group_id WHERE gm.user_id = ? AND g.tenant_id = ? ORDER BY g.display_name`, id, tenantID)
	return u, err
}

func scanRef(row interface{ Scan(...any) error }) (scim.Ref, error) {
	var r scim.Ref
	return r, row.Scan(&r.Value, &r.Display)
}

// filterSQL turns a filter into conditions on cols (attribute → column);
// an attribute without a column is tenancy.ErrInvalid.
func filterSQL(filter []scim.Condition, cols map[string]string) ([]string, []any, error) {
	var where []string
	var args []any
	for _, f := range filter {
		col, ok := cols[f.Attr]
		if !ok {
			return nil, nil, fmt.Errorf("%w: filtering on %q is not supported", tenancy.ErrInvalid, f.Attr)
		}
		if strings.HasPrefix(col, "LOWER(") {
			where, args = append(where, col+` = LOWER(?)`), append(args, f.Value)
		} else {
			where, args = append(where, col+` = ?`), append(args, f.Value)
		}
	}
	return where, args, nil
}

// SCIMUsers implements scim.Store.
func (db *DB) SCIMUsers(ctx context.Context, tenantID string, filter []scim.Condition, start, count int) ([]scim.User, int, error) {
	where, args, err := filterSQL(filter, map[string]string{"username": "s.user_name_lc", "externalid": "s.external_id", "id": "s.user_id",
		"displayname": "s.display_name", "emails.value": "LOWER(u.email)", "emails": "LOWER(u.email)"})
	if err != nil {
		return nil, 0, err
	}
	for i, f := range filter {
		if f.Attr == "username" {
			args[i] = strings.ToLower(f.Value)
		}
	}
	cond := ` WHERE ` + strings.Join(append([]string{`s.tenant_id = ?`}, where...), ` AND `)
	all := append([]any{tenantID}, args...)
	var total int
	if err := db.conn().queryRow(ctx, `SELECT COUNT(*) FROM scim_users s JOIN users u ON u.id = s.user_id`+cond, all...).Scan(&total); err != nil {
		return nil, 0, fmt.Errorf("store: scim users: %w", err)
	}
	list, err := queryAll(ctx, db.conn(), "scim users", scanSCIMUser, scimUserSelect+cond+` ORDER BY s.user_name_lc, s.user_id LIMIT ? OFFSET ?`,
		append(all, count, start)...)
	if err != nil {
		return nil, 0, err
	}
	for i := range list {
		if list[i].Groups, err = queryAll(ctx, db.conn(), "scim user groups", scanRef, `SELECT g.id, g.display_name FROM scim_group_members gm
			JOIN scim_groups g ON g.id = gm.group_id WHERE gm.user_id = ? ORDER BY g.display_name`, list[i].ID); err != nil {
			return nil, 0, err
		}
	}
	return list, total, nil
}

// UpdateSCIMUser implements scim.Store.
func (db *DB) UpdateSCIMUser(ctx context.Context, u scim.User) (scim.User, error) {
	if strings.TrimSpace(u.UserName) == "" {
		return scim.User{}, fmt.Errorf("%w: userName is required", tenancy.ErrInvalid)
	}
	if u.Email == "" {
		u.Email = u.UserName
	}
	err := db.tx(ctx, func(c conn) error {
		n, err := execCount(ctx, c, `UPDATE scim_users SET user_name = ?, user_name_lc = ?, external_id = ?, given_name = ?, family_name = ?,
			display_name = ?, updated_at = ? WHERE user_id = ? AND tenant_id = ?`, u.UserName, strings.ToLower(u.UserName), u.ExternalID,
			u.GivenName, u.FamilyName, u.DisplayName, micros(now()), u.ID, u.TenantID)
		if isUnique(err) {
			return fmt.Errorf("%w: userName %q is provisioned already", tenancy.ErrConflict, u.UserName)
		}
		if err != nil {
			return fmt.Errorf("store: scim user: %w", err)
		}
		if n == 0 {
			return fmt.Errorf("%w: user %q", tenancy.ErrNotFound, u.ID)
		}
		_, err = c.exec(ctx, `UPDATE users SET email = ?, name = ? WHERE id = ? AND tenant_id = ?`, u.Email, scimName(u), u.ID, u.TenantID)
		if isUnique(err) {
			return fmt.Errorf("%w: e-mail %q belongs to another user of the tenant", tenancy.ErrConflict, u.Email)
		}
		if err != nil {
			return fmt.Errorf("store: scim user: %w", err)
		}
		return nil
	})
	if err != nil {
		return scim.User{}, err
	}
	return db.SCIMUser(ctx, u.TenantID, u.ID)
}

// UnlinkSCIMUser implements scim.Store.
func (db *DB) UnlinkSCIMUser(ctx context.Context, tenantID, id string) error {
	return db.tx(ctx, func(c conn) error {
		n, err := execCount(ctx, c, `DELETE FROM scim_users WHERE user_id = ? AND tenant_id = ?`, id, tenantID)
		if err != nil {
			return fmt.Errorf("store: scim unlink: %w", err)
		}
		if n == 0 {
			return fmt.Errorf("%w: user %q", tenancy.ErrNotFound, id)
		}
		if _, err := c.exec(ctx, `DELETE FROM scim_group_members WHERE user_id = ?`, id); err != nil {
			return fmt.Errorf("store: scim unlink: %w", err)
		}
		return reconcileSCIM(ctx, c, tenantID, []string{id})
	})
}

const scimGroupSelect = `SELECT id, tenant_id, display_name, external_id, created_at, updated_at FROM scim_groups`

func scanSCIMGroup(row interface{ Scan(...any) error }) (scim.Group, error) {
	var g scim.Group
	var created, modified int64
	err := row.Scan(&g.ID, &g.TenantID, &g.DisplayName, &g.ExternalID, &created, &modified)
	g.Created, g.Modified = fromMicros(created), fromMicros(modified)
	return g, err
}

func groupMembers(ctx context.Context, c conn, groupID string) ([]scim.Ref, error) {
	return queryAll(ctx, c, "scim group members", scanRef, `SELECT s.user_id, s.user_name FROM scim_group_members gm
		JOIN scim_users s ON s.user_id = gm.user_id WHERE gm.group_id = ? ORDER BY s.user_name_lc`, groupID)
}

// CreateSCIMGroup implements scim.Store.
func (db *DB) CreateSCIMGroup(ctx context.Context, g scim.Group) (scim.Group, error) {
	if strings.TrimSpace(g.DisplayName) == "" {
		return scim.Group{}, fmt.Errorf("%w: displayName is required", tenancy.ErrInvalid)
	}
	g.ID = newID()
	err := db.tx(ctx, func(c conn) error {
		t := micros(now())
		_, err := c.exec(ctx, `INSERT INTO scim_groups (id, tenant_id, display_name, external_id, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)`,
			g.ID, g.TenantID, g.DisplayName, g.ExternalID, t, t)
		if isUnique(err) {
			return fmt.Errorf("%w: a group named %q exists", tenancy.ErrConflict, g.DisplayName)
		}
		if err != nil {
			return fmt.Errorf("store: scim group: %w", err)
		}
		ids := make([]string, len(g.Members))
		for i, m := range g.Members {
			ids[i] = m.Value
		}
		return setGroupMembers(ctx, c, g.TenantID, g.ID, ids, nil, nil)
	})
	if err != nil {
		return scim.Group{}, err
	}
	return db.SCIMGroup(ctx, g.TenantID, g.ID)
}

// SCIMGroup implements scim.Store.
func (db *DB) SCIMGroup(ctx context.Context, tenantID, id string) (scim.Group, error) {
	list, err := queryAll(ctx, db.conn(), "scim group", scanSCIMGroup, scimGroupSelect+` WHERE tenant_id = ? AND id = ?`, tenantID, id)
	if err != nil {
		return scim.Group{}, err
	}
	if len(list) == 0 {
		return scim.Group{}, fmt.Errorf("%w: group %q", tenancy.ErrNotFound, id)
	}
	g := list[0]
	g.Members, err = groupMembers(ctx, db.conn(), id)
	return g, err
}

// SCIMGroups implements scim.Store.
func (db *DB) SCIMGroups(ctx context.Context, tenantID string, filter []scim.Condition, start, count int) ([]scim.Group, int, error) {
	where, args, err := filterSQL(filter, map[string]string{"displayname": "display_name", "externalid": "external_id", "id": "id"})
	if err != nil {
		return nil, 0, err
	}
	cond := ` WHERE ` + strings.Join(append([]string{`tenant_id = ?`}, where...), ` AND `)
	all := append([]any{tenantID}, args...)
	var total int
	if err := db.conn().queryRow(ctx, `SELECT COUNT(*) FROM scim_groups`+cond, all...).Scan(&total); err != nil {
		return nil, 0, fmt.Errorf("store: scim groups: %w", err)
	}
	list, err := queryAll(ctx, db.conn(), "scim groups", scanSCIMGroup, scimGroupSelect+cond+` ORDER BY display_name, id LIMIT ? OFFSET ?`,
		append(all, count, start)...)
	if err != nil {
		return nil, 0, err
	}
	for i := range list {
		if list[i].Members, err = groupMembers(ctx, db.conn(), list[i].ID); err != nil {
			return nil, 0, err
		}
	}
	return list, total, nil
}

// UpdateSCIMGroup implements scim.Store.
func (db *DB) UpdateSCIMGroup(ctx context.Context, g scim.Group, members, add, remove []string) (scim.Group, error) {
	if strings.TrimSpace(g.DisplayName) == "" {
		return scim.Group{}, fmt.Errorf("%w: displayName is required", tenancy.ErrInvalid)
	}
	err := db.tx(ctx, func(c conn) error {
		var oldName string
		err := c.queryRow(ctx, `SELECT display_name FROM scim_groups WHERE id = ? AND tenant_id = ?`, g.ID, g.TenantID).Scan(&oldName)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("%w: group %q", tenancy.ErrNotFound, g.ID)
		}
		if err != nil {
			return fmt.Errorf("store: scim group: %w", err)
		}
		_, err = c.exec(ctx, `UPDATE scim_groups SET display_name = ?, external_id = ?, updated_at = ? WHERE id = ?`,
			g.DisplayName, g.ExternalID, micros(now()), g.ID)
		if isUnique(err) {
			return fmt.Errorf("%w: a group named %q exists", tenancy.ErrConflict, g.DisplayName)
		}
		if err != nil {
			return fmt.Errorf("store: scim group: %w", err)
		}
		return setGroupMembers(ctx, c, g.TenantID, g.ID, members, add, remove)
	})
	if err != nil {
		return scim.Group{}, err
	}
	return db.SCIMGroup(ctx, g.TenantID, g.ID)
}

// setGroupMembers replaces (members not nil), adds and removes members of
// a group, then reconciles the roles of everyone it touched (a renamed
// group may map differently: all its members are touched).
func setGroupMembers(ctx context.Context, c conn, tenantID, groupID string, members, add, remove []string) error {
	touched, err := queryAll(ctx, c, "scim group members", scanString, `SELECT user_id FROM scim_group_members WHERE group_id = ?`, groupID)
	if err != nil {
		return err
	}
	if members != nil {
		if _, err := c.exec(ctx, `DELETE FROM scim_group_members WHERE group_id = ?`, groupID); err != nil {
			return fmt.Errorf("store: scim group members: %w", err)
		}
	}
	for _, id := range append(append([]string{}, members...), add...) {
		var one int
		err := c.queryRow(ctx, `SELECT 1 FROM scim_users WHERE user_id = ? AND tenant_id = ?`, id, tenantID).Scan(&one)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("%w: member %q is not a provisioned user of this tenant", tenancy.ErrInvalid, id)
		}
		if err != nil {
			return fmt.Errorf("store: scim group members: %w", err)
		}
		if _, err := c.exec(ctx, `INSERT INTO scim_group_members (group_id, user_id) VALUES (?, ?) ON CONFLICT DO NOTHING`, groupID, id); err != nil {
			return fmt.Errorf("store: scim group members: %w", err)
		}
		touched = append(touched, id)
	}
	for _, id := range remove {
		if _, err := c.exec(ctx, `DELETE FROM scim_group_members WHERE group_id = ? AND user_id = ?`, groupID, id); err != nil {
			return fmt.Errorf("store: scim group members: %w", err)
		}
		touched = append(touched, id)
	}
	return reconcileSCIM(ctx, c, tenantID, touched)
}

// DeleteSCIMGroup implements scim.Store.
func (db *DB) DeleteSCIMGroup(ctx context.Context, tenantID, id string) error {
	return db.tx(ctx, func(c conn) error {
		members, err := queryAll(ctx, c, "scim group", scanString, `SELECT user_id FROM scim_group_members WHERE group_id = ?`, id)
		if err != nil {
			return err
		}
		n, err := execCount(ctx, c, `DELETE FROM scim_groups WHERE id = ? AND tenant_id = ?`, id, tenantID)
		if err != nil {
			return fmt.Errorf("store: scim group: %w", err)
		}
		if n == 0 {
			return fmt.Errorf("%w: group %q", tenancy.ErrNotFound, id)
		}
		return reconcileSCIM(ctx, c, tenantID, members)
	})
}

// scimRoleRank orders roles by what they allow, for a user in several groups
// mapped to one workspace: the strongest wins.
var scimRoleRank = map[string]int{string(tenancy.RolePersonal): 1, string(tenancy.RoleViewer): 2, string(tenancy.RoleMember): 3, string(tenancy.RoleManager): 4, scim.AdminRole: 5}

// reconcileSCIM gives each user the roles their groups map to and takes
// back what provisioning granted and no group gives any more. A
// membership an admin gave (one provisioning did not grant, or changed
// since) is left alone: provisioning manages only its own grants.
func reconcileSCIM(ctx context.Context, c conn, tenantID string, users []string) error {
	seen := map[string]bool{}
	for _, uid := range users {
		if seen[uid] {
			continue
		}
		seen[uid] = true
		type pair struct{ ws, role string }
		scan := func(row interface{ Scan(...any) error }) (pair, error) {
			var p pair
			return p, row.Scan(&p.ws, &p.role)
		}
		mapped, err := queryAll(ctx, c, "scim roles", scan, `SELECT m.workspace_id, m.role FROM scim_group_members gm
			JOIN scim_groups g ON g.id = gm.group_id
			JOIN scim_mappings m ON m.tenant_id = g.tenant_id AND m.group_name = g.display_name
			WHERE gm.user_id = ? AND g.tenant_id = ?`, uid, tenantID)
		if err != nil {
			return err
		}
		want := map[string]string{}
		for _, p := range mapped {
			if scimRoleRank[p.role] > scimRoleRank[want[p.ws]] {
				want[p.ws] = p.role
			}
		}
		grants, err := queryAll(ctx, c, "scim grants", scan, `SELECT workspace_id, role FROM scim_grants WHERE user_id = ?`, uid)
		if err != nil {
			return err
		}
		granted := map[string]string{}
		for _, p := range grants {
			granted[p.ws] = p.role
		}
		for ws, role := range want {
			if err := grantSCIM(ctx, c, uid, ws, role, granted[ws]); err != nil {
				return err
			}
		}
		for ws, role := range granted {
			if _, ok := want[ws]; !ok {
				if err := revokeSCIM(ctx, c, uid, ws, role); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// current is the user's role in ws ("admin"/"" for the tenant).
func currentRole(ctx context.Context, c conn, uid, ws string) (string, error) {
	var role string
	var err error
	if ws == "" {
		var admin bool
		err = c.queryRow(ctx, `SELECT admin FROM users WHERE id = ?`, uid).Scan(&admin)
		if admin {
			role = scim.AdminRole
		}
	} else {
		err = c.queryRow(ctx, `SELECT role FROM memberships WHERE workspace_id = ? AND user_id = ?`, ws, uid).Scan(&role)
	}
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	return role, err
}

func grantSCIM(ctx context.Context, c conn, uid, ws, role, granted string) error {
	cur, err := currentRole(ctx, c, uid, ws)
	if err != nil {
		return fmt.Errorf("store: scim grant: %w", err)
	}
	if cur != "" && cur != granted {
		return nil // an admin's decision
	}
	if cur != role {
		if ws == "" {
			_, err = c.exec(ctx, `UPDATE users SET admin = ? WHERE id = ?`, true, uid)
		} else {
			err = setMembership(ctx, c, tenancy.Membership{WorkspaceID: ws, UserID: uid, Role: tenancy.Role(role)})
		}
		if err != nil {
			return fmt.Errorf("store: scim grant: %w", err)
		}
	}
	_, err = c.exec(ctx, `INSERT INTO scim_grants (user_id, workspace_id, role) VALUES (?, ?, ?)
		ON CONFLICT (user_id, workspace_id) DO UPDATE SET role = excluded.role`, uid, ws, role)
	return err
}

func revokeSCIM(ctx context.Context, c conn, uid, ws, granted string) error {
	cur, err := currentRole(ctx, c, uid, ws)
	if err != nil {
		return fmt.Errorf("store: scim revoke: %w", err)
	}
	if cur == granted {
		if ws == "" {
			_, err = c.exec(ctx, `UPDATE users SET admin = ? WHERE id = ?`, false, uid)
		} else {
			err = setMembership(ctx, c, tenancy.Membership{WorkspaceID: ws, UserID: uid})
		}
		if err != nil {
			return fmt.Errorf("store: scim revoke: %w", err)
		}
	}
	_, err = c.exec(ctx, `DELETE FROM scim_grants WHERE user_id = ? AND workspace_id = ?`, uid, ws)
	return err
}
