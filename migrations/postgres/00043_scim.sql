-- +goose Up
-- SCIM 2.0 provisioning (issue 25, host/scim, docs/scim.md).
-- scim_tokens: a tenant's bearer tokens for its identity provider, kept as
-- SHA-256 like API tokens. scim_users links a tenant's user to what the
-- provider knows of them (its externalId and userName, the name parts);
-- whether they are active is users.deactivated_at. scim_groups and
-- scim_group_members are the provider's groups; scim_mappings say which
-- workspace role (or, workspace_id '', tenant admin) a group gives, and
-- scim_grants what provisioning granted, so that it takes back only its
-- own grants, never an admin's. Times are Unix microseconds.
CREATE TABLE scim_tokens (
    id          TEXT PRIMARY KEY,
    tenant_id   TEXT NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
    name        TEXT NOT NULL,
    hash        BYTEA NOT NULL UNIQUE,
    created_at  BIGINT NOT NULL,
    revoked_at  BIGINT
);
CREATE INDEX scim_tokens_tenant ON scim_tokens (tenant_id);

CREATE TABLE scim_users (
    user_id      TEXT PRIMARY KEY REFERENCES users(id) ON DELETE CASCADE,
    tenant_id    TEXT NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
    user_name    TEXT NOT NULL,
    user_name_lc TEXT NOT NULL,
    external_id  TEXT NOT NULL DEFAULT '',
    given_name   TEXT NOT NULL DEFAULT '',
    family_name  TEXT NOT NULL DEFAULT '',
    display_name TEXT NOT NULL DEFAULT '',
    created_at   BIGINT NOT NULL,
    updated_at   BIGINT NOT NULL,
    UNIQUE (tenant_id, user_name_lc)
);
CREATE INDEX scim_users_external ON scim_users (tenant_id, external_id);

CREATE TABLE scim_groups (
    id           TEXT PRIMARY KEY,
    tenant_id    TEXT NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
    display_name TEXT NOT NULL,
    external_id  TEXT NOT NULL DEFAULT '',
    created_at   BIGINT NOT NULL,
    updated_at   BIGINT NOT NULL,
    UNIQUE (tenant_id, display_name)
);

CREATE TABLE scim_group_members (
    group_id TEXT NOT NULL REFERENCES scim_groups(id) ON DELETE CASCADE,
    user_id  TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    PRIMARY KEY (group_id, user_id)
);
CREATE INDEX scim_group_members_user ON scim_group_members (user_id);

CREATE TABLE scim_mappings (
    tenant_id    TEXT NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
    group_name   TEXT NOT NULL,
    workspace_id TEXT NOT NULL DEFAULT '',
    role         TEXT NOT NULL,
    PRIMARY KEY (tenant_id, group_name, workspace_id)
);

CREATE TABLE scim_grants (
    user_id      TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    workspace_id TEXT NOT NULL DEFAULT '',
    role         TEXT NOT NULL,
    PRIMARY KEY (user_id, workspace_id)
);
