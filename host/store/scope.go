package store

import (
	"strings"

	"github.com/agenthost/agenthost/host/tenancy"
)

// scope builds the WHERE fragment that limits a query of a workspace-owned
// table (columns tenant_id, workspace_id, created_by) to the rows the
// principal may read or write. Every tenant-data query goes through it: it is
// the one place the MY / GROUP / ALL access levels become SQL, and membership
// is read at query time, so revoking a role takes effect at once.
//
// sharedCol names a boolean column whose true rows every user of the tenant
// may read (the knowledge store's shared layer); "" when the table has none.
func scope(p tenancy.Principal, write bool, alias, sharedCol string) (string, []any) {
	col := func(c string) string { return alias + "." + c }
	if p.Admin {
		return col("tenant_id") + " = ?", []any{p.TenantID}
	}
	var ors []string
	var args []any
	if sharedCol != "" && !write {
		ors = append(ors, col(sharedCol))
	}
	if roles := tenancy.RolesWith(write, tenancy.Group); len(roles) > 0 {
		ors = append(ors, col("workspace_id")+" IN (SELECT workspace_id FROM memberships WHERE user_id = ? AND role IN ("+placeholders(len(roles))+"))")
		args = append(args, p.UserID)
		for _, r := range roles {
			args = append(args, string(r))
		}
	}
	if roles := tenancy.RolesWith(write, tenancy.My); len(roles) > 0 {
		ors = append(ors, "("+col("created_by")+" = ? AND "+col("workspace_id")+" IN (SELECT workspace_id FROM memberships WHERE user_id = ? AND role IN ("+placeholders(len(roles))+")))")
		args = append(args, p.UserID, p.UserID)
		for _, r := range roles {
			args = append(args, string(r))
		}
	}
	if len(ors) == 0 {
		return "1 = 0", nil
	}
	return col("tenant_id") + " = ? AND (" + strings.Join(ors, " OR ") + ")", append([]any{p.TenantID}, args...)
}
