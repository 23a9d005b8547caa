package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/agenthost/agenthost/host/tenancy"
)

// The authorization server's records (host/oauthserver): the clients, a
// person's grants (consents) to them, and the codes and tokens issued
// under a grant. Secrets are returned once and kept as their SHA-256.

// Prefixes of the authorization server's secrets, so one pasted in the
// wrong place is recognised as the wrong kind; an access token is never an
// API token (the API refuses it, only the MCP endpoint accepts it).
const (
	OAuthCodePrefix    = "ahc_"
	OAuthAccessPrefix  = "aha_"
	OAuthRefreshPrefix = "ahr_"
)

// Kinds of OAuthClient.
const (
	ClientRegistered = "registered" // dynamic client registration (RFC 7591)
	ClientDocument   = "document"   // client ID metadata document (its https URL is the id)
)

// OAuthClient is a client the authorization server knows.
type OAuthClient struct {
	ID           string    `json:"clientId"`
	Kind         string    `json:"kind"`
	Name         string    `json:"name"`
	ClientURI    string    `json:"clientUri,omitempty"`
	RedirectURIs []string  `json:"redirectUris"`
	CreatedAt    time.Time `json:"createdAt"`
	// FetchedAt is when a document's client was last fetched.
	FetchedAt time.Time `json:"fetchedAt"`
}

// PutOAuthClient registers a client, or for a document's client replaces
// the cached document (same id).
func (db *DB) PutOAuthClient(ctx context.Context, c OAuthClient) error {
	if c.ID == "" || (c.Kind != ClientRegistered && c.Kind != ClientDocument) || len(c.RedirectURIs) == 0 {
		return fmt.Errorf("%w: a client needs an id, a kind and redirect URIs", tenancy.ErrInvalid)
	}
	uris, _ := json.Marshal(c.RedirectURIs)
	if c.CreatedAt.IsZero() {
		c.CreatedAt = now()
	}
	if c.FetchedAt.IsZero() {
		c.FetchedAt = c.CreatedAt
	}
	_, err := db.conn().exec(ctx, `INSERT INTO oauth_clients (id, kind, name, client_uri, redirect_uris, created_at, fetched_at)
		VALUES (?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (id) DO UPDATE SET name = excluded.name, client_uri = excluded.client_uri,
			redirect_uris = excluded.redirect_uris, fetched_at = excluded.fetched_at
		WHERE oauth_clients.kind = excluded.kind`,
		c.ID, c.Kind, c.Name, c.ClientURI, string(uris), micros(c.CreatedAt), micros(c.FetchedAt))
	if err != nil {
		return fmt.Errorf("store: put OAuth client: %w", err)
	}
	return nil
}

// OAuthClientByID returns a client; an unknown one is ErrNotFound.
func (db *DB) OAuthClientByID(ctx context.Context, id string) (OAuthClient, error) {
	var c OAuthClient
	var uris string
	var created, fetched int64
	err := db.conn().queryRow(ctx, `SELECT id, kind, name, client_uri, redirect_uris, created_at, fetched_at FROM oauth_clients WHERE id = ?`, id).
		Scan(&c.ID, &c.Kind, &c.Name, &c.ClientURI, &uris, &created, &fetched)
	if errors.Is(err, sql.ErrNoRows) {
		return OAuthClient{}, fmt.Errorf("%w: OAuth client %q", tenancy.ErrNotFound, id)
	}
	if err != nil {
		return OAuthClient{}, fmt.Errorf("store: OAuth client: %w", err)
	}
	if err := json.Unmarshal([]byte(uris), &c.RedirectURIs); err != nil {
		return OAuthClient{}, fmt.Errorf("store: OAuth client %q: redirect URIs: %w", id, err)
	}
	c.CreatedAt, c.FetchedAt = fromMicros(created), fromMicros(fetched)
	return c, nil
}

// OAuthGrant is a person's consent to a client, as the person sees it in
// their settings.
type OAuthGrant struct {
	ID          string     `json:"id"`
	TenantID    string     `json:"-"`
	UserID      string     `json:"-"`
	WorkspaceID string     `json:"workspaceId"`
	ClientID    string     `json:"clientId"`
	ClientName  string     `json:"clientName"`
	Scopes      []string   `json:"scopes"`
	Resource    string     `json:"resource,omitempty"`
	CreatedAt   time.Time  `json:"createdAt"`
	UsedAt      *time.Time `json:"usedAt,omitempty"`
	RevokedAt   *time.Time `json:"revokedAt,omitempty"`
}

// OAuthAuthorization is what a person consented to on the consent page:
// it becomes a grant and its authorization code.
type OAuthAuthorization struct {
	ClientID, ClientName string
	WorkspaceID          string
	Scopes               []string
	// Resource is the MCP endpoint the client named (RFC 8707), or "".
	Resource string
	// RedirectURI and Challenge (PKCE S256) bind the code to its request.
	RedirectURI, Challenge string
	TTL                    time.Duration
}

// AuthorizeOAuth records the person's consent and returns the
// authorization code (once). The workspace must be one the person may
// see: a grant never reaches further than its person.
func (db *DB) AuthorizeOAuth(ctx context.Context, p tenancy.Principal, a OAuthAuthorization) (OAuthGrant, string, error) {
	if a.ClientID == "" || a.RedirectURI == "" || a.Challenge == "" || a.TTL <= 0 || len(a.Scopes) == 0 {
		return OAuthGrant{}, "", fmt.Errorf("%w: an authorization needs a client, a redirect URI, a PKCE challenge, scopes and a time", tenancy.ErrInvalid)
	}
	g := OAuthGrant{ID: newID(), TenantID: p.TenantID, UserID: p.UserID, WorkspaceID: a.WorkspaceID, ClientID: a.ClientID,
		ClientName: a.ClientName, Scopes: append([]string{}, a.Scopes...), Resource: a.Resource, CreatedAt: now()}
	code := newSecret(OAuthCodePrefix)
	err := db.tx(ctx, func(c conn) error {
		if _, _, err := workspaceLevels(ctx, c, p, a.WorkspaceID); err != nil {
			return err
		}
		if _, err := c.exec(ctx, `INSERT INTO oauth_grants (id, tenant_id, user_id, workspace_id, client_id, client_name, scopes, resource, created_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`, g.ID, g.TenantID, g.UserID, g.WorkspaceID, g.ClientID, g.ClientName,
			strings.Join(g.Scopes, " "), g.Resource, micros(g.CreatedAt)); err != nil {
			return fmt.Errorf("store: authorize: %w", err)
		}
		// Codes of long-gone requests go on the way.
		if _, err := c.exec(ctx, `DELETE FROM oauth_codes WHERE expires_at <= ?`, micros(g.CreatedAt.Add(-time.Hour))); err != nil {
			return fmt.Errorf("store: authorize: %w", err)
		}
		_, err := c.exec(ctx, `INSERT INTO oauth_codes (hash, grant_id, redirect_uri, challenge, expires_at) VALUES (?, ?, ?, ?, ?)`,
			sessionHash(code), g.ID, a.RedirectURI, a.Challenge, micros(g.CreatedAt.Add(a.TTL)))
		if err != nil {
			return fmt.Errorf("store: authorize: %w", err)
		}
		return nil
	})
	if err != nil {
		return OAuthGrant{}, "", err
	}
	return g, code, nil
}

// OAuthCode is what an authorization code stood for, returned once by
// TakeOAuthCode.
type OAuthCode struct {
	Grant                  OAuthGrant
	RedirectURI, Challenge string
}

// OAuthReuseError is a code or refresh token presented a second time: its
// grant is revoked now (one of the presenters stole it). It is
// ErrUnauthenticated.
type OAuthReuseError struct{ Grant OAuthGrant }

func (e *OAuthReuseError) Error() string {
	return "the code or refresh token was used already; its grant is revoked"
}

// Unwrap makes the error ErrUnauthenticated.
func (e *OAuthReuseError) Unwrap() error { return tenancy.ErrUnauthenticated }

// TakeOAuthCode takes a code, once. An unknown or expired code is
// ErrUnauthenticated; a code presented a second time is too, and revokes
// its grant with every token issued under it (OAuth 2.1 section 4.1.3: the
// second presenter may be a thief of the first's response).
func (db *DB) TakeOAuthCode(ctx context.Context, code string) (OAuthCode, error) {
	var out OAuthCode
	var reused bool
	t := now()
	err := db.tx(ctx, func(c conn) error {
		var expires int64
		var taken sql.NullInt64
		err := c.queryRow(ctx, `SELECT grant_id, redirect_uri, challenge, expires_at, taken_at FROM oauth_codes WHERE hash = ?`, sessionHash(code)).
			Scan(&out.Grant.ID, &out.RedirectURI, &out.Challenge, &expires, &taken)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("%w: unknown authorization code", tenancy.ErrUnauthenticated)
		}
		if err != nil {
			return fmt.Errorf("store: take code: %w", err)
		}
		if taken.Valid {
			reused = true
			if out.Grant, err = grantByID(ctx, c, out.Grant.ID); err != nil {
				return err
			}
			return revokeGrant(ctx, c, out.Grant.ID, t)
		}
		res, err := c.exec(ctx, `UPDATE oauth_codes SET taken_at = ? WHERE hash = ? AND taken_at IS NULL`, micros(t), sessionHash(code))
		if err != nil {
			return fmt.Errorf("store: take code: %w", err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return fmt.Errorf("%w: the authorization code was used already", tenancy.ErrUnauthenticated)
		}
		if expires <= micros(t) {
			return nil // checked below, after the code is spent
		}
		out.Grant, err = grantByID(ctx, c, out.Grant.ID)
		return err
	})
	switch {
	case err != nil:
		return OAuthCode{}, err
	case reused:
		return OAuthCode{}, &OAuthReuseError{Grant: out.Grant}
	case out.Grant.ClientID == "":
		return OAuthCode{}, fmt.Errorf("%w: the authorization code expired", tenancy.ErrUnauthenticated)
	case out.Grant.RevokedAt != nil:
		return OAuthCode{}, fmt.Errorf("%w: the grant was revoked", tenancy.ErrUnauthenticated)
	}
	return out, nil
}

func grantByID(ctx context.Context, c conn, id string) (OAuthGrant, error) {
	rows, err := queryAll(ctx, c, "OAuth grant", scanGrant, `SELECT `+grantCols+` FROM oauth_grants WHERE id = ?`, id)
	if err != nil {
		return OAuthGrant{}, err
	}
	if len(rows) == 0 {
		return OAuthGrant{}, fmt.Errorf("%w: OAuth grant %q", tenancy.ErrNotFound, id)
	}
	return rows[0], nil
}

const grantCols = `id, tenant_id, user_id, workspace_id, client_id, client_name, scopes, resource, created_at, used_at, revoked_at`

func scanGrant(r interface{ Scan(...any) error }) (OAuthGrant, error) {
	var g OAuthGrant
	var scopes string
	var created int64
	var used, revoked sql.NullInt64
	if err := r.Scan(&g.ID, &g.TenantID, &g.UserID, &g.WorkspaceID, &g.ClientID, &g.ClientName, &scopes, &g.Resource, &created, &used, &revoked); err != nil {
		return OAuthGrant{}, err
	}
	g.Scopes = strings.Fields(scopes)
	g.CreatedAt, g.UsedAt, g.RevokedAt = fromMicros(created), fromNullMicros(used), fromNullMicros(revoked)
	return g, nil
}

func revokeGrant(ctx context.Context, c conn, id string, t time.Time) error {
	if _, err := c.exec(ctx, `UPDATE oauth_grants SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL`, micros(t), id); err != nil {
		return fmt.Errorf("store: revoke grant: %w", err)
	}
	if _, err := c.exec(ctx, `UPDATE oauth_tokens SET revoked_at = ? WHERE grant_id = ? AND revoked_at IS NULL`, micros(t), id); err != nil {
		return fmt.Errorf("store: revoke grant: %w", err)
	}
	return nil
}

// OAuthTokens are an access token and its refresh token, returned once.
type OAuthTokens struct {
	Access, Refresh string
	// AccessExpiresAt is when the access token ends.
	AccessExpiresAt time.Time
	Grant           OAuthGrant
}

// TokenTTLs bound an access token's and a refresh token's lives.
type TokenTTLs struct{ Access, Refresh time.Duration }

// IssueOAuthTokens issues the first tokens of a grant (after its code was
// taken).
func (db *DB) IssueOAuthTokens(ctx context.Context, grantID string, ttl TokenTTLs) (OAuthTokens, error) {
	var out OAuthTokens
	err := db.tx(ctx, func(c conn) error {
		g, err := grantByID(ctx, c, grantID)
		if err != nil {
			return err
		}
		if g.RevokedAt != nil {
			return fmt.Errorf("%w: the grant was revoked", tenancy.ErrUnauthenticated)
		}
		out, err = issue(ctx, c, g, ttl)
		return err
	})
	return out, err
}

func issue(ctx context.Context, c conn, g OAuthGrant, ttl TokenTTLs) (OAuthTokens, error) {
	if ttl.Access <= 0 || ttl.Refresh <= 0 {
		return OAuthTokens{}, fmt.Errorf("%w: token lifetimes must be positive", tenancy.ErrInvalid)
	}
	t := now()
	out := OAuthTokens{Access: newSecret(OAuthAccessPrefix), Refresh: newSecret(OAuthRefreshPrefix), AccessExpiresAt: t.Add(ttl.Access), Grant: g}
	// Tokens that ended a while ago go on the way (a reused refresh token
	// is recognised for as long as its row stays: its own life).
	if _, err := c.exec(ctx, `DELETE FROM oauth_tokens WHERE grant_id = ? AND expires_at <= ?`, g.ID, micros(t)); err != nil {
		return OAuthTokens{}, fmt.Errorf("store: issue tokens: %w", err)
	}
	for _, tk := range []struct {
		secret, kind string
		ttl          time.Duration
	}{{out.Access, "access", ttl.Access}, {out.Refresh, "refresh", ttl.Refresh}} {
		if _, err := c.exec(ctx, `INSERT INTO oauth_tokens (hash, grant_id, kind, created_at, expires_at) VALUES (?, ?, ?, ?, ?)`,
			sessionHash(tk.secret), g.ID, tk.kind, micros(t), micros(t.Add(tk.ttl))); err != nil {
			return OAuthTokens{}, fmt.Errorf("store: issue tokens: %w", err)
		}
	}
	if _, err := c.exec(ctx, `UPDATE oauth_grants SET used_at = ? WHERE id = ?`, micros(t), g.ID); err != nil {
		return OAuthTokens{}, fmt.Errorf("store: issue tokens: %w", err)
	}
	return out, nil
}

// RefreshOAuthTokens exchanges a refresh token of the client for new
// tokens; the old refresh token is spent (rotation). Presenting a spent
// one again revokes the grant (reuse detection: one of the two presenters
// stole it). A token of another client, expired, revoked or unknown is
// ErrUnauthenticated; so is one whose person lost the workspace or was
// deactivated.
func (db *DB) RefreshOAuthTokens(ctx context.Context, clientID, refresh string, ttl TokenTTLs) (OAuthTokens, error) {
	var out OAuthTokens
	var reused *OAuthReuseError
	t := now()
	err := db.tx(ctx, func(c conn) error {
		var grantID, kind string
		var expires int64
		var rotated, revoked sql.NullInt64
		err := c.queryRow(ctx, `SELECT grant_id, kind, expires_at, rotated_at, revoked_at FROM oauth_tokens WHERE hash = ?`, sessionHash(refresh)).
			Scan(&grantID, &kind, &expires, &rotated, &revoked)
		if errors.Is(err, sql.ErrNoRows) || (err == nil && kind != "refresh") {
			return fmt.Errorf("%w: unknown refresh token", tenancy.ErrUnauthenticated)
		}
		if err != nil {
			return fmt.Errorf("store: refresh: %w", err)
		}
		g, err := grantByID(ctx, c, grantID)
		if err != nil {
			return err
		}
		if g.ClientID != clientID {
			return fmt.Errorf("%w: the refresh token was issued to another client", tenancy.ErrUnauthenticated)
		}
		switch {
		case rotated.Valid:
			reused = &OAuthReuseError{Grant: g}
			return revokeGrant(ctx, c, g.ID, t)
		case revoked.Valid || g.RevokedAt != nil:
			return fmt.Errorf("%w: the grant was revoked", tenancy.ErrUnauthenticated)
		case expires <= micros(t):
			return fmt.Errorf("%w: the refresh token expired", tenancy.ErrUnauthenticated)
		}
		if err := grantHolds(ctx, c, g); err != nil {
			return err
		}
		res, err := c.exec(ctx, `UPDATE oauth_tokens SET rotated_at = ? WHERE hash = ? AND rotated_at IS NULL`, micros(t), sessionHash(refresh))
		if err != nil {
			return fmt.Errorf("store: refresh: %w", err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return fmt.Errorf("%w: the refresh token was used already", tenancy.ErrUnauthenticated)
		}
		out, err = issue(ctx, c, g, ttl)
		return err
	})
	if err == nil && reused != nil {
		return OAuthTokens{}, reused
	}
	return out, err
}

// grantHolds checks that the grant's person is still active and still
// sees its workspace.
func grantHolds(ctx context.Context, c conn, g OAuthGrant) error {
	var admin bool
	var deactivated sql.NullInt64
	err := c.queryRow(ctx, `SELECT admin, deactivated_at FROM users WHERE id = ? AND tenant_id = ?`, g.UserID, g.TenantID).Scan(&admin, &deactivated)
	if errors.Is(err, sql.ErrNoRows) || (err == nil && deactivated.Valid) {
		return fmt.Errorf("%w: the grant's person is deactivated or gone", tenancy.ErrUnauthenticated)
	}
	if err != nil {
		return fmt.Errorf("store: grant: %w", err)
	}
	p := tenancy.Principal{TenantID: g.TenantID, UserID: g.UserID, Admin: admin}
	if _, _, err := workspaceLevels(ctx, c, p, g.WorkspaceID); err != nil {
		if errors.Is(err, tenancy.ErrNotFound) {
			return fmt.Errorf("%w: the grant's person no longer sees its workspace", tenancy.ErrUnauthenticated)
		}
		return err
	}
	return nil
}

// OAuthAccess is what a live access token admits: its person, in one
// workspace, with the scopes granted.
type OAuthAccess struct {
	Principal   tenancy.Principal
	WorkspaceID string
	Scopes      []string
	Resource    string
	GrantID     string
	ClientID    string
	ExpiresAt   time.Time
}

// AuthenticateOAuth checks an access token: unknown, expired or revoked
// tokens, revoked grants and deactivated people are ErrUnauthenticated.
// The person's rights in the workspace are not checked here: every
// request checks them (store.DB.Levels), as it does for API tokens.
func (db *DB) AuthenticateOAuth(ctx context.Context, access string) (OAuthAccess, error) {
	if !strings.HasPrefix(access, OAuthAccessPrefix) {
		return OAuthAccess{}, fmt.Errorf("%w: not an OAuth access token", tenancy.ErrUnauthenticated)
	}
	var a OAuthAccess
	var kind, scopes string
	var expires int64
	var revoked, grantRevoked, deactivated sql.NullInt64
	err := db.conn().queryRow(ctx, `SELECT t.kind, t.expires_at, t.revoked_at, g.id, g.tenant_id, g.user_id, u.admin, g.workspace_id, g.client_id,
			g.scopes, g.resource, g.revoked_at, u.deactivated_at
		FROM oauth_tokens t JOIN oauth_grants g ON g.id = t.grant_id JOIN users u ON u.id = g.user_id WHERE t.hash = ?`, sessionHash(access)).
		Scan(&kind, &expires, &revoked, &a.GrantID, &a.Principal.TenantID, &a.Principal.UserID, &a.Principal.Admin, &a.WorkspaceID, &a.ClientID,
			&scopes, &a.Resource, &grantRevoked, &deactivated)
	switch {
	case errors.Is(err, sql.ErrNoRows) || (err == nil && kind != "access"):
		return OAuthAccess{}, fmt.Errorf("%w: unknown access token", tenancy.ErrUnauthenticated)
	case err != nil:
		return OAuthAccess{}, fmt.Errorf("store: authenticate: %w", err)
	case revoked.Valid || grantRevoked.Valid:
		return OAuthAccess{}, fmt.Errorf("%w: access token revoked", tenancy.ErrUnauthenticated)
	case expires <= micros(now()):
		return OAuthAccess{}, fmt.Errorf("%w: access token expired", tenancy.ErrUnauthenticated)
	case deactivated.Valid:
		return OAuthAccess{}, fmt.Errorf("%w: the token's user is deactivated", tenancy.ErrUnauthenticated)
	}
	a.Scopes, a.ExpiresAt = strings.Fields(scopes), fromMicros(expires)
	return a, nil
}

// RevokeOAuthToken revokes a token the client holds (RFC 7009): a refresh
// token revokes its whole grant (returned, unless it was revoked already),
// an access token itself. A token unknown,
// or of another client, changes nothing and is no error (the RFC answers
// 200 either way, so a caller learns nothing about others' tokens).
func (db *DB) RevokeOAuthToken(ctx context.Context, clientID, token string) (revoked *OAuthGrant, err error) {
	t := now()
	err = db.tx(ctx, func(c conn) error {
		var grantID, kind, owner string
		err := c.queryRow(ctx, `SELECT t.grant_id, t.kind, g.client_id FROM oauth_tokens t JOIN oauth_grants g ON g.id = t.grant_id WHERE t.hash = ?`,
			sessionHash(token)).Scan(&grantID, &kind, &owner)
		if errors.Is(err, sql.ErrNoRows) || (err == nil && owner != clientID) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("store: revoke token: %w", err)
		}
		if kind == "refresh" {
			g, err := grantByID(ctx, c, grantID)
			if err != nil {
				return err
			}
			if g.RevokedAt != nil {
				return nil
			}
			revoked = &g
			return revokeGrant(ctx, c, grantID, t)
		}
		_, err = c.exec(ctx, `UPDATE oauth_tokens SET revoked_at = ? WHERE hash = ? AND revoked_at IS NULL`, micros(t), sessionHash(token))
		if err != nil {
			return fmt.Errorf("store: revoke token: %w", err)
		}
		return nil
	})
	return revoked, err
}

// OAuthGrants lists the person's live grants (tokens were issued, not
// revoked), newest first: the MCP clients they authorised.
func (db *DB) OAuthGrants(ctx context.Context, p tenancy.Principal) ([]OAuthGrant, error) {
	return queryAll(ctx, db.conn(), "OAuth grants", scanGrant, `SELECT `+grantCols+` FROM oauth_grants
		WHERE tenant_id = ? AND user_id = ? AND used_at IS NOT NULL AND revoked_at IS NULL ORDER BY created_at DESC, id DESC`, p.TenantID, p.UserID)
}

// RevokeOAuthGrant revokes one of the person's own grants and its tokens;
// another person's (an admin's included) is ErrNotFound.
func (db *DB) RevokeOAuthGrant(ctx context.Context, p tenancy.Principal, id string) (OAuthGrant, error) {
	var g OAuthGrant
	err := db.tx(ctx, func(c conn) error {
		var err error
		g, err = grantByID(ctx, c, id)
		if err != nil {
			return err
		}
		if g.TenantID != p.TenantID || g.UserID != p.UserID {
			return fmt.Errorf("%w: OAuth grant %q", tenancy.ErrNotFound, id)
		}
		t := now()
		if g.RevokedAt == nil {
			g.RevokedAt = &t
		}
		return revokeGrant(ctx, c, id, t)
	})
	return g, err
}
