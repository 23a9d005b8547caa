-- +goose Up
-- Invitations: a tenant admin invites a person by e-mail address to the
-- tenant, with the admin flag and workspace roles the person gets on
-- accepting. The link's secret is kept only as its SHA-256; a link is
-- usable once (accepted_at), until expires_at, unless revoked. Times are
-- Unix microseconds.
CREATE TABLE invitations (
    id           TEXT PRIMARY KEY,
    tenant_id    TEXT NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
    email        TEXT NOT NULL,
    admin        BOOLEAN NOT NULL DEFAULT false,
    hash         BYTEA NOT NULL UNIQUE,
    created_by   TEXT REFERENCES users(id) ON DELETE SET NULL,
    created_at   BIGINT NOT NULL,
    expires_at   BIGINT NOT NULL,
    accepted_at  BIGINT,
    accepted_by  TEXT REFERENCES users(id) ON DELETE SET NULL,
    revoked_at   BIGINT
);
CREATE INDEX invitations_tenant ON invitations (tenant_id, created_at);

-- The workspace roles an invitation grants.
CREATE TABLE invitation_workspaces (
    invitation_id TEXT NOT NULL REFERENCES invitations(id) ON DELETE CASCADE,
    workspace_id  TEXT NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    role          TEXT NOT NULL,
    PRIMARY KEY (invitation_id, workspace_id)
);
