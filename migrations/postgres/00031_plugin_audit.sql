-- +goose Up
-- Plugin changes on the running host (issue 24): every install, upgrade
-- and removal, and every upgrade refused for widening the plugin, with
-- who asked (an admin of a tenant the operator names; plugins serve the
-- whole host, so the row belongs to no tenant), the versions and digests
-- from and to, and the manifest's changes (JSON: what, from, to, widens).
-- allowed_by says how a widening was let through: 'confirmed' by the
-- admin, or the operator's 'policy'. Rows are only ever added. Times are
-- Unix microseconds.
CREATE TABLE plugin_audit (
    id           TEXT PRIMARY KEY,
    at           BIGINT NOT NULL,
    actor_tenant TEXT NOT NULL DEFAULT '',
    actor_user   TEXT NOT NULL DEFAULT '',
    action       TEXT NOT NULL,
    plugin       TEXT NOT NULL,
    from_version TEXT NOT NULL DEFAULT '',
    to_version   TEXT NOT NULL DEFAULT '',
    from_sha256  TEXT NOT NULL DEFAULT '',
    to_sha256    TEXT NOT NULL DEFAULT '',
    changes      TEXT NOT NULL DEFAULT '[]',
    widened      BOOLEAN NOT NULL DEFAULT false,
    allowed_by   TEXT NOT NULL DEFAULT ''
);
CREATE INDEX plugin_audit_plugin ON plugin_audit (plugin, at);
