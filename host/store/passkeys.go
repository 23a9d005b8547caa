package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/agenthost/agenthost/host/tenancy"
)

// Passkey is a user's WebAuthn credential as the store keeps it. The
// credential itself (public key, flags, AAGUID) is opaque here: the passkey
// service verifies it and reads it back.
type Passkey struct {
	ID           string     `json:"id"`
	UserID       string     `json:"userId"`
	Name         string     `json:"name"`
	CredentialID []byte     `json:"-"`
	Credential   []byte     `json:"-"`
	SignCount    uint32     `json:"-"`
	CreatedAt    time.Time  `json:"createdAt"`
	LastUsedAt   *time.Time `json:"lastUsedAt,omitempty"`
}

// maxPasskeyName bounds a passkey's name (characters).
const maxPasskeyName = 100

// ErrCloned reports a passkey assertion whose signature counter did not go
// up: the authenticator was cloned, or the assertion is replayed.
var ErrCloned = errors.New("passkey signature counter did not increase")

func passkeyName(name string) (string, error) {
	name = strings.TrimSpace(name)
	if name == "" || utf8.RuneCountInString(name) > maxPasskeyName || strings.ContainsAny(name, "\x00\r\n") {
		return "", fmt.Errorf("%w: a passkey needs a name of 1 to %d characters on one line", tenancy.ErrInvalid, maxPasskeyName)
	}
	return name, nil
}

// AddPasskey keeps a verified credential as a passkey of the user. A
// credential id already registered (to anyone) is ErrConflict.
func (db *DB) AddPasskey(ctx context.Context, userID, name string, credentialID, credential []byte, signCount uint32) (Passkey, error) {
	name, err := passkeyName(name)
	if err != nil {
		return Passkey{}, err
	}
	if len(credentialID) == 0 || len(credentialID) > 1023 || len(credential) == 0 {
		return Passkey{}, fmt.Errorf("%w: passkey credential", tenancy.ErrInvalid)
	}
	p := Passkey{ID: newID(), UserID: userID, Name: name, CredentialID: credentialID, Credential: credential, SignCount: signCount, CreatedAt: now()}
	_, err = db.conn().exec(ctx, `INSERT INTO passkeys (id, user_id, credential_id, name, credential, sign_count, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)`,
		p.ID, p.UserID, p.CredentialID, p.Name, p.Credential, int64(p.SignCount), micros(p.CreatedAt))
	switch {
	case isUnique(err):
		return Passkey{}, fmt.Errorf("%w: this passkey is registered already", tenancy.ErrConflict)
	case isForeignKey(err):
		return Passkey{}, fmt.Errorf("%w: user %q", tenancy.ErrNotFound, userID)
	case err != nil:
		return Passkey{}, fmt.Errorf("store: add passkey: %w", err)
	}
	return p, nil
}

const passkeyColumns = `id, user_id, credential_id, name, credential, sign_count, created_at, last_used_at`

func scanPasskey(row interface{ Scan(...any) error }) (Passkey, error) {
	var p Passkey
	var count, created int64
	var used sql.NullInt64
	if err := row.Scan(&p.ID, &p.UserID, &p.CredentialID, &p.Name, &p.Credential, &count, &created, &used); err != nil {
		return Passkey{}, err
	}
	p.SignCount, p.CreatedAt, p.LastUsedAt = uint32(count), fromMicros(created), fromNullMicros(used)
	return p, nil
}

// UserPasskeys lists a user's passkeys, oldest first.
func (db *DB) UserPasskeys(ctx context.Context, userID string) ([]Passkey, error) {
	rows, err := db.conn().query(ctx, `SELECT `+passkeyColumns+` FROM passkeys WHERE user_id = ? ORDER BY created_at, id`, userID)
	if err != nil {
		return nil, fmt.Errorf("store: passkeys: %w", err)
	}
	defer rows.Close()
	out := []Passkey{}
	for rows.Next() {
		p, err := scanPasskey(rows)
		if err != nil {
			return nil, fmt.Errorf("store: passkeys: %w", err)
		}
		out = append(out, p)
	}
	return out, rows.Err()
}

// PasskeyByCredentialID returns the passkey an authenticator's credential
// id names; an unknown one is ErrNotFound.
func (db *DB) PasskeyByCredentialID(ctx context.Context, credentialID []byte) (Passkey, error) {
	p, err := scanPasskey(db.conn().queryRow(ctx, `SELECT `+passkeyColumns+` FROM passkeys WHERE credential_id = ?`, credentialID))
	if errors.Is(err, sql.ErrNoRows) {
		return Passkey{}, fmt.Errorf("%w: passkey", tenancy.ErrNotFound)
	}
	if err != nil {
		return Passkey{}, fmt.Errorf("store: passkey: %w", err)
	}
	return p, nil
}

// RemovePasskey revokes one of the user's passkeys: it signs in no more.
// Another user's passkey, or an unknown one, is ErrNotFound.
func (db *DB) RemovePasskey(ctx context.Context, userID, passkeyID string) (Passkey, error) {
	var p Passkey
	err := db.tx(ctx, func(c conn) error {
		var err error
		p, err = scanPasskey(c.queryRow(ctx, `SELECT `+passkeyColumns+` FROM passkeys WHERE id = ? AND user_id = ?`, passkeyID, userID))
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("%w: passkey %q", tenancy.ErrNotFound, passkeyID)
		}
		if err != nil {
			return fmt.Errorf("store: remove passkey: %w", err)
		}
		if _, err := c.exec(ctx, `DELETE FROM passkeys WHERE id = ?`, passkeyID); err != nil {
			return fmt.Errorf("store: remove passkey: %w", err)
		}
		return nil
	})
	return p, err
}

// UsePasskey records a verified sign-in with a passkey: its new signature
// counter and credential (flags may change), and when. An authenticator
// that counts must count up: a counter that does not exceed the last one
// seen is ErrCloned and changes nothing (authenticators that always send 0
// do not count, WebAuthn §6.1.1).
func (db *DB) UsePasskey(ctx context.Context, passkeyID string, signCount uint32, credential []byte) error {
	res, err := db.conn().exec(ctx, `UPDATE passkeys SET sign_count = ?, credential = ?, last_used_at = ?
		WHERE id = ? AND ((sign_count = 0 AND ? = 0) OR sign_count < ?)`,
		int64(signCount), credential, micros(now()), passkeyID, int64(signCount), int64(signCount))
	if err != nil {
		return fmt.Errorf("store: use passkey: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		var one int
		if err := db.conn().queryRow(ctx, `SELECT 1 FROM passkeys WHERE id = ?`, passkeyID).Scan(&one); errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("%w: passkey %q", tenancy.ErrNotFound, passkeyID)
		}
		return ErrCloned
	}
	return nil
}

// UserByID returns any user by id: for sign-in methods that prove who a
// user is before there is a principal (a passkey's user handle). Unknown is
// ErrNotFound.
func (db *DB) UserByID(ctx context.Context, userID string) (tenancy.User, error) {
	users, err := db.users(ctx, `WHERE id = ?`, userID)
	if err != nil {
		return tenancy.User{}, err
	}
	if len(users) == 0 {
		return tenancy.User{}, fmt.Errorf("%w: user", tenancy.ErrNotFound)
	}
	return users[0], nil
}

// UsersByEmail returns the users of every tenant with this e-mail address
// (compared without regard to case), for sign-in by e-mail.
func (db *DB) UsersByEmail(ctx context.Context, email string) ([]tenancy.User, error) {
	return db.users(ctx, `WHERE LOWER(email) = LOWER(?) ORDER BY created_at, id`, strings.TrimSpace(email))
}

func (db *DB) users(ctx context.Context, where string, args ...any) ([]tenancy.User, error) {
	rows, err := db.conn().query(ctx, `SELECT id, tenant_id, email, name, admin, created_at, deactivated_at, last_sign_in_at FROM users `+where, args...)
	if err != nil {
		return nil, fmt.Errorf("store: users: %w", err)
	}
	defer rows.Close()
	out := []tenancy.User{}
	for rows.Next() {
		var u tenancy.User
		var created int64
		var deactivated, lastSignIn sql.NullInt64
		if err := rows.Scan(&u.ID, &u.TenantID, &u.Email, &u.Name, &u.Admin, &created, &deactivated, &lastSignIn); err != nil {
			return nil, fmt.Errorf("store: users: %w", err)
		}
		u.CreatedAt, u.DeactivatedAt, u.LastSignInAt = fromMicros(created), fromNullMicros(deactivated), fromNullMicros(lastSignIn)
		out = append(out, u)
	}
	return out, rows.Err()
}

// Ceremony kinds (SaveCeremony).
const (
	CeremonyRegister = "register"
	CeremonySignIn   = "signin"
	// CeremonySecondFactor is a pending session's passkey assertion.
	CeremonySecondFactor = "second_factor"
)

// SaveCeremony keeps a WebAuthn ceremony's state until ttl has passed and
// returns its id; userID is the user it is for ("" for none). Expired
// ceremonies are purged on the way.
func (db *DB) SaveCeremony(ctx context.Context, kind, userID string, data []byte, ttl time.Duration) (string, error) {
	t := now()
	if _, err := db.conn().exec(ctx, `DELETE FROM webauthn_ceremonies WHERE expires_at <= ?`, micros(t)); err != nil {
		return "", fmt.Errorf("store: save ceremony: %w", err)
	}
	id := newSecret("")
	_, err := db.conn().exec(ctx, `INSERT INTO webauthn_ceremonies (id, kind, user_id, data, created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?)`,
		id, kind, nullString(userID), data, micros(t), micros(t.Add(ttl)))
	if isForeignKey(err) {
		return "", fmt.Errorf("%w: user %q", tenancy.ErrNotFound, userID)
	}
	if err != nil {
		return "", fmt.Errorf("store: save ceremony: %w", err)
	}
	return id, nil
}

// TakeCeremony returns a ceremony's state and deletes it: a ceremony is
// finished once, whatever the outcome. An unknown, used, expired or
// other-kind ceremony is ErrUnauthenticated.
func (db *DB) TakeCeremony(ctx context.Context, id, kind string) (userID string, data []byte, err error) {
	var k string
	var user sql.NullString
	var expires int64
	err = db.conn().queryRow(ctx, `DELETE FROM webauthn_ceremonies WHERE id = ? RETURNING kind, user_id, data, expires_at`, id).
		Scan(&k, &user, &data, &expires)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return "", nil, fmt.Errorf("%w: unknown or used passkey ceremony (start again)", tenancy.ErrUnauthenticated)
	case err != nil:
		return "", nil, fmt.Errorf("store: take ceremony: %w", err)
	case k != kind:
		return "", nil, fmt.Errorf("%w: passkey ceremony of another kind", tenancy.ErrUnauthenticated)
	case expires <= micros(now()):
		return "", nil, fmt.Errorf("%w: the passkey ceremony expired (start again)", tenancy.ErrUnauthenticated)
	}
	return user.String, data, nil
}

// CeremonyInvite is a passkey registration by a person following an
// invitation link, before their user exists.
const CeremonyInvite = "invite"

// UserHandle is the WebAuthn user handle of a user: the one set when they
// registered from an invitation, else their id.
func (db *DB) UserHandle(ctx context.Context, userID string) ([]byte, error) {
	var h []byte
	err := db.conn().queryRow(ctx, `SELECT webauthn_handle FROM users WHERE id = ?`, userID).Scan(&h)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("%w: user", tenancy.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("store: user handle: %w", err)
	}
	if len(h) == 0 {
		return []byte(userID), nil
	}
	return h, nil
}

// NewPasskey is a verified credential to keep.
type NewPasskey struct {
	Name         string
	CredentialID []byte
	Credential   []byte
	SignCount    uint32
}

// AcceptInvitationWithPasskey accepts an invitation (see AcceptInvitation:
// once, the invited address) for a new person who has just registered a
// passkey under handle, in one transaction: the user is created with the
// invitation's roles, gets the handle and the passkey. Nothing is half-made.
func (db *DB) AcceptInvitationWithPasskey(ctx context.Context, secret string, handle []byte, k NewPasskey) (tenancy.User, Passkey, error) {
	name, err := passkeyName(k.Name)
	if err != nil {
		return tenancy.User{}, Passkey{}, err
	}
	if len(handle) == 0 || len(handle) > 64 || len(k.CredentialID) == 0 || len(k.CredentialID) > 1023 || len(k.Credential) == 0 {
		return tenancy.User{}, Passkey{}, fmt.Errorf("%w: passkey credential", tenancy.ErrInvalid)
	}
	var u tenancy.User
	var p Passkey
	err = db.tx(ctx, func(c conn) error {
		var err error
		if u, _, err = acceptInvitation(ctx, c, secret, tenancy.User{}); err != nil {
			return err
		}
		if _, err := c.exec(ctx, `UPDATE users SET webauthn_handle = ? WHERE id = ?`, handle, u.ID); err != nil {
			if isUnique(err) {
				return fmt.Errorf("%w: this passkey's user handle is taken", tenancy.ErrConflict)
			}
			return fmt.Errorf("store: accept invitation: %w", err)
		}
		p = Passkey{ID: newID(), UserID: u.ID, Name: name, CredentialID: k.CredentialID, Credential: k.Credential, SignCount: k.SignCount, CreatedAt: now()}
		_, err = c.exec(ctx, `INSERT INTO passkeys (id, user_id, credential_id, name, credential, sign_count, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)`,
			p.ID, p.UserID, p.CredentialID, p.Name, p.Credential, int64(p.SignCount), micros(p.CreatedAt))
		if isUnique(err) {
			return fmt.Errorf("%w: this passkey is registered already", tenancy.ErrConflict)
		}
		if err != nil {
			return fmt.Errorf("store: accept invitation: %w", err)
		}
		return nil
	})
	return u, p, err
}
