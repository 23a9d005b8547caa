package store

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"strings"
	"time"

	"github.com/agenthost/agenthost/host/tenancy"
)

// The first run of a server: with no tenant yet, nobody can sign in, so a
// host issues a one-time setup link (its secret is printed in the host's log
// and only its hash is kept) and whoever opens it creates the first
// organisation and becomes its admin.

// setupPrefix marks setup secrets, so one pasted as an API token (or the
// reverse) is recognised as the wrong kind.
const setupPrefix = "ahs_"

// SetupLinkTTL is how long a setup link can be used.
const SetupLinkTTL = 24 * time.Hour

// FirstRun is what CompleteSetup made: the organisation, its admin, their
// first workspace and an API token of the admin's (the browser session is
// opened with it; it is shown once, for programs).
type FirstRun struct {
	Tenant    tenancy.Tenant
	User      tenancy.User
	Workspace tenancy.Workspace
	Token     string
}

// NeedsSetup reports whether the server has no tenant yet.
func (db *DB) NeedsSetup(ctx context.Context) (bool, error) {
	return needsSetup(ctx, db.conn())
}

func needsSetup(ctx context.Context, c conn) (bool, error) {
	var n int
	if err := c.queryRow(ctx, `SELECT COUNT(*) FROM (SELECT 1 FROM tenants LIMIT 1) t`).Scan(&n); err != nil {
		return false, fmt.Errorf("store: tenants: %w", err)
	}
	return n == 0, nil
}

// IssueSetupLink returns a new setup secret valid for ttl, or "" when the
// server already has a tenant. Links issued earlier stay valid until they
// expire (another host may have printed one); expired ones are removed.
func (db *DB) IssueSetupLink(ctx context.Context, ttl time.Duration) (string, error) {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("store: setup link: %w", err)
	}
	secret := setupPrefix + base64.RawURLEncoding.EncodeToString(b[:])
	issued := false
	err := db.tx(ctx, func(c conn) error {
		needed, err := needsSetup(ctx, c)
		if err != nil || !needed {
			return err
		}
		t := now()
		if _, err := c.exec(ctx, `DELETE FROM setup_tokens WHERE expires_at <= ?`, micros(t)); err != nil {
			return fmt.Errorf("store: setup link: %w", err)
		}
		if _, err := c.exec(ctx, `INSERT INTO setup_tokens (hash, created_at, expires_at) VALUES (?, ?, ?)`,
			setupHash(secret), micros(t), micros(t.Add(ttl))); err != nil {
			return fmt.Errorf("store: setup link: %w", err)
		}
		issued = true
		return nil
	})
	if err != nil || !issued {
		return "", err
	}
	return secret, nil
}

// CompleteSetup uses a setup link: in one transaction it makes the tenant
// org, its admin user (email, name), a first workspace the admin manages and
// an API token of the admin's (valid for tokenTTL), and ends every setup
// link. A link that is unknown, used or expired is ErrUnauthenticated; a
// server that has a tenant already is ErrConflict. Nothing is half-made: a
// failure leaves the server as it was.
func (db *DB) CompleteSetup(ctx context.Context, secret, org, email, name string, tokenTTL time.Duration) (FirstRun, error) {
	org, email, name = strings.TrimSpace(org), strings.TrimSpace(email), strings.TrimSpace(name)
	if !strings.HasPrefix(secret, setupPrefix) {
		return FirstRun{}, fmt.Errorf("%w: not a setup link", tenancy.ErrUnauthenticated)
	}
	if !strings.Contains(email, "@") {
		return FirstRun{}, fmt.Errorf("%w: an e-mail address is required", tenancy.ErrInvalid)
	}
	if name == "" {
		name = email
	}
	var out FirstRun
	err := db.tx(ctx, func(c conn) error {
		if db.dialect == Postgres {
			// Two setups with two hosts' links must not both see no tenant:
			// they queue here (SQLite's write lock does the same).
			if _, err := c.exec(ctx, `SELECT pg_advisory_xact_lock(hashtextextended('agenthost first setup', 0))`); err != nil {
				return fmt.Errorf("store: setup: %w", err)
			}
		}
		res, err := c.exec(ctx, `DELETE FROM setup_tokens WHERE hash = ? AND expires_at > ?`, setupHash(secret), micros(now()))
		if err != nil {
			return fmt.Errorf("store: setup: %w", err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			if needed, err := needsSetup(ctx, c); err == nil && !needed {
				return fmt.Errorf("%w: this server is set up already; sign in", tenancy.ErrConflict)
			}
			return fmt.Errorf("%w: the setup link is unknown, used or expired (restart the server for a new one)", tenancy.ErrUnauthenticated)
		}
		needed, err := needsSetup(ctx, c)
		if err != nil {
			return err
		}
		if !needed {
			return fmt.Errorf("%w: this server is set up already; sign in", tenancy.ErrConflict)
		}
		if _, err := c.exec(ctx, `DELETE FROM setup_tokens`); err != nil {
			return fmt.Errorf("store: setup: %w", err)
		}
		if out.Tenant, err = createTenant(ctx, c, org); err != nil {
			return err
		}
		if out.User, err = createUser(ctx, c, tenancy.User{TenantID: out.Tenant.ID, Email: email, Name: name, Admin: true}); err != nil {
			return err
		}
		if out.Workspace, err = createWorkspace(ctx, c, tenancy.Workspace{TenantID: out.Tenant.ID, Name: "Workspace"}); err != nil {
			return err
		}
		if err := setMembership(ctx, c, tenancy.Membership{WorkspaceID: out.Workspace.ID, UserID: out.User.ID, Role: tenancy.RoleManager}); err != nil {
			return err
		}
		expires := now().Add(tokenTTL)
		_, out.Token, err = createToken(ctx, c, out.User.ID, "setup", &expires)
		return err
	})
	if err != nil {
		return FirstRun{}, err
	}
	return out, nil
}

func setupHash(secret string) []byte {
	h := sha256.Sum256([]byte(secret))
	return h[:]
}
