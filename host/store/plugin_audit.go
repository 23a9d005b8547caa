package store

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/agenthost/agenthost/host/wasm/manifest"
)

// Plugin audit actions.
const (
	PluginInstalled = "install"
	PluginUpgraded  = "upgrade"
	PluginRemoved   = "remove"
	// PluginUpgradeRefused: an upgrade that widened the plugin without
	// the admin's confirmation or the operator's policy.
	PluginUpgradeRefused = "upgrade-refused"
)

// PluginAuditRecord is one change of the plugins of the running host. The
// log is host-wide (a plugin serves every tenant) and append-only: the
// store has no way to change or remove a record.
type PluginAuditRecord struct {
	ID string    `json:"id"`
	At time.Time `json:"at"`
	// ActorTenant and ActorUser are who asked.
	ActorTenant string `json:"actorTenant"`
	ActorUser   string `json:"actorUser"`
	Action      string `json:"action"`
	Plugin      string `json:"plugin"`
	// From is what ran before (empty for an install), To what runs after
	// (empty for a removal).
	FromVersion string `json:"fromVersion,omitempty"`
	ToVersion   string `json:"toVersion,omitempty"`
	FromSHA256  string `json:"fromSha256,omitempty"`
	ToSHA256    string `json:"toSha256,omitempty"`
	// Changes are the manifest's changes (an upgrade's), Widened whether
	// any widens, AllowedBy how a widening was let through ("confirmed",
	// "policy"; empty when none was).
	Changes   []manifest.Change `json:"changes"`
	Widened   bool              `json:"widened"`
	AllowedBy string            `json:"allowedBy,omitempty"`
}

const pluginAuditColumns = `id, at, actor_tenant, actor_user, action, plugin, from_version, to_version, from_sha256, to_sha256, changes, widened, allowed_by`

// RecordPluginChange appends r to the plugin audit log; its ID and time
// are the store's.
func (db *DB) RecordPluginChange(ctx context.Context, r PluginAuditRecord) (PluginAuditRecord, error) {
	if r.Action == "" || r.Plugin == "" {
		return PluginAuditRecord{}, fmt.Errorf("store: a plugin audit record needs an action and a plugin")
	}
	if r.Changes == nil {
		r.Changes = []manifest.Change{}
	}
	changes, err := json.Marshal(r.Changes)
	if err != nil {
		return PluginAuditRecord{}, fmt.Errorf("store: plugin audit changes: %w", err)
	}
	r.ID, r.At = newID(), now()
	_, err = db.conn().exec(ctx, `INSERT INTO plugin_audit (`+pluginAuditColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		r.ID, micros(r.At), r.ActorTenant, r.ActorUser, r.Action, r.Plugin, r.FromVersion, r.ToVersion, r.FromSHA256, r.ToSHA256,
		string(changes), r.Widened, r.AllowedBy)
	if err != nil {
		return PluginAuditRecord{}, fmt.Errorf("store: record plugin change: %w", err)
	}
	return r, nil
}

// PluginAudit lists the audit log of plugin (every plugin when ""),
// oldest first. It is the operator's (the CLI, the admin API), not a
// tenant's.
func (db *DB) PluginAudit(ctx context.Context, plugin string) ([]PluginAuditRecord, error) {
	q := `SELECT ` + pluginAuditColumns + ` FROM plugin_audit`
	var args []any
	if plugin != "" {
		q += ` WHERE plugin = ?`
		args = append(args, plugin)
	}
	// Ids are UUIDv7: they order records of one microsecond too.
	return queryAll(ctx, db.conn(), "plugin audit", scanPluginAudit, q+` ORDER BY at, id`, args...)
}

func scanPluginAudit(row interface{ Scan(...any) error }) (PluginAuditRecord, error) {
	var r PluginAuditRecord
	var at int64
	var changes string
	if err := row.Scan(&r.ID, &at, &r.ActorTenant, &r.ActorUser, &r.Action, &r.Plugin, &r.FromVersion, &r.ToVersion,
		&r.FromSHA256, &r.ToSHA256, &changes, &r.Widened, &r.AllowedBy); err != nil {
		return r, err
	}
	r.At = fromMicros(at)
	if err := json.Unmarshal([]byte(changes), &r.Changes); err != nil {
		return r, fmt.Errorf("plugin audit %s: changes: %w", r.ID, err)
	}
	return r, nil
}
