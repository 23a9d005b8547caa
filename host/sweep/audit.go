package sweep

import (
	"context"
	"log/slog"
	"time"

	"github.com/agenthost/agenthost/host/audit"
	"github.com/agenthost/agenthost/host/jobs"
)

// AuditArgs is the periodic job of the audit log's retention (host/audit):
// entries older than the configured retention are deleted, once for all
// hosts sharing the database.
type AuditArgs struct{}

// Kind implements jobs.Args.
func (AuditArgs) Kind() string { return "audit.retention" }

// AuditEvery is how often the audit retention runs.
const AuditEvery = 6 * time.Hour

// RegisterAudit adds the audit retention job to a registry: it deletes
// entries older than retention (<= 0 keeps every entry).
func RegisterAudit(reg *jobs.Registry, p audit.Purger, retention time.Duration, logger *slog.Logger) {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	jobs.Register(reg, func(ctx context.Context, _ *jobs.Job[AuditArgs]) error {
		n, err := audit.Sweep(ctx, p, retention, time.Now())
		if err != nil {
			return err
		}
		if n > 0 {
			logger.Info("audit log: entries past their retention deleted", "entries", n, "retention", retention)
		}
		return nil
	})
}

// AuditPeriodic is the audit retention's periodic job for
// jobs.Config.Periodic.
func AuditPeriodic() []jobs.Periodic {
	return []jobs.Periodic{{Every: AuditEvery, Args: AuditArgs{}}}
}
