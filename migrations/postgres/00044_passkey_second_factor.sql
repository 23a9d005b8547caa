-- +goose Up
-- A tenant may require a passkey as a second factor: a session opened by an
-- API token in the browser or by an identity provider is then pending
-- (second_factor_pending) until its person proves a passkey of theirs. A
-- passkey sign-in is both factors and never pending.
ALTER TABLE tenants ADD COLUMN passkey_second_factor BOOLEAN NOT NULL DEFAULT false;
ALTER TABLE sessions ADD COLUMN second_factor_pending BOOLEAN NOT NULL DEFAULT false;
