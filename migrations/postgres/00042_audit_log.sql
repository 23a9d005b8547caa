-- +goose Up
-- The tenant's audit log (issue 25, host/audit): who did what, when, from
-- where, to what. actor_kind is 'user', 'scim' or 'system'; actor_id the
-- user's or SCIM token's id; actor_via how a user acted ('token',
-- 'session', 'cli'). target_type/target_id name what was acted on, detail
-- is a JSON object (bounded by host/audit). Rows are only ever added: an
-- update is refused by a trigger, and rows leave only by retention
-- (host/audit's sweep) or with their tenant. Times are Unix microseconds.
CREATE TABLE audit_log (
    id          TEXT PRIMARY KEY,
    tenant_id   TEXT NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
    at          BIGINT NOT NULL,
    actor_kind  TEXT NOT NULL,
    actor_id    TEXT NOT NULL DEFAULT '',
    actor_via   TEXT NOT NULL DEFAULT '',
    ip          TEXT NOT NULL DEFAULT '',
    user_agent  TEXT NOT NULL DEFAULT '',
    action      TEXT NOT NULL,
    target_type TEXT NOT NULL DEFAULT '',
    target_id   TEXT NOT NULL DEFAULT '',
    workspace_id TEXT NOT NULL DEFAULT '',
    detail      TEXT NOT NULL DEFAULT '{}'
);
CREATE INDEX audit_log_tenant_at ON audit_log (tenant_id, at, id);
CREATE INDEX audit_log_at ON audit_log (at);
-- +goose StatementBegin
CREATE FUNCTION audit_log_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'audit_log is append-only';
END;
$$;
-- +goose StatementEnd
CREATE TRIGGER audit_log_append_only BEFORE UPDATE ON audit_log
    FOR EACH ROW EXECUTE FUNCTION audit_log_append_only();
