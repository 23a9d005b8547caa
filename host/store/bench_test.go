package store_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"fmt"
	"testing"
	"time"

	"github.com/agenthost/agenthost/host/figure"
	"github.com/agenthost/agenthost/host/files"
	"github.com/agenthost/agenthost/host/files/filemeta"
	"github.com/agenthost/agenthost/host/store"
	"github.com/agenthost/agenthost/host/store/storetest"
	"github.com/agenthost/agenthost/host/tenancy"
)

// benchEnv opens a migrated store of each dialect with one user in one
// workspace.
type benchEnv struct {
	db  *store.DB
	svc *files.Service
	p   tenancy.Principal
	ws  string
}

func newBenchEnv(b *testing.B, open storetest.Opener) benchEnv {
	ctx := context.Background()
	env := open(b)
	if err := env.DB.Migrate(ctx); err != nil {
		b.Fatal(err)
	}
	tn, _ := env.DB.CreateTenant(ctx, "bench")
	ws, _ := env.DB.CreateWorkspace(ctx, tenancy.Workspace{TenantID: tn.ID, Name: "ws"})
	u, _ := env.DB.CreateUser(ctx, tenancy.User{TenantID: tn.ID, Email: "u@bench"})
	if err := env.DB.SetMembership(ctx, tenancy.Membership{WorkspaceID: ws.ID, UserID: u.ID, Role: tenancy.RoleMember}); err != nil {
		b.Fatal(err)
	}
	return benchEnv{db: env.DB, svc: files.NewService(env.DB, env.Blobs, 1<<30), p: tenancy.Principal{TenantID: tn.ID, UserID: u.ID}, ws: ws.ID}
}

// dialects are the stores the benchmarks compare, in a fixed order.
var dialects = []struct {
	name string
	open storetest.Opener
}{{"sqlite", openSQLite}, {"postgres", openPostgres}}

// BenchmarkUpload reports store.<store>.upload.{1MiB,100MiB} MB/s: random
// bytes through the file service (hash, blob, metadata), medians.
func BenchmarkUpload(b *testing.B) {
	for _, d := range dialects {
		name, e := d.name, newBenchEnv(b, d.open)
		for _, c := range []struct {
			label string
			size  int
			runs  int
		}{{"1MiB", 1 << 20, 21}, {"100MiB", 100 << 20, 3}} {
			data := make([]byte, c.size)
			var rates []float64
			for i := range c.runs {
				rand.Read(data)
				start := time.Now()
				_, _, err := e.svc.Upload(context.Background(), e.p, files.Upload{WorkspaceID: e.ws, Name: fmt.Sprintf("%s-%d.bin", c.label, i), Content: bytes.NewReader(data)})
				if err != nil {
					b.Fatal(err)
				}
				rates = append(rates, float64(c.size)/1e6/time.Since(start).Seconds())
			}
			figure.Report("store."+name+".upload."+c.label, figure.Median(rates), "MB/s")
		}
	}
}

// BenchmarkList reports store.<store>.list.100k.p50 ms: one page (50) of a
// listing filtered by tag and MIME family among 100,000 files, first pages
// and pages deep in the listing alike (keyset paging).
func BenchmarkList(b *testing.B) {
	ctx := context.Background()
	for _, d := range dialects {
		name, e := d.name, newBenchEnv(b, d.open)
		if err := store.SeedFilesForBenchmark(ctx, e.db, e.p, e.ws, 100_000); err != nil {
			b.Fatal(err)
		}
		flt := filemeta.Filter{WorkspaceID: e.ws, Tags: []string{"q4"}, MIMEType: "application/*", Limit: 50}
		var cursors []string
		page, err := e.svc.List(ctx, e.p, flt)
		for i := 0; err == nil && page.Next != "" && i < 40; i++ {
			cursors = append(cursors, page.Next)
			flt.Cursor = page.Next
			page, err = e.svc.List(ctx, e.p, flt)
		}
		if err != nil || len(cursors) < 40 {
			b.Fatalf("paging: %d pages, %v", len(cursors), err)
		}
		var ds []time.Duration
		for i := range 200 {
			flt.Cursor = ""
			if i%2 == 1 {
				flt.Cursor = cursors[i%len(cursors)]
			}
			start := time.Now()
			page, err := e.svc.List(ctx, e.p, flt)
			ds = append(ds, time.Since(start))
			if err != nil || len(page.Items) != 50 {
				b.Fatalf("list: %d items, %v", len(page.Items), err)
			}
		}
		figure.Report("store."+name+".list.100k.p50", figure.Millis(figure.Percentile(ds, 50)), "ms")
	}
}
