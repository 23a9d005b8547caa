package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os/user"

	"github.com/agenthost/agenthost/host/audit"
	"github.com/agenthost/agenthost/host/scim"
	"github.com/agenthost/agenthost/host/store"
)

// cliAudit records the operator's command-line changes in the tenants'
// audit logs: the actor is the system, acting through the CLI, named by
// the operating-system user who ran it.
type cliAudit struct {
	db  *store.DB
	log *audit.Log
	ctx context.Context
}

func newCLIAudit(ctx context.Context, db *store.DB, logger *slog.Logger) *cliAudit {
	who := ""
	if u, err := user.Current(); err == nil {
		who = u.Username
	}
	ctx = audit.WithRequest(audit.WithActor(ctx, audit.Actor{Kind: audit.ActorSystem, ID: who, Via: audit.ViaCLI}),
		audit.Request{UserAgent: "agenthost-cli"})
	return &cliAudit{db: db, log: audit.NewLog(db, logger), ctx: ctx}
}

// record records e in the tenant of the user, workspace or token named
// (kind, id) unless e names its tenant. A change whose tenant cannot be
// found (it was refused) records nothing.
func (a *cliAudit) record(kind, id string, e audit.Entry) {
	if e.TenantID == "" {
		t, err := a.db.TenantOf(a.ctx, kind, id)
		if err != nil {
			return
		}
		e.TenantID = t
	}
	_ = a.log.Record(a.ctx, e)
}

// adminSCIMToken makes (or, with revoke, ends) a SCIM token of the tenant.
func adminSCIMToken(db *store.DB, rec *cliAudit, tenant, name, revoke string, stdout io.Writer) error {
	if revoke != "" {
		if err := db.RevokeSCIMToken(rec.ctx, tenant, revoke); err != nil {
			return err
		}
		rec.record("", "", audit.Entry{TenantID: tenant, Action: audit.SCIMTokenRevoked, TargetType: "scim_token", TargetID: revoke})
		fmt.Fprintf(stdout, "SCIM token %s revoked\n", revoke)
		return nil
	}
	if name == "" {
		name = "scim"
	}
	id, secret, err := db.CreateSCIMToken(rec.ctx, tenant, name)
	if err != nil {
		return err
	}
	rec.record("", "", audit.Entry{TenantID: tenant, Action: audit.SCIMTokenCreated, TargetType: "scim_token", TargetID: id,
		Detail: audit.Detail(map[string]string{"name": name})})
	fmt.Fprintf(stdout, "SCIM token %s (shown once, give it to the identity provider): %s\n", id, secret)
	fmt.Fprintln(stdout, "tenant URL: https://YOUR-HOST/scim/v2 (docs/scim.md)")
	return nil
}

// adminSCIMMap sets (or lists) what SCIM groups give.
func adminSCIMMap(ctx context.Context, db *store.DB, tenant, group, workspace, role string, list bool, stdout io.Writer) error {
	if list {
		ms, err := db.SCIMMappings(ctx, tenant)
		if err != nil {
			return err
		}
		for _, m := range ms {
			ws := m.WorkspaceID
			if ws == "" {
				ws = "(tenant)"
			}
			fmt.Fprintf(stdout, "%s\t%s\t%s\n", m.GroupName, ws, m.Role)
		}
		return nil
	}
	if group == "" {
		return fmt.Errorf("admin scim-map: -group required")
	}
	return db.SetSCIMMapping(ctx, tenant, scim.Mapping{GroupName: group, WorkspaceID: workspace, Role: role})
}
