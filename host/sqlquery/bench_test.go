package sqlquery_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/agenthost/agenthost/host/figure"
	"github.com/agenthost/agenthost/host/sqlquery"
	"github.com/agenthost/agenthost/host/toolcall"
	"github.com/agenthost/agenthost/host/wasm"
	"github.com/agenthost/agenthost/host/wasm/wasmtest"
)

// BenchmarkSQLQueryCall measures one sqlQuery tool call through the
// built-in plugin on the real host: arguments validated, the guest, the
// capability, a read-only transaction (PostgreSQL: begin, limits, query,
// rollback, session reset) or a read-only SQLite connection, 20 rows of 6
// columns back as JSON.
func BenchmarkSQLQueryCall(b *testing.B) {
	f := newFixture(b, 10*time.Second)
	capability := &sqlquery.Capability{Service: f.svc}
	h := wasmtest.HostWith(b, []wasm.Capability{capability.Wasm()}, "sqlquery")
	ctx := toolcall.With(context.Background(), alice)
	for _, db := range []struct{ name, figure, param string }{{"pg", "postgres", "$1"}, {"lite", "sqlite", "?"}} {
		b.Run(db.figure, func(b *testing.B) {
			args := []byte(fmt.Sprintf(`{"database":%q,"sql":"SELECT * FROM items WHERE id > %s ORDER BY id","params":[10]}`, db.name, db.param))
			for range 20 { // warm the pool and the instances
				if res := h.Call(ctx, "sqlQuery", args, nil); !res.OK {
					b.Fatalf("%s: %+v", db.name, res.Error)
				}
			}
			for b.Loop() {
				d := make([]time.Duration, 0, 200)
				for range 200 {
					t0 := time.Now()
					if res := h.Call(ctx, "sqlQuery", args, nil); !res.OK {
						b.Fatal(res.Error)
					}
					d = append(d, time.Since(t0))
				}
				figure.Report("sqlquery.call."+db.figure+".p50.ms", figure.Millis(figure.Percentile(d, 50)), "ms")
			}
		})
	}
}
