package audit_test

import (
	"context"
	"testing"
	"time"

	"github.com/agenthost/agenthost/host/audit"
	"github.com/agenthost/agenthost/host/figure"
	"github.com/agenthost/agenthost/host/store"
)

// BenchmarkAppend measures one Record on the embedded store (SQLite, WAL,
// synchronous=NORMAL, as the server runs it): the median of 2,000 appends
// of a typical entry (a plugin upgrade's detail).
func BenchmarkAppend(b *testing.B) {
	ctx := context.Background()
	db, err := store.Open(ctx, store.Config{Dir: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	if err := db.Migrate(ctx); err != nil {
		b.Fatal(err)
	}
	tn, err := db.CreateTenant(ctx, "bench")
	if err != nil {
		b.Fatal(err)
	}
	log := audit.NewLog(db, nil)
	rctx := audit.WithRequest(audit.WithActor(ctx, audit.Actor{Kind: audit.ActorUser, ID: "u1", Via: audit.ViaSession}),
		audit.Request{IP: "192.0.2.1", UserAgent: "Mozilla/5.0"})
	detail := audit.Detail(map[string]any{"from": "1.0.0", "to": "2.0.0", "changes": []map[string]any{
		{"what": "timeoutMs", "from": "1000", "to": "600000", "widens": true}, {"what": "tool old", "from": "present"}}})
	for b.Loop() {
		ds := make([]time.Duration, 0, 2000)
		for range 2000 {
			start := time.Now()
			if err := log.Record(rctx, audit.Entry{TenantID: tn.ID, Action: audit.PluginUpgraded, TargetType: "plugin",
				TargetID: "notes", Detail: detail}); err != nil {
				b.Fatal(err)
			}
			ds = append(ds, time.Since(start))
		}
		figure.Report("audit.append.p50.us", float64(figure.Percentile(ds, 50).Microseconds()), "us")
	}
}
