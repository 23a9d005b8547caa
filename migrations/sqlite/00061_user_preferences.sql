-- +goose Up
-- A person's own settings (issue 28, item 5; docs/ui.md): the UI's
-- language and theme, instructions added to every conversation of theirs,
-- and the model their new conversations use where the workspace allows it.
-- No row: every setting at its default.
CREATE TABLE user_preferences (
    user_id             TEXT PRIMARY KEY REFERENCES users(id) ON DELETE CASCADE,
    language            TEXT NOT NULL DEFAULT '',
    theme               TEXT NOT NULL DEFAULT 'system',
    custom_instructions TEXT NOT NULL DEFAULT '',
    default_model       TEXT NOT NULL DEFAULT '',
    updated_at          INTEGER NOT NULL
) STRICT;

-- +goose Down
DROP TABLE user_preferences;
