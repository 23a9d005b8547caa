package main

import (
	"context"
	"log/slog"
	"os/user"

	"github.com/agenthost/agenthost/host/audit"
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
