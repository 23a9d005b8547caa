package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/agenthost/agenthost/host/tenancy"
)

// UserPreferences returns the principal's own settings; a person who saved
// none gets the defaults (the system theme, nothing else set). Only the
// person reads them: the principal names whose they are.
func (db *DB) UserPreferences(ctx context.Context, p tenancy.Principal) (tenancy.Preferences, error) {
	out := tenancy.Preferences{Theme: tenancy.ThemeSystem}
	err := db.conn().queryRow(ctx, `SELECT up.language, up.theme, up.custom_instructions, up.default_model
		FROM user_preferences up JOIN users u ON u.id = up.user_id
		WHERE up.user_id = ? AND u.tenant_id = ?`, p.UserID, p.TenantID).
		Scan(&out.Language, &out.Theme, &out.CustomInstructions, &out.DefaultModel)
	if errors.Is(err, sql.ErrNoRows) {
		return out, nil
	}
	if err != nil {
		return tenancy.Preferences{}, fmt.Errorf("store: user preferences: %w", err)
	}
	return out, nil
}

// SetUserPreferences replaces the principal's own settings with prefs,
// normalised (tenancy.Preferences.Normalize: a malformed field is
// ErrInvalid), and returns what is kept. A principal whose user is not in
// its tenant is ErrNotFound.
func (db *DB) SetUserPreferences(ctx context.Context, p tenancy.Principal, prefs tenancy.Preferences) (tenancy.Preferences, error) {
	prefs, err := prefs.Normalize()
	if err != nil {
		return tenancy.Preferences{}, err
	}
	res, err := db.conn().exec(ctx, `INSERT INTO user_preferences (user_id, language, theme, custom_instructions, default_model, updated_at)
		SELECT id, ?, ?, ?, ?, ? FROM users WHERE id = ? AND tenant_id = ?
		ON CONFLICT (user_id) DO UPDATE SET language = excluded.language, theme = excluded.theme,
			custom_instructions = excluded.custom_instructions, default_model = excluded.default_model, updated_at = excluded.updated_at`,
		prefs.Language, prefs.Theme, prefs.CustomInstructions, prefs.DefaultModel, micros(now()), p.UserID, p.TenantID)
	if err != nil {
		return tenancy.Preferences{}, fmt.Errorf("store: set user preferences: %w", err)
	}
	if n, err := res.RowsAffected(); err == nil && n == 0 {
		return tenancy.Preferences{}, fmt.Errorf("%w: user %q", tenancy.ErrNotFound, p.UserID)
	}
	return prefs, nil
}
